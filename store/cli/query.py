"""`core-audit query`: run a GraphQL operation in-process, through the server's schema."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click
import orjson

from store.cli.options import db_option, open_database


@click.command()
@click.argument("document", required=False)
@db_option
@click.option("--file", "file", type=click.Path(exists=True, dir_okay=False, allow_dash=True,
                                                path_type=Path),
              help="Read the operation from a .graphql file (e.g. graphql/workbench/X.graphql);"
                   " - reads standard input.")
@click.option("--variables", default=None, metavar="JSON", help="Variables as a JSON object.")
@click.option("--operation", default=None, metavar="NAME", help="Operation to run by name.")
def query(document: str | None, db: str | None, file: Path | None, variables: str | None,
          operation: str | None) -> None:
    """Run the GraphQL DOCUMENT (or --file) against the store; print the JSON result.

    DOCUMENT - (or --file -) reads the document from standard input, e.g. a heredoc.

    Exit status 1 if the result has errors. Runs in-process through the server's schema
    and limits. A document of several operations needs --operation (as the server needs
    operationName): without it the answer is an error, never the first operation's result.
    """
    if (document is None) == (file is None):
        raise click.UsageError("give exactly one of DOCUMENT or --file")
    if document == "-" or str(file) == "-":
        source = sys.stdin.read()
    else:
        source = file.read_text(encoding="utf-8") if file is not None else str(document)
    try:
        values = orjson.loads(variables) if variables else None
    except orjson.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--variables") from exc
    if values is not None and not isinstance(values, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--variables")
    from store.api.execution import execute_operation  # strawberry loads only when asked
    from store.api.schema import MASKED_MESSAGE

    database = open_database(db)
    try:
        result = asyncio.run(execute_operation(database, source, values, operation))
    finally:
        database.close()
    click.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    errors = result.get("errors")
    if errors:
        if any(isinstance(e, dict) and e.get("message") == MASKED_MESSAGE for e in errors):
            # The server's mask hides why: a store that cannot be read as expected.
            click.echo("Error: the store could not answer it (run `core-audit verify` on it)",
                       err=True)
        sys.exit(1)
