"""Keyset pages of a sorted list, forwards (first/after) or backwards (last/before)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
from store.db.queries.statement_shapes import (
    LIMIT,
    Shapes,
    Slot,
    key_params,
    key_slots,
    limit_slot,
)

__all__ = ["DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "PageArgs", "PageRequest", "PageStatements",
           "count_rows", "counting", "decode_cursor", "encode_cursor", "page_of", "page_size",
           "seq_page", "shaped_page"]

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


def _window(part: Part, after: Sequence[Any] | None, before: Sequence[Any] | None,
            backwards: bool, limit: Any) -> Select[Any]:
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


def _rows_statement(listing: Listing, after: Sequence[Any] | None,
                    before: Sequence[Any] | None, backwards: bool, limit: Any
                    ) -> Select[Any]:
    """The statement of the page's rows (one past the page, if there is one): cursor keys
    and limit as values, or as slots (statement_shapes.py)."""
    parts = listing.parts[::-1] if backwards else listing.parts
    if len(parts) == 1:
        return _window(parts[0], after, before, backwards, limit)
    # One statement: the parts' windows in turn (a part number orders them).
    arms = [select(_window(part, after, before, backwards, limit)
                   .add_columns(literal(number).label(_PART)).subquery())
            for number, part in enumerate(parts)]
    union = union_all(*arms).subquery()
    return select(union).order_by(
        union.c[_PART], *(SortKey(union.c[_sort_label(i)], descending).ordering(backwards)
                          for i, descending in enumerate(_directions(listing)))
    ).limit(limit)


def _directions(listing: Listing) -> list[bool]:
    """Each sort key's direction, from a part that sorts on it: a key constant in its part
    (a column order's blank for its nulls) says nothing of the direction, so the merged
    parts must not take it from there (backwards, the nulls' part comes first)."""
    return [next((part.keys[i].descending for part in listing.parts
                  if not part.keys[i].constant), False)
            for i in range(len(listing.parts[0].keys))]


def _reaching(listing: Listing, key: Sequence[Any], *, reverse: bool) -> list[Select[Any]]:
    """Statements, each finding a row when the list has the row keyed `key` or one past it
    (before it, with `reverse`): first the row itself, one index lookup, as it is when the
    cursor came from this list; then each part's rows past it."""
    lookup = listing.lookup
    return [lookup.statement.where(at(lookup.keys, key)).limit(1),
            *(part.statement.where(past(part.keys, key, reverse=reverse)).limit(1)
              for part in listing.parts)]


def _any_row(connection: Connection, statements: Sequence[Select[Any]],
             params: dict[str, Any] | None = None) -> bool:
    return any(connection.execute(statement, params).first() is not None
               for statement in statements)


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


def _within_log(size: int, key: Key | None, argument: str) -> None:
    """Every key ends with a row's seq: one past the log's newest row (`size`) was never
    handed out (a forged cursor would page nothing, silently)."""
    if key is not None and isinstance(key[-1], int) and key[-1] > size:
        raise CursorError(f"{argument}: the cursor points at seq {key[-1]}, past the log's "
                          f"newest row (seq {size}): not a cursor this store handed out")


@dataclass(frozen=True, slots=True)
class PageRequest:
    """What a request asks of a list: the page's size, its cursors' keys, its direction."""

    size: int
    after: Key | None
    before: Key | None
    backwards: bool

    @classmethod
    def of(cls, order: Order, first: int | None = None, after: str | None = None,
           last: int | None = None, before: str | None = None) -> PageRequest:
        """The request's page size and cursors, checked (PageSizeError, CursorError)."""
        size = page_size(first, last)
        return cls(size, None if after is None else key_in(after, order, "after"),
                   None if before is None else key_in(before, order, "before"),
                   last is not None)

    @property
    def shape(self) -> tuple[Any, ...]:
        """What a statement of its page depends on: its direction, and which cursors it has
        (a cursor's values are of its list's keys' kinds, `check` refuses any other)."""
        return (self.backwards, self.after is not None, self.before is not None)

    def params(self) -> dict[str, Any]:
        """Its values as the parameters of a page statement built with slots."""
        return {**key_params("after", self.after), **key_params("before", self.before),
                LIMIT: self.size + 1}

    def check(self, connection: Connection, listing: Listing) -> None:
        """Each cursor's values are of its list's keys' kinds, and within the log."""
        _fits(listing, self.after, "after")
        _fits(listing, self.before, "before")
        if self.after is not None or self.before is not None:
            size = latest_head(connection).size  # one read for both cursors
            _within_log(size, self.after, "after")
            _within_log(size, self.before, "before")


class PageStatements:
    """A list's page statements for one shape (statement_shapes.py): its rows, and whether
    rows lie past each cursor (built on first use), all with the request's values in slots."""

    def __init__(self, listing: Listing, request: PageRequest) -> None:
        self.listing = listing
        # Each slot of a key is typed by its column, as `_fits` checks a cursor's values.
        texts = [isinstance(key.column.type, String) for key in listing.parts[0].keys]
        self._keys = {"after": key_slots("after", None if request.after is None else texts),
                      "before": key_slots("before", None if request.before is None else texts)}
        self.rows = _rows_statement(listing, self._keys["after"], self._keys["before"],
                                    request.backwards, limit_slot())
        self._reaching: dict[bool, list[Select[Any]]] = {}

    def reaches(self, connection: Connection, params: dict[str, Any], *,
                reverse: bool) -> bool:
        """`_reaching` of the cursor (before; after, with `reverse`), run with `params`."""
        statements = self._reaching.get(reverse)
        if statements is None:
            key = self._keys["after" if reverse else "before"]
            assert key is not None, "a page without that cursor asks nothing past it"
            statements = self._reaching.setdefault(reverse,
                                                   _reaching(self.listing, key, reverse=reverse))
        return _any_row(connection, statements, params)


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
    request = PageRequest.of(order, first, after, last, before)
    request.check(connection, listing)
    columns, rows = _rows(connection, _rows_statement(
        listing, request.after, request.before, request.backwards, request.size + 1))

    def reaches(key: Key, reverse: bool) -> bool:
        return _any_row(connection, _reaching(listing, key, reverse=reverse))

    return _page(listing, order, build, request, columns, rows, reaches)


def shaped_page(connection: Connection, statements: PageStatements, request: PageRequest,
                params: dict[str, Any], order: Order, build: Callable[[Any], T]) -> Page[T]:
    """`page_of`, its statements built for the request's shape and run with `params` (the
    filter's) and the request's own values."""
    request.check(connection, statements.listing)
    values = {**params, **request.params()}
    columns, rows = _rows(connection, statements.rows, values)

    def reaches(_key: Key, reverse: bool) -> bool:
        return statements.reaches(connection, values, reverse=reverse)

    return _page(statements.listing, order, build, request, columns, rows, reaches)


def _rows(connection: Connection, statement: Select[Any], params: dict[str, Any] | None = None
          ) -> tuple[tuple[str, ...], Sequence[Any]]:
    """The page's rows (one past the page, if there is one) and their columns' names."""
    result = connection.execute(statement, params)
    return tuple(result.keys()), result.all()


def _page(listing: Listing, order: Order, build: Callable[[Any], T], request: PageRequest,
          columns: tuple[str, ...], rows: Sequence[Any],
          reaches: Callable[[Key, bool], bool]) -> Page[T]:
    size, backwards = request.size, request.backwards
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
            request.before is not None and reaches(request.before, False)),
        has_previous_page=(more and backwards) or (
            request.after is not None and reaches(request.after, True)),
    )


def counting(statement: Select[Any]) -> Select[Any]:
    """The statement counting `statement`'s rows."""
    return select(func.count()).select_from(statement.subquery())


def count_rows(connection: Connection, statement: Select[Any]) -> int:
    return int(connection.execute(counting(statement)).scalar_one())


class PageArgs(TypedDict, total=False):
    """A list's keyword arguments after first and after: backwards pages, order, as-of."""

    last: int | None
    before: str | None
    order: Order
    as_of: int | None


# One record's lists of now (a residual's sightings, its turns): their statements by shape.
_RECORD_PAGES: Shapes[tuple[Listing, dict[tuple[Any, ...], PageStatements]]] = Shapes()
RECORD_KEY = Slot("record_key")  # the record's key, a parameter of its lists' statements


def record_seq_page(connection: Connection, rows: Callable[[Any, Snapshot | None], Select[Any]],
                    key: str, seq: Any, build: Callable[[Any], T], listing: str,
                    first: int | None = None, after: str | None = None,
                    **page: Unpack[PageArgs]) -> Page[T]:
    """`seq_page` of `rows(key, snapshot)`, one record's rows; of now, its statements are
    kept by shape (statement_shapes.py) and run with the key as RECORD_KEY. `rows` must
    compare the key only as `equals` does (no row for a key no column can hold: such a key,
    and a read as of a tree head, build their statements per request, as seq_page does)."""
    from store.db.queries.filters import storable  # filters imports this module

    if page.get("as_of") is not None or not storable(key):
        return seq_page(connection, lambda snapshot: rows(key, snapshot), seq, build, listing,
                        first, after, **page)
    order = page.get("order", Order.OLDEST_FIRST)
    listed, shaped = _RECORD_PAGES.get((rows, order), lambda: (in_seq_order(
        order, rows(RECORD_KEY.bind(), None), seq, listing=listing), {}))
    request = PageRequest.of(order, first, after, page.get("last"), page.get("before"))
    statements = shaped.get(request.shape)
    if statements is None:  # a few shapes a list: first or last, each cursor given or not
        statements = shaped.setdefault(request.shape, PageStatements(listed, request))
    return shaped_page(connection, statements, request, {RECORD_KEY.name: key}, order, build)


def seq_page(connection: Connection, rows: Callable[[Snapshot | None], Select[Any]],
             seq: Any, build: Callable[[Any], T], listing: str, first: int | None = None,
             after: str | None = None, **page: Unpack[PageArgs]) -> Page[T]:
    """A page of `rows` (as of `page["as_of"]`, None: now) in seq order (not MOST_SEEN:
    `listing` names them in the refusal)."""
    order = page.get("order", Order.OLDEST_FIRST)
    statement = rows(snapshot_at(connection, page.get("as_of")))
    return page_of(connection, in_seq_order(order, statement, seq, listing=listing), order,
                   build, first, after, page.get("last"), page.get("before"))
