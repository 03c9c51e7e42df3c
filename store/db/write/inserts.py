"""What every code path that appends needs: the insert itself, the writers' lock, the newest
batch. Shared by the writer, copy, checkpoints and schema creation."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import Connection, func, select
from sqlalchemy.exc import DBAPIError

# The writers' lock lives with the engine (schema_version takes it too); named here as well.
from store.db.schema.engine import lock_log_tip as lock_log_tip
from store.db.schema.tables import ingest_batches, metadata

# A ledgered row as the writer appends it: (seq, batch_id, *content_columns(table)).
APPENDED_PREFIX: tuple[str, ...] = ("seq", "batch_id")
# PostgreSQL: this many rows or more go by COPY (one statement, rows streamed; 2-3x the rate of
# executemany), fewer by INSERT. COPY fires the same triggers and checks; it ignores rules, so
# no out-of-band DO INSTEAD rule can drop the writer's rows.
COPY_MIN_ROWS = 64


def insert_rows(connection: Connection, table: str, rows: list[dict[str, Any]]) -> None:
    """executemany straight to the driver: SQLAlchemy's per-row parameter work dominated."""
    if not rows:
        return
    columns = tuple(c.name for c in metadata.tables[table].columns)
    insert_values(connection, table, columns, list(map(_values(columns), rows)))


def insert_values(connection: Connection, table: str, columns: tuple[str, ...],
                  rows: list[tuple[Any, ...]]) -> None:
    """Rows given as tuples of `columns`' values: the writer's hot path, no dict per row."""
    if not rows:
        return
    if len(rows) >= COPY_MIN_ROWS and connection.dialect.name == "postgresql":
        _copy_values(connection, table, columns, rows)
        return
    connection.exec_driver_sql(_insert_sql(table, columns, connection.dialect.paramstyle), rows)


def _copy_values(connection: Connection, table: str, columns: tuple[str, ...],
                 rows: list[tuple[Any, ...]]) -> None:
    """psycopg 3's COPY FROM STDIN on the transaction's own connection: the same rows, typed
    by the columns they go to (text format; psycopg escapes tabs, newlines and backslashes)."""
    driver = connection.connection.driver_connection
    assert driver is not None
    statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    driver_error = connection.dialect.loaded_dbapi.Error
    try:
        with driver.cursor() as cursor, cursor.copy(statement) as copy:
            write_row = copy.write_row
            for row in rows:
                write_row(row)
    except driver_error as exc:  # raised as SQLAlchemy raises an INSERT's, for the callers
        raise DBAPIError.instance(statement, None, exc, driver_error,
                                  dialect=connection.dialect) from exc


@functools.cache
def content_columns(table: str) -> tuple[str, ...]:
    """A ledgered row's content, as the input's reader sends it: every column but seq and
    batch_id, in column order."""
    return tuple(c.name for c in metadata.tables[table].columns
                 if c.name not in APPENDED_PREFIX)


@functools.cache
def _insert_sql(table: str, columns: tuple[str, ...], paramstyle: str) -> str:
    marker = "?" if paramstyle == "qmark" else "%s"
    return (f"INSERT INTO {table} ({', '.join(columns)}) "
            f"VALUES ({', '.join([marker] * len(columns))})")


def _tuple_getter(items: tuple[Any, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """Takes a row to its values at `items` (names or positions), always as a tuple."""
    if len(items) == 1:
        item = items[0]
        return lambda row: (row[item],)
    return operator.itemgetter(*items)


@functools.cache
def _values(columns: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """A row's values in column order, as a tuple."""
    return _tuple_getter(columns)


def values_of(columns: tuple[str, ...], row: Mapping[str, Any]) -> tuple[Any, ...]:
    """`row`'s values of `columns`, in that order."""
    return _values(columns)(row)


def key_getter(columns: tuple[str, ...], key: tuple[str, ...]
               ) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """Takes a row given as a tuple of `columns` to its `key` columns' values, as a tuple."""
    return _tuple_getter(tuple(columns.index(name) for name in key))


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
