"""The writer proves its batch before COMMIT: every row it inserted is stored and reads back
as inserted, at the seq it gave it, and every derived table's rows of the batch (subtrees,
head, tallies, sighting counts: record_kinds.DERIVED_TABLES) read back with the values
written (derived_rows).

An out-of-band `RAISE(IGNORE)` trigger (SQLite), a `DO INSTEAD NOTHING` rule or a row-level
security policy (PostgreSQL) drops or hides an insert without an error: the batch would report
rows it never stored, under a tree head covering leaves with no row. Reading the batch back in
its own transaction sees what any later reader will; a difference rolls everything back.

Each ledgered table is read back on its own, in seq order, and its rows' values (seq and
batch_id first, then content_columns) must be the values the writer inserted, byte for byte
as JSON: the digest of the rows read back equals the digest of the rows inserted. A row's
leaf is computed from those same values (`AppendedEntry`, in the reading process), so rows
reading back with the values inserted have exactly the leaves the tree head was computed
from; a leaf is not hashed a second time here (recomputing each row's entry and leaf was
half the proof's time, the tree from them before that).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import orjson
from sqlalchemy import Boolean, Connection, select

from store.db.log.stored_log import EntryEncoder
from store.db.schema.engine import row_chunks_read
from store.db.schema.record_kinds import DERIVED_TABLES, LEDGERED_KEYS
from store.db.schema.tables import metadata
from store.db.write.derived_rows import DerivedWrites, read_back
from store.db.write.inserts import APPENDED_PREFIX, content_columns
from store.errors import StoreError
from store.model.merkle import CompactRange

_READ_ROWS = 5000


def appended_columns(table: str) -> tuple[str, ...]:
    """A ledgered row's values as the writer inserts them: seq, batch_id, then its content."""
    return APPENDED_PREFIX + content_columns(table)


class AppendedEntry:
    """The log entry of a row given as its appended values (appended_columns order; seq is
    not in an entry): the bytes EntryEncoder gives for the same values read back, and
    log_entry for the row as a dict."""

    def __init__(self, table: str) -> None:
        self._encode = EntryEncoder(table)
        appended = appended_columns(table)
        self._order = itemgetter(*(appended.index(name) for name in self._encode.columns))

    def __call__(self, values: Sequence[Any]) -> bytes:
        return self._encode(self._order(values))


def _row_json(row: Sequence[Any]) -> bytes:
    try:
        return orjson.dumps(tuple(row))
    except (TypeError, orjson.JSONEncodeError):  # an integer beyond 64 bits
        return json.dumps(tuple(row), separators=(",", ":"), ensure_ascii=False).encode()


def rows_json(rows: Sequence[Sequence[Any]]) -> bytes:
    """Each row as a JSON array followed by a comma: the same bytes however the rows are cut
    into chunks (orjson writes no whitespace, so a list is its rows' arrays joined)."""
    if not rows:
        return b""
    try:
        return orjson.dumps(rows)[1:-1] + b","
    except (TypeError, orjson.JSONEncodeError):  # not tuples (a server's rows), or big ints
        return b"".join(_row_json(row) + b"," for row in rows)


class BatchNotStored(StoreError):
    """The batch did not read back as written: nothing of it was committed."""


@dataclass
class TableDigest:
    """One table's rows of the batch, in seq order: how many, and a digest of their values
    (appended_columns order, as rows_json writes them)."""

    rows: int = 0
    values: hashlib._Hash = field(default_factory=hashlib.sha256)

    def add_many(self, rows: Sequence[Sequence[Any]]) -> None:
        self.rows += len(rows)
        self.values.update(rows_json(rows))

    def same(self, other: TableDigest) -> bool:
        return self.values.digest() == other.values.digest()


@dataclass
class WrittenBatch:
    """What the writer appended, kept as it goes: per table a running digest of its new rows'
    values (in seq order), and the tree as it was before the batch."""

    before: CompactRange
    tables: dict[str, TableDigest] = field(default_factory=dict)

    def add_many(self, table: str, rows: Sequence[Sequence[Any]]) -> None:
        """The table's next rows, in seq order, as inserted (appended_columns order)."""
        if rows:
            self.tables.setdefault(table, TableDigest()).add_many(rows)


def _read_back(connection: Connection, table: str, start: int, end: int
               ) -> Iterator[Sequence[Sequence[Any]]]:
    """`table`'s rows with start < seq <= end, in seq order, a few thousand at a time, their
    values in appended_columns order (a Boolean as the bool inserted, not SQLite's 0 or 1)."""
    t, columns = metadata.tables[table], appended_columns(table)
    flags = [i for i, name in enumerate(columns) if isinstance(t.c[name].type, Boolean)]
    statement = (select(*(t.c[name] for name in columns))
                 .where(t.c.seq > start, t.c.seq <= end).order_by(t.c.seq))
    for rows in row_chunks_read(connection, statement, _READ_ROWS):
        yield [_flags_read(row, flags) for row in rows] if flags else rows


def _flags_read(row: Sequence[Any], flags: list[int]) -> tuple[Any, ...]:
    """The row with its flag columns (at `flags`) read as _flag reads them; the rest as is."""
    values = list(row)
    for place in flags:
        values[place] = _flag(values[place])
    return tuple(values)


def _flag(value: Any) -> Any:
    """SQLite's 0 or 1 as the bool inserted; any other value as it is, so that a 2, a 1.0 or
    a text where a flag was inserted reads back different, as it is."""
    if type(value) is int and value in (0, 1):
        return value == 1
    return value


def prove_batch(connection: Connection, written: WrittenBatch, batch_id: int, size: int,
                derived: DerivedWrites) -> None:
    """BatchNotStored, naming the table, unless the batch reads back exactly as written:
    the values of its rows (every ledgered table, seqs included) and of every derived
    table's rows."""
    start = written.before.size
    for table in sorted(LEDGERED_KEYS.keys() | written.tables.keys()):
        found = TableDigest()
        for rows in _read_back(connection, table, start, size):
            found.add_many(rows)
        expected = written.tables.get(table, TableDigest())
        if found.rows != expected.rows:
            _refuse(table, f"{expected.rows} rows were inserted, {found.rows} read back")
        if found.rows and not found.same(expected):
            _refuse(table, "rows read back differ from the rows inserted")
    # Every derived table, whether this batch wrote to it or not: rows nobody wrote (an
    # out-of-band trigger's) are refused as surely as rows changed or dropped.
    for table in DERIVED_TABLES:
        if table in derived.absent:
            continue
        inserted, stored = derived.written(table), read_back(connection, table, batch_id,
                                                              start, size)
        if inserted.rows != stored.rows:
            _refuse(table, f"{inserted.rows} rows were inserted, {stored.rows} read back")
        if inserted.total != stored.total:
            _refuse(table, f"{inserted.rows} rows were inserted and {stored.rows} read back, "
                           "but their values differ")


def _refuse(table: str, reason: str) -> None:
    raise BatchNotStored(
        f"{table}: the batch did not read back as written ({reason}): nothing was written; "
        "an out-of-band trigger, rule or row-level security policy may drop or hide rows "
        "(run `core-audit verify`)")
