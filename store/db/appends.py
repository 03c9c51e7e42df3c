"""What every code path that appends needs: the insert itself, the writers' lock, the newest
batch. Shared by the writer, copy, checkpoints and schema creation."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, func, select, text

from store.db.tables import ingest_batches, metadata

LEDGER_LOCK_KEY = 0x636F7265  # "core": the advisory lock that serializes log appends


def insert_rows(connection: Connection, table: str, rows: list[dict[str, Any]]) -> None:
    """executemany straight to the driver: SQLAlchemy's per-row parameter work dominated."""
    if not rows:
        return
    columns = [c.name for c in metadata.tables[table].columns]
    marker = "?" if connection.dialect.paramstyle == "qmark" else "%s"
    sql = (f"INSERT INTO {table} ({', '.join(columns)}) "
           f"VALUES ({', '.join([marker] * len(columns))})")
    connection.exec_driver_sql(sql, list(map(_values(tuple(columns)), rows)))


@functools.cache
def _values(columns: tuple[str, ...]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """A row's values in column order, as a tuple."""
    if len(columns) == 1:
        return lambda row: (row[columns[0]],)
    return operator.itemgetter(*columns)


def lock_log_tip(connection: Connection) -> None:
    """One writer at a time extends the log; SQLite's BEGIN IMMEDIATE already ensures it."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LEDGER_LOCK_KEY})


def last_batch_id(connection: Connection) -> int:
    """The newest batch's id; 0 in an empty store."""
    return int(connection.execute(
        select(func.coalesce(func.max(ingest_batches.c.batch_id), 0))).scalar_one())


def batch_of_input(connection: Connection, input_sha256: str, record_type: str) -> int | None:
    """The first batch made from these input bytes (as this record type), if any."""
    return connection.execute(
        select(func.min(ingest_batches.c.batch_id)).where(
            ingest_batches.c.input_sha256 == input_sha256,
            ingest_batches.c.record_type == record_type)).scalar()
