"""`core-audit copy`: move a store between SQLite and PostgreSQL, verified at the end."""

from __future__ import annotations

import click

from store.db.copy import copy_store
from store.errors import StoreError


@click.command()
@click.option("--from", "source", required=True, metavar="URL", help="Store to copy from.")
@click.option("--to", "target", required=True, metavar="URL", help="Store to copy into.")
def copy(source: str, target: str) -> None:
    """Copy every row, id, leaf and tree head from one store to another, from one snapshot of
    the source, verified before it is committed; idempotent when re-run.

    Between SQLite and PostgreSQL either way. Any failure leaves the target untouched;
    re-running copies only what is missing; a target with another history is refused.
    """
    try:
        report = copy_store(source, target)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
    tip = report.target.tip
    assert tip is not None
    click.echo(
        f"copied {report.copied_rows} rows ({report.already_there} already there); target "
        f"intact: {tip.size} leaves, root {tip.root_hex}"
    )
