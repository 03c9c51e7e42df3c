"""`core-audit trusted-documents DIR`: the manifest of the operations a client may send."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
import orjson

if TYPE_CHECKING:
    from store.api.trusted_documents import TrustedDocuments


class BadDocuments(click.ClickException):
    exit_code = 2  # like a bad input line: the files need fixing, not the command


def load_trusted_or_exit(directory: Path) -> TrustedDocuments:
    """The documents in `directory`, each checked against the served schema; else exit 2
    with `PATH: reason`."""
    from store.api.schema import build_schema  # strawberry loads only when asked
    from store.api.trusted_documents import TrustedDocumentsError, load_trusted_documents

    try:
        return load_trusted_documents(directory, build_schema()._schema)
    except TrustedDocumentsError as exc:
        raise BadDocuments(str(exc)) from None


@click.command("trusted-documents")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
def trusted_documents(directory: Path) -> None:
    """Print the manifest of the trusted documents in DIR, as JSON.

    Each DIR/*.graphql file holds one named operation (and the fragments it uses); its id is
    sha256: and the hex SHA-256 of the file's exact bytes. The manifest maps each id to its
    operation name, sorted by id: what a client ships to send {"documentId": ID} to a server
    started with `serve --trusted-documents DIR`. Exit 2 naming the file that is not usable.
    """
    manifest = load_trusted_or_exit(directory).manifest()
    click.echo(orjson.dumps(manifest, option=orjson.OPT_INDENT_2).decode())
