"""`core-audit db`: schema revisions, explicit (an audit store never migrates silently)."""

from __future__ import annotations

import click
import orjson
from alembic.util import CommandError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from store.cli.options import db_option, say_if_immutable
from store.db.schema.engine import create_store_engine, resolve_url
from store.db.schema.schema_version import (
    current_revision,
    downgrade,
    head_revision,
    history,
    refuse_missing_schema,
    upgrade,
)
from store.errors import StoreError


@click.group()
def db() -> None:
    """Upgrade, downgrade and inspect the store's schema revision."""


@db.command("upgrade")
@click.argument("revision", default="head")
@db_option
def upgrade_command(revision: str, db: str | None) -> None:
    """Upgrade the store to REVISION (default: head).

    A store behind head is refused by every other command until upgraded: an audit store
    never migrates silently. A failed upgrade leaves the store as it was.
    """
    _run(lambda url: upgrade(url, revision), db)
    click.echo(f"upgraded to {revision}")


@db.command("downgrade")
@click.argument("revision")
@db_option
def downgrade_command(revision: str, db: str | None) -> None:
    """Downgrade the store to REVISION (`base` removes everything)."""
    _run(lambda url: downgrade(url, revision), db)
    click.echo(f"downgraded to {revision}")


@db.command("current")
@db_option
@click.option("--json", "as_json", is_flag=True,
              help='Print {"revision", "head", "at_head"}.')
def current_command(db: str | None, as_json: bool) -> None:
    """Print the store's revision and the head revision."""
    revision = _stored_revision(resolve_url(db))
    head = head_revision()
    if as_json:
        click.echo(orjson.dumps({"revision": revision, "head": head,
                                 "at_head": revision == head}).decode())
        return
    state = "at head" if revision == head else f"head is {head}"
    click.echo(f"{revision or 'none'} ({state})")


@db.command("history")
@db_option
def history_command(db: str | None) -> None:
    """List the schema revisions, newest first; with --db, mark the store's own."""
    current = None
    if db is not None:
        current = _stored_revision(resolve_url(db))
    for line in history():
        mark = " (this store)" if current is not None and line.startswith(f"{current}:") else ""
        click.echo(line + mark)


def _stored_revision(url: str) -> str | None:
    try:
        engine = create_store_engine(url, read_only=True)
    except StoreError as exc:  # a -wal a read-only open cannot read
        raise click.ClickException(str(exc)) from exc
    say_if_immutable(engine)
    try:
        return current_revision(engine)
    except SQLAlchemyError as exc:
        raise click.ClickException(f"cannot read {url}: {exc}") from exc
    finally:
        engine.dispose()


def _run(action, db: str | None) -> None:  # type: ignore[no-untyped-def]
    # One transaction per run (migrations/env.py): whatever fails, the store is as it was.
    # RuntimeError is how a revision refuses (0002's downgrade with ledgered surface rows);
    # CommandError is alembic's for an unknown revision. Both are messages, not tracebacks.
    url = resolve_url(db)
    shown = make_url(url).render_as_string(hide_password=True) if "://" in url else url
    try:
        refuse_missing_schema(url)
        action(url)
    except (SQLAlchemyError, CommandError, RuntimeError) as exc:
        # The driver's own words, not the SQL it was sent (a table's whole DDL, say).
        reason = getattr(exc, "orig", None) or exc
        raise click.ClickException(
            f"{shown}: migration failed, nothing changed: {reason}") from exc
