"""A record listing's rows in an order, as the pages `RecordListing.list` answers: built per
request (`listing_in`), kept by shape and run with each request's values (`shaped_list`,
statement_shapes.py), or a search's best matches (`ranked_page`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection

from store.db.queries.as_of import Snapshot
from store.db.queries.cursors import cursor_for, key_in
from store.db.queries.errors import QueryError
from store.db.queries.orders import COLUMN_ORDERS, TIME_ORDERS, Listing, Order, in_seq_order
from store.db.queries.pages import PageRequest, PageStatements, page_size, shaped_page
from store.db.queries.records import Page
from store.db.queries.search import Searched, ranked_seqs, text_index
from store.db.queries.sightings import few_of, few_rows, few_rows_probe, sighted_listing
from store.db.queries.statement_shapes import Shaped

if TYPE_CHECKING:  # listings.py imports this module: its class for annotations only
    from store.db.queries.listings import RecordListing

R = TypeVar("R")


def key_of(row: Any) -> Any:
    """A page's item when a list is cut by keys: the row's key."""
    return row[0]


def listing_in(records: RecordListing[Any, Any], connection: Connection, where: Any,
               snapshot: Snapshot | None, order: Order, *, nulls: bool | None = None,
               few: bool | None = None, untimed: bool | None = None) -> Listing:
    """`records`' rows matching `where` in `order`. `nulls` (column orders), `few`
    (MOST_SEEN) and `untimed` (TIME orders): what the store answered, if already asked; else
    asked here."""
    read = (records.keyed(where, snapshot) if records.paged_by_key
            else records.joined_rows(where, snapshot))
    if order in COLUMN_ORDERS:
        return records.sorted_by(connection, order, read if records.paged_by_key
                                 else records.rows(where, snapshot), nulls=nulls)
    if order in TIME_ORDERS and records.time_ordered is not None:
        if untimed is None:
            untimed = records.time_ordered.split(connection)
        return records.time_ordered.listing(order, read, untimed)
    if records.sightings is None:
        seq = None if records.seq_of is None else records.seq_of(where)
        return in_seq_order(order, read, records.table.c.seq if seq is None else seq,
                            listing=records.name)
    if few is None:
        few = (order is Order.MOST_SEEN and where is not None and bool(where.conditions())
               and few_rows(connection, read, records.table.c.seq))
    walk = None  # a sighted listing is never paged by key: its rows are joined_rows
    if order is Order.MOST_SEEN and not few and snapshot is not None:
        walk = records.joined_rows(where, snapshot, bounded=False)
    return sighted_listing(order, read, records.table, snapshot,
                           listing=records.name, few=few, walk_rows=walk)


def shaped_list(records: RecordListing[Any, R], connection: Connection, shaped: Shaped,
                order: Order, first: int | None, after: str | None, last: int | None,
                before: str | None, build: Any) -> Page[R]:
    """A page of now, its statements kept by shape and run with the filter's values and the
    request's: the same statements, asked in the same order, as `listing_in` and `page_of`
    build per request."""
    decided: tuple[Any, ...] = (order,)
    nulls = few = untimed = None
    if order in COLUMN_ORDERS:
        nulls = records.has_nulls(connection, order)
        decided = (order, nulls)
    elif order in TIME_ORDERS and records.time_ordered is not None:
        untimed = records.time_ordered.split(connection)
        decided = (order, untimed)
    elif order is Order.MOST_SEEN and records.sightings is not None:
        few = bool(shaped.params) and few_of(connection.execute(
            records.shapes.get(("few", shaped.key), lambda: few_rows_probe(
                records.keyed(shaped.where) if records.paged_by_key
                else records.joined_rows(shaped.where, None), records.table.c.seq)),
            shaped.params).scalar_one())
        decided = (order, few)
    where = shaped.where
    listing = records.shapes.get(("listing", shaped.key, decided), lambda: listing_in(
        records, connection, where, None, order, nulls=nulls, few=bool(few), untimed=untimed))
    request = PageRequest.of(order, first, after, last, before)
    statements = records.shapes.get(("page", shaped.key, decided, request.shape),
                                    lambda: PageStatements(listing, request))
    if records.paged_by_key:
        return records.by_key(connection, shaped_page(connection, statements, request,
                                                      shaped.params, order, key_of), None,
                              build)
    return shaped_page(connection, statements, request, shaped.params, order, build)


def ranked_page(records: RecordListing[Any, R], connection: Connection, where: Searched,
                snapshot: Snapshot | None, first: int | None, after: str | None,
                last: int | None, before: str | None) -> Page[R]:
    """A page of the search's best matches, best first: the top of the engine's own ranking
    (LIMIT inside its query) joined to the records. Forwards only."""
    if last is not None or before is not None:
        raise QueryError("order: RANK pages forwards only (first/after): a match's rank "
                         "moves as the store grows")
    size = page_size(first)
    # A RANK cursor holds numbers only (key_in checked them): score and seq.
    key = None if after is None else [int(v) for v in key_in(after, Order.RANK, "after")]
    base = where.base
    table = records.table
    conditions = ([] if base is None or not base.conditions() else
                  [table.c.seq.in_(records.filtered(base, snapshot)
                                   .with_only_columns(table.c.seq))])
    ranked = ranked_seqs(text_index(table), where.search, connection.dialect.name,
                         limit=size + 1, after=key, conditions=conditions,
                         through=None if snapshot is None else snapshot.tree_size
                         ).subquery("ranked")
    statement = (records.rows(None, snapshot)
                 .join(ranked, ranked.c.record_seq == table.c.seq)
                 .add_columns(ranked.c.score.label("search_score"))
                 .order_by(ranked.c.score.desc(), table.c.seq))
    rows = connection.execute(statement).all()
    kept = rows[:size]
    return Page(items=[records.record(row) for row in kept],
                cursors=[cursor_for(Order.RANK, (row.search_score, row.seq)) for row in kept],
                has_next_page=len(rows) > size, has_previous_page=key is not None)
