"""Database: the read-only engine the API serves from, and how query functions run on it.

The datasette pattern: one object owns the engine; every query function runs in a worker
thread (so resolvers never block the event loop) under a deadline that aborts runaway SQL.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, TypeVar

import anyio.to_thread
from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import OperationalError

from store.db.audit_store import AuditStore
from store.db.engine import create_store_engine
from store.db.queries import LedgerStatus, QueryTimeout, ledger_status

DEFAULT_TIME_LIMIT = 5.0  # seconds per request: far above any indexed page or facet query
_PROGRESS_OPCODES = 1_000  # how often SQLite asks "keep going?" (VM instructions)

P = ParamSpec("P")
R = TypeVar("R")


class Database:
    def __init__(self, engine: Engine, *, time_limit: float = DEFAULT_TIME_LIMIT,
                 probe_engine: Engine | None = None) -> None:
        if not 0 < time_limit < float("inf"):
            raise ValueError(f"time limit: must be a positive number of seconds, got {time_limit}")
        self.engine = engine
        self.time_limit = time_limit
        self.probe_engine = probe_engine or engine

    @classmethod
    def open(cls, db: str | None = None, *, time_limit: float = DEFAULT_TIME_LIMIT) -> Database:
        """Open an existing store read-only (SQLite mode=ro); StoreError if there is none."""
        store = AuditStore.open(db, read_only=True)
        return cls(store.engine, time_limit=time_limit,
                   probe_engine=create_store_engine(store.url, read_only=True, pooled=False))

    def deadline(self) -> float:
        """A deadline `time_limit` from now, for all the queries of one request."""
        return time.monotonic() + self.time_limit

    def execute(
        self,
        query: Callable[Concatenate[Connection, P], R],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        """Run `query(connection, ...)` here, now, under a fresh deadline."""
        return self.execute_until(self.deadline(), query, *args, **kwargs)

    def execute_until(
        self,
        deadline: float,
        query: Callable[Concatenate[Connection, P], R],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        with self.engine.connect() as connection, _time_limit(connection, deadline):
            return query(connection, *args, **kwargs)

    async def run(
        self,
        deadline: float,
        query: Callable[Concatenate[Connection, P], R],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        """`execute_until` in a worker thread, so the event loop keeps serving."""

        def call() -> R:
            return self.execute_until(deadline, query, *args, **kwargs)

        return await anyio.to_thread.run_sync(call)

    def probe(self) -> LedgerStatus:
        """The newest tree head, read on a connection of its own, outside the pool: it answers
        while requests hold every pooled connection, and fails once the store is unreadable."""
        with self.probe_engine.connect() as connection, _time_limit(connection, self.deadline()):
            return ledger_status(connection)

    def close(self) -> None:
        self.engine.dispose()
        self.probe_engine.dispose()


def _timeout() -> QueryTimeout:
    return QueryTimeout("query stopped: it ran past the request's time limit")


@contextmanager
def _time_limit(connection: Connection, deadline: float) -> Iterator[None]:
    """Abort statements still running at `deadline` with QueryTimeout."""
    if time.monotonic() >= deadline:
        raise _timeout()
    dialect = connection.dialect.name
    if dialect == "sqlite":
        raw: Any = connection.connection.driver_connection

        def keep_going() -> int:
            return 1 if time.monotonic() >= deadline else 0  # non-zero interrupts the statement

        raw.set_progress_handler(keep_going, _PROGRESS_OPCODES)
        try:
            yield
        except OperationalError as exc:
            if isinstance(exc.orig, sqlite3.OperationalError) and "interrupted" in str(exc.orig):
                raise _timeout() from None
            raise
        finally:
            raw.set_progress_handler(None, 0)
        return
    if dialect == "postgresql":
        remaining_ms = max(1, int((deadline - time.monotonic()) * 1000))
        with connection.begin():
            connection.execute(text(f"SET LOCAL statement_timeout = {remaining_ms}"))
            try:
                yield
            except OperationalError as exc:
                if getattr(exc.orig, "sqlstate", None) == "57014":  # query_canceled
                    raise _timeout() from None
                raise
        return
    yield
