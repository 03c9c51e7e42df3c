"""The writer proves its batch before COMMIT: every row it inserted is stored and reads back
as inserted, and the leaves it appended make the tree head it wrote.

An out-of-band `RAISE(IGNORE)` trigger (SQLite), a `DO INSTEAD NOTHING` rule or a row-level
security policy (PostgreSQL) drops or hides an insert without an error: the batch would report
rows it never stored, under a tree head covering leaves with no row. Reading the batch back in
its own transaction sees what any later reader will; a difference rolls everything back.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, and_, false, func, or_, select

from store.db.log.stored_log import leaf_rows, log_entry
from store.db.schema.tables import (
    SUBTREE_LEVEL,
    log_subtrees,
    residual_tallies,
    sighting_counts,
    tree_heads,
)
from store.errors import StoreError
from store.model.merkle import CompactRange, leaf_hash


class BatchNotStored(StoreError):
    """The batch did not read back as written: nothing of it was committed."""


@dataclass
class WrittenBatch:
    """What the writer appended, kept as it goes: per table its new rows and a running
    digest of their leaves (in seq order), and the tree as it was before the batch."""

    before: CompactRange
    rows: Counter[str] = field(default_factory=Counter)
    digests: dict[str, hashlib._Hash] = field(default_factory=dict)

    def add_many(self, table: str, leaves: list[bytes]) -> None:
        """The table's next leaves, in seq order."""
        if not leaves:
            return
        self.rows[table] += len(leaves)
        digest = self.digests.get(table)
        if digest is None:
            digest = self.digests[table] = hashlib.sha256()
        digest.update(b"".join(leaves))


def prove_batch(connection: Connection, written: WrittenBatch, batch_id: int,
                head: tuple[int, str], subtrees: set[tuple[int, int, str]],
                tallies: int, counts: Sequence[tuple[Any, ...]] = ()) -> None:
    """BatchNotStored, naming the table, unless the batch reads back exactly as written."""
    start, (size, root_hex) = written.before.size, head
    tree = written.before.copy()
    rows: Counter[str] = Counter()
    digests: dict[str, hashlib._Hash] = {}
    completed: set[tuple[int, int, str]] = set()
    gap = False  # a leaf with no row: the counts below name the table that lost it
    for seq, table, row in leaf_rows(connection, start, size):
        leaf = leaf_hash(log_entry(table, row))
        rows[table] += 1
        digest = digests.get(table)
        if digest is None:
            digest = digests[table] = hashlib.sha256()
        digest.update(leaf)
        gap = gap or seq != tree.size + 1
        if not gap:
            completed.update((s.level, s.start, s.digest.hex())
                             for s in tree.extend((leaf,), SUBTREE_LEVEL))
    for table in sorted(written.rows.keys() | rows.keys()):
        if rows[table] != written.rows[table]:
            _refuse(table, f"{written.rows[table]} rows were inserted, {rows[table]} read back")
    for table in sorted(written.digests):
        if digests[table].digest() != written.digests[table].digest():
            _refuse(table, "rows read back differ from the rows inserted")
    if tree.size != size or tree.root().hex() != root_hex:
        _refuse("log", f"the rows read back make a tree of {tree.size} leaves, root "
                       f"{tree.root().hex()}, not the head written ({size}, {root_hex})")
    stored_head = connection.execute(
        select(tree_heads.c.tree_size, tree_heads.c.root_hash)
        .where(tree_heads.c.batch_id == batch_id)).all()
    if [tuple(r) for r in stored_head] != [(size, root_hex)]:
        _refuse("tree_heads", f"batch {batch_id}'s head reads back as {stored_head}")
    if completed != subtrees:
        _refuse("log_subtrees", "the subtrees written are not those of the rows read back")
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
    found = connection.execute(select(func.count()).select_from(residual_tallies)
                               .where(residual_tallies.c.batch_id == batch_id)).scalar_one()
    if found != tallies:
        _refuse("residual_tallies", f"{tallies} rows were inserted, {found} read back")
    _prove_counts(connection, batch_id, counts)


def _prove_counts(connection: Connection, batch_id: int,
                  counts: Sequence[tuple[Any, ...]]) -> None:
    """The batch's sighting_counts rows: as many, with the same sums of their numbers."""
    c = sighting_counts.c
    read = connection.execute(
        select(func.count(), func.coalesce(func.sum(c.sightings), 0),
               func.coalesce(func.sum(c.record_seq), 0))
        .where(c.batch_id == batch_id)).one()
    written = (len(counts), sum(row[-1] for row in counts), sum(row[-2] for row in counts))
    if tuple(read) != written:
        _refuse("sighting_counts", f"{written[0]} rows were inserted (sightings {written[1]}, "
                                   f"seqs {written[2]}), {read[0]} read back (sightings "
                                   f"{read[1]}, seqs {read[2]})")


def _refuse(table: str, reason: str) -> None:
    raise BatchNotStored(
        f"{table}: the batch did not read back as written ({reason}): nothing was written; "
        "an out-of-band trigger, rule or row-level security policy may drop or hide rows "
        "(run `core-audit verify`)")
