"""What every code path that appends needs: the insert itself, the writers' lock, the newest
batch. Shared by the writer, copy, checkpoints and schema creation."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import Connection, func, select

# The writers' lock lives with the engine (schema_version takes it too); named here as well.
from store.db.schema.engine import lock_log_tip as lock_log_tip
from store.db.schema.tables import ingest_batches, metadata

# A ledgered row as the writer appends it: (seq, batch_id, *content_columns(table)).
APPENDED_PREFIX: tuple[str, ...] = ("seq", "batch_id")


def insert_rows(connection: Connection, table: str, rows: list[dict[str, Any]]) -> None:
    """executemany straight to the driver: SQLAlchemy's per-row parameter work dominated."""
    if not rows:
        return
    columns = tuple(c.name for c in metadata.tables[table].columns)
    insert_values(connection, table, columns, list(map(_values(columns), rows)))


def insert_values(connection: Connection, table: str, columns: tuple[str, ...],
                  rows: list[tuple[Any, ...]]) -> None:
    """Rows given as tuples of `columns`' values: the writer's hot path, no dict per row."""
    if rows:
        connection.exec_driver_sql(_insert_sql(table, columns, connection.dialect.paramstyle),
                                   rows)


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
