"""Keyset pages of a sorted list, forwards (first/after) or backwards (last/before)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypedDict, Unpack

from sqlalchemy import (
    Boolean,
    Connection,
    Select,
    func,
    literal,
    select,
    union_all,
)
from sqlalchemy.types import String

from store.db.log.stored_log import latest_head
from store.db.queries.as_of import Snapshot, snapshot_at
from store.db.queries.cursors import (
    cursors_of,
    decode_cursor,
    encode_cursor,
    key_in,
    malformed,
)
from store.db.queries.errors import CursorError, PageSizeError, PageSizeLimit
from store.db.queries.orders import (
    Listing,
    Order,
    Part,
    SortKey,
    at,
    in_seq_order,
    past,
    past_arms,
)
from store.db.queries.records import Page, T

__all__ = ["DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "PageArgs", "count_rows", "decode_cursor",
           "encode_cursor", "page_of", "page_size", "seq_page"]

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
_PART = "page_part"
Key = Sequence[int | str]  # a row's sort key: integers, and a column order's value


def page_size(first: int | None, last: int | None = None) -> int:
    if first is not None and last is not None:
        raise PageSizeError("first and last: give one of them, not both (first pages forwards "
                            "from `after`, last backwards from `before`)")
    argument, size = ("first", first) if last is None else ("last", last)
    if size is None:
        return DEFAULT_PAGE_SIZE
    if size > MAX_PAGE_SIZE:
        raise PageSizeLimit(f"{argument}: must be between 0 and {MAX_PAGE_SIZE}, got {size}")
    if size < 0:
        raise PageSizeError(f"{argument}: must be between 0 and {MAX_PAGE_SIZE}, got {size}")
    return size


def _sort_label(index: int) -> str:
    return f"page_sort_{index}"


def _window(part: Part, after: Key | None, before: Key | None,
            backwards: bool, limit: int) -> Select[Any]:
    """The part's rows between the cursors, nearest first, with their keys labelled."""
    statement = part.statement.add_columns(
        *(key.column.label(_sort_label(i)) for i, key in enumerate(part.keys)))
    start, stop = (before, after) if backwards else (after, before)
    if stop is not None:
        statement = statement.where(past(part.keys, stop, reverse=not backwards))
    ordering = [key.ordering(backwards) for key in part.keys if not key.constant]
    if start is None or not part.seek:
        if start is not None:
            statement = statement.where(past(part.keys, start, reverse=backwards))
        return statement.order_by(*ordering).limit(limit)
    # One index range per arm, each read from its start for `limit` rows, then merged.
    arms = union_all(*(select(statement.where(arm).order_by(*ordering).limit(limit).subquery())
                       for arm in past_arms(part.keys, start, reverse=backwards))).subquery()
    return select(arms).order_by(*(
        SortKey(arms.c[_sort_label(i)], key.descending).ordering(backwards)
        for i, key in enumerate(part.keys) if not key.constant)).limit(limit)


def _rows(connection: Connection, listing: Listing, after: Key | None,
          before: Key | None, backwards: bool, limit: int
          ) -> tuple[tuple[str, ...], Sequence[Any]]:
    """The page's rows (one past the page, if there is one) and their columns' names."""
    parts = listing.parts[::-1] if backwards else listing.parts
    if len(parts) == 1:
        result = connection.execute(_window(parts[0], after, before, backwards, limit))
        return tuple(result.keys()), result.all()
    # One statement: the parts' windows in turn (a part number orders them).
    arms = [select(_window(part, after, before, backwards, limit)
                   .add_columns(literal(number).label(_PART)).subquery())
            for number, part in enumerate(parts)]
    union = union_all(*arms).subquery()
    result = connection.execute(select(union).order_by(
        union.c[_PART], *(SortKey(union.c[_sort_label(i)], descending).ordering(backwards)
                          for i, descending in enumerate(_directions(listing)))
    ).limit(limit))
    return tuple(result.keys()), result.all()


def _directions(listing: Listing) -> list[bool]:
    """Each sort key's direction, from a part that sorts on it: a key constant in its part
    (a column order's blank for its nulls) says nothing of the direction, so the merged
    parts must not take it from there (backwards, the nulls' part comes first)."""
    return [next((part.keys[i].descending for part in listing.parts
                  if not part.keys[i].constant), False)
            for i in range(len(listing.parts[0].keys))]


def _exists(connection: Connection, statement: Select[Any]) -> bool:
    return connection.execute(statement.limit(1)).first() is not None


def _reaches(connection: Connection, listing: Listing, key: Key, *,
             reverse: bool) -> bool:
    """Whether the list has the row keyed `key` or one past it (before it, with `reverse`):
    first the row itself, one index lookup, as it is when the cursor came from this list."""
    lookup = listing.lookup
    return (_exists(connection, lookup.statement.where(at(lookup.keys, key)))
            or any(_exists(connection, part.statement.where(past(part.keys, key,
                                                                  reverse=reverse)))
                   for part in listing.parts))


def _fits(listing: Listing, key: Key | None, argument: str) -> None:
    """Each value of a column order's cursor is of its column's kind: a text for a text, a
    number for a number, 0 or 1 for a boolean. A forged one (["turn_id_asc",0,"x",1]) would
    otherwise reach PostgreSQL as a comparison it refuses (integer > text)."""
    if key is None:
        return
    for sort_key, value in zip(listing.parts[0].keys, key, strict=False):
        kind = sort_key.column.type
        wanted = (str if isinstance(kind, String) else int)
        if type(value) is not wanted or (isinstance(kind, Boolean) and value not in (0, 1)):
            raise malformed(argument)


def _within_log(connection: Connection, key: Key | None, argument: str) -> None:
    """Every key ends with a row's seq: one past the log's newest row was never handed out
    (a forged cursor would page nothing, silently)."""
    if key is None:
        return
    size = latest_head(connection).size
    if isinstance(key[-1], int) and key[-1] > size:
        raise CursorError(f"{argument}: the cursor points at seq {key[-1]}, past the log's "
                          f"newest row (seq {size}): not a cursor this store handed out")


def page_of(
    connection: Connection,
    listing: Listing,
    order: Order,
    build: Callable[[Any], T],
    first: int | None = None,
    after: str | None = None,
    last: int | None = None,
    before: str | None = None,
) -> Page[T]:
    """The rows of `listing` (sorted in `order`) past `after` and before `before`: the first
    `first` of them, or the last `last`. One extra row says whether more follow; a cursor
    given says whether rows lie on its other side."""
    size = page_size(first, last)
    after_key = None if after is None else key_in(after, order, "after")
    before_key = None if before is None else key_in(before, order, "before")
    _fits(listing, after_key, "after")
    _fits(listing, before_key, "before")
    _within_log(connection, after_key, "after")
    _within_log(connection, before_key, "before")
    backwards = last is not None
    columns, rows = _rows(connection, listing, after_key, before_key, backwards, size + 1)
    more = len(rows) > size
    kept = list(rows[:size])
    if backwards:
        kept.reverse()
    # Read by place, not by name: a row's _mapping costs more than the rest of its reading.
    places = [columns.index(_sort_label(i)) for i in range(len(listing.parts[0].keys))]
    by_position = getattr(build, "by_position", None)  # a RowRecord, or a row builder like it
    make = build if by_position is None else by_position(columns)
    return Page(
        items=[make(row) for row in kept],
        cursors=cursors_of(order, kept, places),
        has_next_page=(more and not backwards) or (
            before_key is not None and _reaches(connection, listing, before_key,
                                                reverse=False)),
        has_previous_page=(more and backwards) or (
            after_key is not None and _reaches(connection, listing, after_key, reverse=True)),
    )


def count_rows(connection: Connection, statement: Select[Any]) -> int:
    return connection.execute(
        select(func.count()).select_from(statement.subquery())
    ).scalar_one()


class PageArgs(TypedDict, total=False):
    """A list's keyword arguments after first and after: backwards pages, order, as-of."""

    last: int | None
    before: str | None
    order: Order
    as_of: int | None


def seq_page(connection: Connection, rows: Callable[[Snapshot | None], Select[Any]],
             seq: Any, build: Callable[[Any], T], listing: str, first: int | None = None,
             after: str | None = None, **page: Unpack[PageArgs]) -> Page[T]:
    """A page of `rows` (as of `page["as_of"]`, None: now) in seq order (not MOST_SEEN:
    `listing` names them in the refusal)."""
    order = page.get("order", Order.OLDEST_FIRST)
    statement = rows(snapshot_at(connection, page.get("as_of")))
    return page_of(connection, in_seq_order(order, statement, seq, listing=listing), order,
                   build, first, after, page.get("last"), page.get("before"))
