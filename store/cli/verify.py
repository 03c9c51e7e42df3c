"""`core-audit verify` and `core-audit checkpoint`: is the store what was appended?"""

from __future__ import annotations

import sys

import click

from store.cli.options import db_option, open_store
from store.db.audit_store import AuditStore
from store.db.errors import StoreError
from store.db.ledger import Checkpoint


@click.command()
@db_option
@click.option("--checkpoint", "checkpoint_text", metavar="SEQ:HASH",
              help="Also check that the store still extends this checkpoint.")
def verify(db: str | None, checkpoint_text: str | None) -> None:
    """Recompute row hashes, the chain and content ids; check keys, trigger definitions and
    the file. Exit 1 if not intact."""
    try:
        checkpoint = Checkpoint.parse(checkpoint_text) if checkpoint_text else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--checkpoint") from exc
    try:
        with AuditStore.open(db, read_only=True) as store:
            report = store.verify(checkpoint)
    except StoreError as exc:  # unopenable or unreadable: not intact either, and no traceback
        click.echo(f"NOT intact: {exc}", err=True)
        sys.exit(1)
    if report.intact:
        click.echo(f"intact: {report.rows} ledger rows, head {report.tip}")
        return
    click.echo(f"NOT intact: first problem at {report.first_problem}", err=True)
    for problem in report.problems[1:]:
        click.echo(f"  also {problem}", err=True)
    sys.exit(1)


@click.command()
@db_option
def checkpoint(db: str | None) -> None:
    """Print `SEQ CHAIN_HASH` of the ledger's head, to keep elsewhere."""
    with open_store(db, read_only=True) as store:
        tip = store.checkpoint()
    click.echo(f"{tip.seq} {tip.chain_hash}")
