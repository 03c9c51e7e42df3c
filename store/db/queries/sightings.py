"""Records with sightings (residuals, surfaces): each row's count, and the MOST_SEEN list.

MOST_SEEN without sorting every row: the writer stores a record with its first sighting, so
each has at least one. The records seen more than once are counted in one pass over the
sightings' (id, seq) index and only they are sorted; the rest, seen once, follow in seq
order, read from the seq index only as far as a page needs. The pass is per page: a page
costs a scan of that index (see README, Benchmarks), not a sort of every record.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Label, Select, Table, func, select

from store.db.queries.as_of import Snapshot, held
from store.db.queries.keys import key_value
from store.db.queries.orders import Listing, Order, Part, SortKey, in_seq_order


def sightings_count(parent: Table, key: str, sightings: Table,
                    *rules: ColumnElement[bool]) -> Label[int]:
    """Per row of `parent`, an index range count of its sightings (those meeting `rules`):
    an `occurrence_count` column, cheaper than a second statement and its thread hop."""
    return (
        select(func.count())
        .where(sightings.c[key] == parent.c[key], *rules)
        .correlate(parent)
        .scalar_subquery()
        .label("occurrence_count")
    )


def sighted_listing(order: Order, rows: Select[Any], parent: Table, key: str, sightings: Table,
                    snapshot: Snapshot | None, *, listing: str) -> Listing:
    """`rows` of `parent` (its columns, filtered) with their sightings as `occurrence_count`,
    in `order`; counts as of `snapshot`."""
    counted = sightings_count(parent, key, sightings, *held(snapshot, sightings))
    seq = parent.c.seq
    every = rows.add_columns(counted)
    if order is not Order.MOST_SEEN:
        return in_seq_order(order, every, seq, listing=listing)
    by_id = sightings.c[key]
    often = (
        select(by_id.label("id"), func.count().label("n"))
        .where(*held(snapshot, sightings))
        .group_by(by_id)
        .having(func.count() > 1)
        .cte(f"often_{sightings.name}")
        .prefix_with("MATERIALIZED")  # read by both parts: one pass
    )
    seen_often = Part(
        rows.add_columns(often.c.n.label("occurrence_count"))
        .join(often, often.c.id == parent.c[key]),
        [SortKey(often.c.n, descending=True), SortKey(seq)])
    seen_once = Part(
        every.where(parent.c[key].not_in(select(often.c.id))),
        [SortKey(key_value(1), descending=True, constant=True), SortKey(seq)])
    lookup = Part(every, [SortKey(counted.element, descending=True), SortKey(seq)])
    return Listing([seen_often, seen_once], lookup)
