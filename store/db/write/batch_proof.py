"""The writer proves its batch before COMMIT: every row it inserted is stored and reads back
as inserted, at the seq it gave it, and every derived table's rows of the batch (subtrees,
head, tallies, sighting counts: record_kinds.DERIVED_TABLES) read back with the values
written (derived_rows).

An out-of-band `RAISE(IGNORE)` trigger (SQLite), a `DO INSTEAD NOTHING` rule or a row-level
security policy (PostgreSQL) drops or hides an insert without an error: the batch would report
rows it never stored, under a tree head covering leaves with no row. Reading the batch back in
its own transaction sees what any later reader will; a difference rolls everything back.

Each table is read back on its own, in seq order: its rows' leaf hashes and seqs must be the
ones the writer appended, so the leaves read back, merged by seq, are exactly those the tree
head was computed from (recomputing the tree from them again repeated the same arithmetic
on the same leaves, and merging the tables by seq in Python was half the proof's time).
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field

from sqlalchemy import Connection, select

from store.db.log.stored_log import EntryEncoder
from store.db.schema.engine import row_chunks_read
from store.db.schema.record_kinds import DERIVED_TABLES, LEDGERED_KEYS
from store.db.schema.tables import metadata
from store.db.write.derived_rows import DerivedWrites, read_back
from store.errors import StoreError
from store.model.merkle import CompactRange, leaf_hash

_READ_ROWS = 5000


class BatchNotStored(StoreError):
    """The batch did not read back as written: nothing of it was committed."""


@dataclass
class TableDigest:
    """One table's rows of the batch, in seq order: how many, their leaf hashes and seqs."""

    rows: int = 0
    leaves: hashlib._Hash = field(default_factory=hashlib.sha256)
    seqs: hashlib._Hash = field(default_factory=hashlib.sha256)

    def add_many(self, seqs: list[int], leaves: list[bytes]) -> None:
        self.rows += len(leaves)
        self.leaves.update(b"".join(leaves))
        self.seqs.update(array("q", seqs).tobytes())

    def same(self, other: TableDigest) -> bool:
        return self.leaves.digest() == other.leaves.digest() and (
            self.seqs.digest() == other.seqs.digest())


@dataclass
class WrittenBatch:
    """What the writer appended, kept as it goes: per table a running digest of its new rows'
    leaves and seqs (in seq order), and the tree as it was before the batch."""

    before: CompactRange
    tables: dict[str, TableDigest] = field(default_factory=dict)

    def add_many(self, table: str, seqs: list[int], leaves: list[bytes]) -> None:
        """The table's next rows, in seq order: their seqs and leaf hashes."""
        if leaves:
            self.tables.setdefault(table, TableDigest()).add_many(seqs, leaves)


def _read_back(connection: Connection, table: str, start: int, end: int
               ) -> Iterator[tuple[list[int], list[bytes]]]:
    """(seqs, leaf hashes) of `table`'s rows with start < seq <= end, in seq order, a few
    thousand at a time; each leaf as log_entry hashes the row read back."""
    t, entry = metadata.tables[table], EntryEncoder(table)
    statement = (select(*(t.c[name] for name in entry.columns), t.c.seq)
                 .where(t.c.seq > start, t.c.seq <= end).order_by(t.c.seq))
    for rows in row_chunks_read(connection, statement, _READ_ROWS):
        yield [row[-1] for row in rows], [leaf_hash(entry(row)) for row in rows]


def prove_batch(connection: Connection, written: WrittenBatch, batch_id: int, size: int,
                derived: DerivedWrites) -> None:
    """BatchNotStored, naming the table, unless the batch reads back exactly as written:
    its leaves (every ledgered table) and the values of every derived table's rows."""
    start = written.before.size
    for table in sorted(LEDGERED_KEYS.keys() | written.tables.keys()):
        found = TableDigest()
        for seqs, leaves in _read_back(connection, table, start, size):
            found.add_many(seqs, leaves)
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
