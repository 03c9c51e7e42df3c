"""The orders a list can be read in: sort keys, the parts a sorted list is read from, and the
keyset conditions pages are cut by.

Every order ends with `seq` (unique), so its key is total and a page boundary is one row.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, false, or_

from store.db.queries.errors import QueryError
from store.db.queries.keys import key_value


class Order(enum.Enum):
    """OLDEST_FIRST is append order; MOST_SEEN is by sightings, most first, ties oldest first;
    TIME_ASC and TIME_DESC are by CORE's own time (a turn's timestamp), ties in append order
    (oldest first, newest first), turns without a time last. RANK is a search's: best match
first (bm25 on SQLite, ts_rank on PostgreSQL), ties oldest first; only with `search`."""

    OLDEST_FIRST = "oldest_first"
    NEWEST_FIRST = "newest_first"
    MOST_SEEN = "most_seen"
    TIME_ASC = "time_asc"
    TIME_DESC = "time_desc"
    RANK = "rank"


TIME_ORDERS = (Order.TIME_ASC, Order.TIME_DESC)


@dataclass(frozen=True, slots=True)
class SortKey:
    column: ColumnElement[Any]
    descending: bool = False
    constant: bool = False  # the same for every row of its part: never sorted on

    def ordering(self, reverse: bool) -> ColumnElement[Any]:
        return self.column.asc() if self.descending == reverse else self.column.desc()

    def beyond(self, value: int, reverse: bool) -> ColumnElement[bool]:
        """Strictly later than `value` in this order (earlier with `reverse`)."""
        if self.descending == reverse:
            return self.column > key_value(value)
        return self.column < key_value(value)


@dataclass(frozen=True, slots=True)
class Part:
    """Rows of a list that one statement sorts by `keys`."""

    statement: Select[Any]
    keys: list[SortKey]
    # Its keys lead an index, in order: past a cursor is read as one index range per key
    # (past_arms) rather than one OR that a database scans from the start of the index.
    seek: bool = False


@dataclass(frozen=True, slots=True)
class Listing:
    """A sorted list, read from its parts in turn: every row of a part sorts before every row
    of the next. `lookup` holds every row with its key computed row by row: it finds one row
    by its key cheaply."""

    parts: list[Part]
    lookup: Part


def in_seq_order(order: Order, statement: Select[Any], seq: ColumnElement[int], *,
                 listing: str) -> Listing:
    """`statement`'s rows by seq; MOST_SEEN is refused: `listing` has no sightings, and the
    TIME orders: it has no CORE time."""
    if order is Order.MOST_SEEN:
        raise QueryError(f"order: MOST_SEEN orders records by their sightings, which {listing} "
                         "do not have; use OLDEST_FIRST or NEWEST_FIRST")
    if order is Order.RANK:
        raise QueryError(f"order: RANK orders a search's matches by how well they match: give "
                         f"{listing} a `search`, or use OLDEST_FIRST or NEWEST_FIRST")
    if order in TIME_ORDERS:
        raise QueryError(f"order: {order.name} orders turns by CORE's own time, which "
                         f"{listing} do not have; use OLDEST_FIRST or NEWEST_FIRST")
    part = Part(statement, [SortKey(seq, descending=order is Order.NEWEST_FIRST)])
    return Listing([part], lookup=part)


def past_arms(keys: Sequence[SortKey], values: Sequence[int], *, reverse: bool = False
              ) -> list[ColumnElement[bool]]:
    """The rows past the row keyed `values` as disjoint ranges: for keys (a, b), a beyond
    a0; a equal to a0 and b beyond b0."""
    arms: list[ColumnElement[bool]] = []
    for index, key in enumerate(keys):
        equal = [keys[j].column == key_value(values[j]) for j in range(index)]
        arms.append(and_(*equal, key.beyond(values[index], reverse)))
    return arms


def past(keys: Sequence[SortKey], values: Sequence[int], *, reverse: bool = False
         ) -> ColumnElement[bool]:
    """Rows strictly after the row keyed `values` in the order (before it, with `reverse`):
    for keys (a, b), a beyond a0, or a equal to a0 and b beyond b0."""
    return or_(false(), *past_arms(keys, values, reverse=reverse))


def at(keys: Sequence[SortKey], values: Sequence[int]) -> ColumnElement[bool]:
    """The row keyed exactly `values`."""
    return and_(*(key.column == key_value(value)
                  for key, value in zip(keys, values, strict=True)))
