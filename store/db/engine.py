"""The one engine factory: URLs, SQLite pragmas, read-only connections, transactions.

Every connection to a store is made here, so pragmas, locking and read-only mode are
decided in one place (the datasette pattern).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

DEFAULT_PATH = "core-audit.db"
ENV_VAR = "CORE_AUDIT_DB"
BUSY_TIMEOUT_MS = 60_000
# A writer queues behind another writer's whole file (one transaction): wait much longer.
WRITE_BUSY_TIMEOUT_MS = 30 * 60_000
WRITE_CACHE_KIB = 64 * 1024

_SQLITE_PRAGMAS = (
    "PRAGMA synchronous=FULL",
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
    "PRAGMA foreign_keys=ON",
    "PRAGMA recursive_triggers=ON",
)


def resolve_url(db: str | None = None) -> str:
    """`--db` value, else $CORE_AUDIT_DB, else ./core-audit.db; a bare path means SQLite."""
    value = db or os.environ.get(ENV_VAR) or DEFAULT_PATH
    if "://" in value:
        return value
    return f"sqlite:///{Path(value).expanduser().resolve()}"


def sqlite_path(url: str) -> Path | None:
    """The file behind a SQLite URL, or None for other backends and in-memory databases."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def create_store_engine(url: str, *, read_only: bool = False, write: bool = False,
                        pooled: bool = True) -> Engine:
    """An engine for `url`. `write` takes the write lock at BEGIN; `read_only` cannot write;
    not `pooled`: every connect opens the store anew (a health check sees it as it is now)."""
    parsed = make_url(url)
    pool: dict[str, Any] = {} if pooled else {"poolclass": NullPool}
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url, read_only=read_only, write=write, pool=pool)
    return _server_engine(url, read_only=read_only, pool=pool)


def _sqlite_engine(url: str, *, read_only: bool, write: bool, pool: dict[str, Any]) -> Engine:
    path = sqlite_path(url)
    if read_only and path is not None:
        # mode=ro: the driver itself refuses writes, whatever SQL a resolver sends.
        url = f"sqlite:///file:{path}?mode=ro&uri=true"
    engine = create_engine(url, **pool)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # SQLAlchemy's recipe: stop the driver's own transaction handling, emit BEGIN below.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        if not read_only:
            cursor.execute("PRAGMA journal_mode=WAL")
        for pragma in _SQLITE_PRAGMAS:
            cursor.execute(pragma)
        if write:
            # Random sha256 keys touch index pages all over the file: keep them in memory.
            cursor.execute(f"PRAGMA cache_size=-{WRITE_CACHE_KIB}")
            # The insert guards give every row a statement journal; on disk it dominated
            # ingest (perf-notes.md: 17% of samples in pwrite to a temp file).
            cursor.execute("PRAGMA temp_store=MEMORY")
            cursor.execute(f"PRAGMA busy_timeout={WRITE_BUSY_TIMEOUT_MS}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # IMMEDIATE takes the write lock up front, so two writers queue instead of deadlocking.
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _server_engine(url: str, *, read_only: bool, pool: dict[str, Any]) -> Engine:
    options: dict[str, Any] = {}
    if read_only:
        options["postgresql_readonly"] = True
    return create_engine(url, execution_options=options, pool_pre_ping=True, **pool)
