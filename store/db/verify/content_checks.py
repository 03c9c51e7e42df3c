"""Content-addressed keys, recomputed: a row whose key is not the hash of its content was
forged or edited, whatever the log or the triggers say."""

from __future__ import annotations

import sqlite3
from collections import namedtuple
from collections.abc import Callable, Generator, Iterator, Sequence
from functools import partial
from typing import Any, cast

from sqlalchemy import Connection, Row, select
from sqlalchemy.exc import DBAPIError

from store.db.schema.content_ids import UndecodableColumn
from store.db.schema.engine import row_chunks_read
from store.db.schema.record_kinds import RECORD_KINDS, RecordKind
from store.db.verify.problems import Problem

STREAM_ROWS = 1000  # rows fetched at a time: memory stays flat on a store of any size


def content_kinds() -> list[RecordKind]:
    """The content-addressed record kinds, in the order verify reports them."""
    return [kind for kind in RECORD_KINDS if kind.content_ids is not None]


def table_problems(connection: Connection, kind: RecordKind,
                   after_seq: int = 0) -> Iterator[Problem]:
    """The rows of one content-addressed table (after leaf `after_seq`) whose key is not its
    content's hash."""
    table = kind.table
    query = select(table)
    if "seq" in table.c:
        query = query.where(table.c.seq > after_seq).order_by(table.c.seq)
    # The driver's rows as named tuples: a SQLAlchemy Row per row was a fifth of the check.
    # Made by tuple.__new__ itself: namedtuple's _make, a Python function, was a tenth.
    record = namedtuple(kind.name, [str(column.name) for column in table.columns])  # type: ignore[misc]
    as_row = cast(Callable[[Sequence[Any]], Row[Any]], partial(tuple.__new__, record))
    chunks = row_chunks_read(connection, query, STREAM_ROWS)
    try:
        while True:
            try:
                rows = next(chunks, None)
            except sqlite3.Error as exc:  # as SQLAlchemy would raise it: a store unreadable
                raise DBAPIError.instance(None, None, exc, sqlite3.Error) from exc
            if rows is None:
                return
            yield from _row_problems(map(as_row, rows), kind)
    finally:
        if isinstance(chunks, Generator):
            chunks.close()  # a check read no further (enough problems): end the read now


def _row_problems(rows: Iterator[Row[Any]], kind: RecordKind) -> Iterator[Problem]:
    (key_column,), ids_of = kind.key, kind.content_ids
    assert ids_of is not None  # only content-addressed kinds come here
    for row in rows:
        try:
            ids = ids_of(row)
        except UndecodableColumn as exc:
            yield Problem(getattr(row, "seq", None), kind.name, getattr(row, key_column),
                          f"{exc}: its content cannot be hashed")
            continue
        key = getattr(row, key_column)
        if key not in ids:
            yield Problem(getattr(row, "seq", None), kind.name, key,
                          f"{key_column} is not the hash of its content")
