"""Content-addressed keys, recomputed: a row whose key is not the hash of its content was
forged or edited, whatever the log or the triggers say."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import Connection, Row, select

from store.db.schema.content_ids import UndecodableColumn
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
    with connection.execute(query.execution_options(yield_per=STREAM_ROWS)) as rows:
        yield from _row_problems(rows, kind)


def _row_problems(rows: Iterator[Row[Any]], kind: RecordKind) -> Iterator[Problem]:
    (key_column,), ids_of = kind.key, kind.content_ids
    assert ids_of is not None  # only content-addressed kinds come here
    for row in rows:
        key = getattr(row, key_column)
        seq = getattr(row, "seq", None)
        try:
            ids = ids_of(row)
        except UndecodableColumn as exc:
            yield Problem(seq, kind.name, key, f"{exc}: its content cannot be hashed")
            continue
        if key not in ids:
            yield Problem(seq, kind.name, key, f"{key_column} is not the hash of its content")
