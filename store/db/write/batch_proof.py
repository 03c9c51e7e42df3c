"""The writer proves its batch before COMMIT: every row it inserted is stored and reads back
as inserted, at the seq it gave it, and the log's subtrees, head and tallies read back as
written.

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

from sqlalchemy import Connection, and_, false, func, or_, select

from store.db.log.stored_log import EntryEncoder
from store.db.schema.engine import row_chunks_read
from store.db.schema.record_kinds import LEDGERED_KEYS
from store.db.schema.tables import (
    SUBTREE_LEVEL,
    log_subtrees,
    metadata,
    residual_tallies,
    sighting_counts,
    tree_heads,
)
from store.db.write.sighting_counts import WrittenCounts
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


def prove_batch(connection: Connection, written: WrittenBatch, batch_id: int,
                head: tuple[int, str], subtrees: set[tuple[int, int, str]],
                tallies: int, counts: WrittenCounts | None = None) -> None:
    """BatchNotStored, naming the table, unless the batch reads back exactly as written."""
    start, (size, root_hex) = written.before.size, head
    for table in sorted(LEDGERED_KEYS.keys() | written.tables.keys()):
        found = TableDigest()
        for seqs, leaves in _read_back(connection, table, start, size):
            found.add_many(seqs, leaves)
        expected = written.tables.get(table, TableDigest())
        if found.rows != expected.rows:
            _refuse(table, f"{expected.rows} rows were inserted, {found.rows} read back")
        if found.rows and not found.same(expected):
            _refuse(table, "rows read back differ from the rows inserted")
    stored_head = connection.execute(
        select(tree_heads.c.tree_size, tree_heads.c.root_hash)
        .where(tree_heads.c.batch_id == batch_id)).all()
    if [tuple(r) for r in stored_head] != [(size, root_hex)]:
        _refuse("tree_heads", f"batch {batch_id}'s head reads back as {stored_head}")
    # Those ending past the old size: per level an index range on (level, start).
    levels = range(SUBTREE_LEVEL, size.bit_length() + 1)
    ending_after = or_(false(), *(and_(log_subtrees.c.level == level,
                                       log_subtrees.c.start > start - (1 << level))
                                  for level in levels))
    stored = {(r.level, r.start, r.hash)
              for r in connection.execute(select(log_subtrees).where(ending_after))}
    if stored != subtrees:
        _refuse("log_subtrees", f"{len(subtrees)} subtrees were inserted, {len(stored)} "
                                "read back as inserted")
    found_tallies = connection.execute(
        select(func.count()).select_from(residual_tallies)
        .where(residual_tallies.c.batch_id == batch_id)).scalar_one()
    if found_tallies != tallies:
        _refuse("residual_tallies", f"{tallies} rows were inserted, {found_tallies} read back")
    _prove_counts(connection, batch_id, counts or WrittenCounts())


def _prove_counts(connection: Connection, batch_id: int, counts: WrittenCounts) -> None:
    """The batch's sighting_counts rows: as many, with the same sums of their numbers."""
    c = sighting_counts.c
    read = connection.execute(
        select(func.count(), func.coalesce(func.sum(c.sightings), 0),
               func.coalesce(func.sum(c.record_seq), 0))
        .where(c.batch_id == batch_id)).one()
    written = (counts.rows, counts.sightings, counts.record_seqs)
    if tuple(read) != written:
        _refuse("sighting_counts", f"{written[0]} rows were inserted (sightings {written[1]}, "
                                   f"seqs {written[2]}), {read[0]} read back (sightings "
                                   f"{read[1]}, seqs {read[2]})")


def _refuse(table: str, reason: str) -> None:
    raise BatchNotStored(
        f"{table}: the batch did not read back as written ({reason}): nothing was written; "
        "an out-of-band trigger, rule or row-level security policy may drop or hide rows "
        "(run `core-audit verify`)")
