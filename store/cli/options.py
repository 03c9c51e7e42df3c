"""Options several commands share, and opening a store with errors a user can act on."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from store.errors import StoreError

if TYPE_CHECKING:  # the store's modules load SQLAlchemy: imported when a command opens a store
    from sqlalchemy import Engine

    from store.db.audit_store import AuditStore

F = TypeVar("F", bound=Callable[..., Any])

db_option: Callable[[F], F] = click.option(
    "--db",
    metavar="URL",
    default=None,
    help="Store: a file path or SQLAlchemy URL (default: $CORE_AUDIT_DB, else ./core-audit.db).",
)


def open_store(db: str | None, *, read_only: bool = False) -> AuditStore:
    from store.db.audit_store import AuditStore

    try:
        store = AuditStore.open(db, read_only=read_only)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
    say_if_immutable(store.engine)
    return store


def open_database(db: str | None, *, time_limit: float | None = None,
                  read_threads: int | None = None) -> AuditStore:
    """The store read-only (SQLite mode=ro, or immutable on read-only media), for serving and
    querying (time_limit, read_threads None: the store's defaults)."""
    from store.db.audit_store import AuditStore
    from store.db.read_threads import DEFAULT_READ_THREADS
    from store.db.time_limit import DEFAULT_TIME_LIMIT

    try:
        database = AuditStore.open(db, read_only=True, time_limit=(
            DEFAULT_TIME_LIMIT if time_limit is None else time_limit), read_threads=(
            DEFAULT_READ_THREADS if read_threads is None else read_threads))
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
    say_if_immutable(database.engine)
    return database


def say_if_immutable(engine: Engine) -> None:
    """On stderr: SQLite will not lock the file nor see anyone else write it while open."""
    from store.db.schema.engine import IMMUTABLE_ENV_VAR, opened_immutable

    path = opened_immutable(engine)
    if path is not None:
        why = f"{IMMUTABLE_ENV_VAR}=1" if os.environ.get(IMMUTABLE_ENV_VAR) == "1" else \
            "not writable here"
        click.echo(f"opened read-only (immutable): {path} ({why})", err=True)
