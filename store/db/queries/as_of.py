"""As-of reads: the store exactly as it was at one of its tree heads.

A batch appends its rows as consecutive leaves (leaf index = seq - 1) and ends with its tree
head, so the tree of `tree_size` leaves holds exactly the rows with seq <= tree_size, which
are exactly the rows of the batches up to the one whose head has that size. Rows are
filtered by seq; per-batch tallies by batch_id. Only a recorded head (or 0) is a state the
store was ever in: any other size would split a batch, so it is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, Table, select

from store.db.queries.errors import QueryError
from store.db.queries.keys import MAX_KEY, key_value
from store.db.schema.tables import tree_heads
from store.model.merkle import EMPTY_ROOT


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The store after batch `batch_id` (0: before the first): its first `tree_size` leaves."""

    tree_size: int
    batch_id: int
    root_hash: str

    def holds(self, table: Table) -> ColumnElement[bool]:
        """Rows of a ledgered `table` that were stored by then."""
        condition: ColumnElement[bool] = table.c.seq <= self.tree_size
        return condition

    def covers(self, batch_id: ColumnElement[Any]) -> ColumnElement[bool]:
        """Rows (e.g. tallies) of the batches written by then."""
        condition: ColumnElement[bool] = batch_id <= self.batch_id
        return condition


def _head(connection: Connection, condition: ColumnElement[bool], newest: bool) -> Any:
    size = tree_heads.c.tree_size
    return connection.execute(
        select(tree_heads).where(condition).order_by(size.desc() if newest else size)
        .limit(1)).first()


def _named(head: Any) -> str:
    return "0 (the empty store)" if head is None else (
        f"{head.tree_size} (after batch {head.batch_id})")


def snapshot_at(connection: Connection, as_of: int | None) -> Snapshot | None:
    """The store at tree size `as_of` (None: now, no snapshot). QueryError unless `as_of` is 0
    or the size of a recorded tree head; the message names the nearest heads."""
    if as_of is None:
        return None
    if not 0 <= as_of <= MAX_KEY:  # checked before any SQL: it may not fit a column
        raise QueryError(f"asOf: must be between 0 and the newest tree size, got {as_of}")
    if as_of == 0:
        return Snapshot(tree_size=0, batch_id=0, root_hash=EMPTY_ROOT.hex())
    head = _head(connection, tree_heads.c.tree_size == key_value(as_of), newest=True)
    if head is not None:
        return Snapshot(tree_size=as_of, batch_id=head.batch_id, root_hash=head.root_hash)
    below = _head(connection, tree_heads.c.tree_size < key_value(as_of), newest=True)
    above = _head(connection, tree_heads.c.tree_size > key_value(as_of), newest=False)
    if above is None:
        raise QueryError(f"asOf: {as_of} is past the newest tree head, {_named(below)}")
    raise QueryError(f"asOf: {as_of} is not a tree size this store recorded (one per batch); "
                     f"the nearest are {_named(below)} and {_named(above)}")


def held(snapshot: Snapshot | None, table: Table) -> list[ColumnElement[bool]]:
    """The condition for rows of `table` stored by `snapshot`; none without a snapshot."""
    return [] if snapshot is None else [snapshot.holds(table)]
