"""The time limit of one request's queries: a deadline that aborts runaway SQL (SQLite's
progress handler, PostgreSQL's statement_timeout) with QueryTimeout."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.exc import OperationalError

from store.db.queries import QueryTimeout

DEFAULT_TIME_LIMIT = 5.0  # seconds per request: far above any indexed page or facet query
_PROGRESS_OPCODES = 1_000  # how often SQLite asks "keep going?" (VM instructions)


def _timeout() -> QueryTimeout:
    return QueryTimeout("query stopped: it ran past the request's time limit")


@contextmanager
def time_limit(connection: Connection, deadline: float) -> Iterator[None]:
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
