"""The transaction a batch is written in, and the cycle collector paused while it is."""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine


@contextmanager
def collector_paused() -> Iterator[None]:
    """A batch allocates millions of acyclic objects: cycle collection was a sixth of it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def batch_transaction(engine: Engine) -> Iterator[Connection]:
    """engine.begin(), but on SQLite without its row-by-row foreign key checks: a batch's row
    is written last, so until then every row is a pending violation, and SQLite then probes
    the child tables on every parent insert (a fifth of the batch's SQL time at 1M rows).
    The writer checks the same references itself (check_references); PostgreSQL keeps both."""
    with engine.connect() as connection:
        driver = connection.connection.driver_connection if (
            connection.dialect.name == "sqlite") else None
        if driver is not None:
            driver.execute("PRAGMA foreign_keys=OFF")  # a no-op inside a transaction
        try:
            with connection.begin():
                yield connection
        finally:
            if driver is not None:
                try:
                    driver.execute("PRAGMA foreign_keys=ON")
                    restored = driver.execute("PRAGMA foreign_keys").fetchone() == (1,)
                except sqlite3.Error:
                    restored = False
                if not restored:
                    connection.invalidate()  # never back to the pool with its checks off
