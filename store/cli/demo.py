"""`core-audit demo`: a store with the bundled examples, served with GraphiQL."""

from __future__ import annotations

import hashlib
from pathlib import Path

import click

from store.bundled import bundled_dir
from store.cli.ingest import PRESENT_SAID
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
    """Ingest the bundled examples into PATH (again is a counted no-op) and serve them.

    PATH (or $CORE_AUDIT_DB) must be a new store or the demo's own: a store holding any batch
    but the bundled examples' (a real store, say) is refused, naming that batch, and left
    as it was.
    """
    examples = sorted(bundled_dir("examples").glob("*.jsonl"))
    refuse_a_store_not_the_demos(path, examples)
    with open_store(path) as store:
        for example in examples:
            try:
                summary = store.ingest(example.read_bytes().splitlines(keepends=True),
                                       source=example.name)
            except BatchRejected as exc:
                raise click.ClickException(str(exc)) from exc
            click.echo(f"{example.name}: {summary.new_rows} new, {summary.present_rows} already"
                       f" present ({PRESENT_SAID})", err=True)
    banner = f"Paste into GraphiQL:\n\n{DEMO_QUERY}\n"
    run_server(AppSettings(db=path, host=host, console=not no_console), port=port,
               banner=banner)


# Batches that record no input (the log's origin chosen as a batch of its own) may sit beside
# the examples in the demo's store: `checkpoint --origin` on it is part of trying it out.
NOT_INPUTS = ("log_origin",)


def refuse_a_store_not_the_demos(path: str | None, examples: list[Path]) -> None:
    """ClickException (nothing written) when the store at `path` exists and holds a batch
    whose input is not one of `examples` (its bytes, whatever its name)."""
    from store.db.queries.batches import first_batch_not_of
    from store.db.schema.engine import resolve_url, sqlite_path

    url = resolve_url(path)
    file = sqlite_path(url)
    if file is not None and not file.exists():
        return  # a new store: the demo creates it
    inputs = {hashlib.sha256(example.read_bytes()).hexdigest() for example in examples}
    with open_store(path, read_only=True) as store:
        foreign = store.execute(first_batch_not_of, inputs, NOT_INPUTS)
    if foreign is not None:
        where = file or store.url
        raise click.ClickException(
            f"{where} is not the demo's store: it holds batch {foreign.batch_id} "
            f"({foreign.record_type} from {foreign.source!r}, {foreign.lines} lines, "
            f"ingested {foreign.ingested_at}), not a bundled example; the demo writes nothing "
            "to it. Run the demo on a store of its own (--db demo.db), or serve this one "
            "with `core-audit serve`")
