"""Options several commands share, and opening a store with errors a user can act on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from store.db.audit_store import AuditStore
from store.db.database import DEFAULT_TIME_LIMIT, Database
from store.db.errors import StoreError

F = TypeVar("F", bound=Callable[..., Any])

db_option: Callable[[F], F] = click.option(
    "--db",
    metavar="URL",
    default=None,
    help="Store: a file path or SQLAlchemy URL (default: $CORE_AUDIT_DB, else ./core-audit.db).",
)


def open_store(db: str | None, *, read_only: bool = False) -> AuditStore:
    try:
        return AuditStore.open(db, read_only=read_only)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc


def open_database(db: str | None, *, time_limit: float = DEFAULT_TIME_LIMIT) -> Database:
    """The store read-only (SQLite mode=ro), for serving and querying."""
    try:
        return Database.open(db, time_limit=time_limit)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
