"""The `core-audit` command: thin; every command calls the library."""

from __future__ import annotations

from typing import Any

import click

from store import __version__
from store.cli.checkpoints import checkpoint, checkpoints
from store.cli.copy import copy
from store.cli.db import db
from store.cli.demo import demo
from store.cli.export import export
from store.cli.ingest import ingest
from store.cli.keygen import keygen
from store.cli.log import log
from store.cli.project import project
from store.cli.prove import prove
from store.cli.query import query
from store.cli.reference import cli_reference
from store.cli.schema import schema
from store.cli.serve import serve
from store.cli.teaching import corpus, surface
from store.cli.trusted_documents import trusted_documents
from store.cli.verify import verify
from store.cli.verify_proof import verify_proof
from store.errors import CoreAuditError


class _CommandGroup(click.Group):
    """Any of the package's errors a command lets out is shown as its one-line diagnostics
    (exit status 1), never as a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CoreAuditError as exc:
            raise click.ClickException(exc.diagnostics()) from exc


@click.group(cls=_CommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="core-audit")
def main() -> None:
    """Append-only audit store for CORE's residuals and teaching-grounded surfaces."""


for command in (project, ingest, verify, checkpoint, checkpoints, keygen, prove, verify_proof,
                log, export, db, copy, corpus, surface, serve, trusted_documents, query, schema,
                demo, cli_reference):
    main.add_command(command)
