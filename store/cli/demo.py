"""`core-audit demo`: a store with the bundled examples, served with GraphiQL."""

from __future__ import annotations

import click

from store.bundled import bundled_dir
from store.cli.options import open_store
from store.cli.serve import AppSettings, run_server
from store.errors import BatchRejected

DEMO_QUERY = """query Overview {
  residualFacets { total occurrences byKind { value count occurrences } }
  residuals(first: 5, filter: {kind: [MISSING_ROLE]}) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { residualCode candidateOrgan occurrenceCount
            occurrences(first: 3) { nodes { problemText sourceRef } } }
  }
  turnFacets { total byGroundingSource { value count } byVerification { value count } }
  turns(first: 3, filter: {groundingSource: [TEACHING]}) {
    nodes { turnId prompt surface { verification chainId surfacePrefix } }
  }
  ledger { treeSize rootHash }
}"""


@click.command()
@click.option("--db", "path", default=None, metavar="PATH",
              help="Store file, created if absent (default: $CORE_AUDIT_DB, else "
                   "./core-audit.db).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on.")
@click.option("--no-console", is_flag=True,
              help="Do not serve the auditor's console (the HTML pages at /).")
def demo(path: str | None, host: str, port: int, no_console: bool) -> None:
    """Ingest the bundled examples into PATH (again is a counted no-op) and serve them."""
    examples = sorted(bundled_dir("examples").glob("*.jsonl"))
    with open_store(path) as store:
        for example in examples:
            try:
                summary = store.ingest(example.read_bytes().splitlines(keepends=True),
                                       source=example.name)
            except BatchRejected as exc:
                raise click.ClickException(str(exc)) from exc
            # "present": rows already stored, by an earlier batch or earlier in the same file
            click.echo(f"{example.name}: {summary.new_rows} new, {summary.present_rows} already"
                       " present (stored before: kept once, counted)", err=True)
    banner = f"Paste into GraphiQL:\n\n{DEMO_QUERY}\n"
    run_server(AppSettings(db=path, host=host, console=not no_console), port=port,
               banner=banner)
