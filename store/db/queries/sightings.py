"""Records with sightings (residuals, surfaces): each row's count, and the MOST_SEEN list.

Both read `sighting_counts`, the derived table the writer appends per batch: each record the
batch sighted, with the record's count by the end of that batch. A record's count now is its
row of its newest batch (as of a tree head: of its newest batch up to that head's); `verify`
recomputes every row from the sightings themselves. A MOST_SEEN page walks the (count desc,
seq) index from its cursor on, passing over the rows a newer batch superseded, instead of
counting every sighting. A filter that few records meet would make that walk pass many rows
for each one it keeps: those records are read by the filter's own index instead, each with
its newest count (one index lookup), and sorted.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Label,
    ScalarSelect,
    Select,
    Table,
    exists,
    func,
    select,
)

from store.db.queries.as_of import Snapshot
from store.db.queries.orders import Listing, Order, Part, SortKey, in_seq_order
from store.db.schema.tables import sighting_counts

# A filter met by fewer records than this is read by its own index, not by walking the
# counts: past it the walk passes at most about (records / this) rows for each row it keeps.
FEW_ROWS = 10_000


def sightings_count(parent: Table, snapshot: Snapshot | None) -> Label[int]:
    """Per row of `parent`, its sightings stored by `snapshot` as `occurrence_count`: the
    count in its newest `sighting_counts` row, one index entry (counting its sightings walked
    an index range per row: 1.2 of a 100-row page's 1.3 ms of SQL at 1M)."""
    return func.coalesce(newest_count(parent, snapshot), 0).label("occurrence_count")


def newest_count(parent: Table, snapshot: Snapshot | None) -> ScalarSelect[Any]:
    """Per row of `parent`, its count in its newest `sighting_counts` row (stored by
    `snapshot`): its sightings, read from one index entry. A row names its record by seq."""
    counts = sighting_counts.c
    return (
        select(counts.sightings)
        .where(counts.record_seq == parent.c.seq,
               *([] if snapshot is None else [snapshot.covers(counts.batch_id)]))
        .order_by(counts.batch_id.desc())
        .limit(1)
        .correlate(parent)
        .scalar_subquery()
    )


def few_rows(connection: Connection, rows: Select[Any], seq: ColumnElement[int]) -> bool:
    """Whether fewer than FEW_ROWS rows meet `rows`' conditions (reads at most that many)."""
    return few_of(connection.execute(few_rows_probe(rows, seq)).scalar_one())


def few_rows_probe(rows: Select[Any], seq: ColumnElement[int]) -> Select[Any]:
    """The statement counting `rows`, up to FEW_ROWS of them (`few_of` reads its count)."""
    probe = rows.with_only_columns(seq).limit(FEW_ROWS).subquery()
    return select(func.count()).select_from(probe)


def few_of(found: int) -> bool:
    return found < FEW_ROWS


def _current_counts(parent: Table, snapshot: Snapshot | None) -> list[ColumnElement[bool]]:
    """The `sighting_counts` rows of `parent`'s records that are their newest (by
    `snapshot`)."""
    counts, newer = sighting_counts, sighting_counts.alias("newer_counts")
    later = [newer.c.batch_id > counts.c.batch_id]
    if snapshot is not None:
        later.append(snapshot.covers(newer.c.batch_id))
    current = [counts.c.record_table == parent.name,
               ~exists().where(newer.c.record_seq == counts.c.record_seq, *later)]
    if snapshot is not None:
        current.append(snapshot.covers(counts.c.batch_id))
    return current


def sighted_listing(order: Order, rows: Select[Any], parent: Table,
                    snapshot: Snapshot | None, *, listing: str, few: bool = False,
                    walk_rows: Select[Any] | None = None) -> Listing:
    """`rows` of `parent` (its columns, filtered) with their sightings as `occurrence_count`,
    in `order`; counts as of `snapshot`. `few`: few rows meet `rows`' filter (few_rows).
    `walk_rows`: the same rows without `snapshot`'s bound on their seq, for the walk of the
    counts (default `rows`)."""
    seq = parent.c.seq
    if order is not Order.MOST_SEEN:
        counted = sightings_count(parent, snapshot)
        return in_seq_order(order, rows.add_columns(counted), seq, listing=listing)
    count = newest_count(parent, snapshot)
    lookup = Part(rows.add_columns(count.label("occurrence_count")),
                  [SortKey(count, descending=True), SortKey(seq)])
    if few:
        return Listing([lookup], lookup)
    counts = sighting_counts.c
    walk = Part(
        # Each count's record is one lookup of its seq. Given a range on the record's seq, an
        # asOf head's or (SQLite carries `a = b` and `b > ?` over to `a > ?`) a cursor's,
        # SQLite's planner read that range of the filter's (column, seq) index for every count
        # the walk passed: 7 ms -> 4 s for a filtered MOST_SEEN page as of a head at 1M
        # (bench/orders.py). So the seq is matched as an expression (`+ 0`: no range carried
        # over) and `walk_rows` bear no asOf bound on it (a count of a batch by the head is a
        # record stored by then).
        (rows if walk_rows is None else walk_rows)
        .join(sighting_counts, seq == counts.record_seq + 0)
        .where(*_current_counts(parent, snapshot))
        .add_columns(counts.sightings.label("occurrence_count")),
        [SortKey(counts.sightings, descending=True), SortKey(counts.record_seq)],
        seek=True)
    return Listing([walk], lookup)
