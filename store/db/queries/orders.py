"""The orders a list can be read in: sort keys, the parts a sorted list is read from, and the
keyset conditions pages are cut by.

Every order ends with `seq` (unique), so its key is total and a page boundary is one row.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Boolean,
    ColumnElement,
    Connection,
    Integer,
    Select,
    Text,
    and_,
    case,
    false,
    func,
    literal,
    or_,
)

from store.db.queries.byte_order import in_byte_order
from store.db.queries.errors import QueryError
from store.db.queries.keys import key_value
from store.db.queries.statement_shapes import KeySlot


class Order(enum.Enum):
    """OLDEST_FIRST is append order; MOST_SEEN is by sightings, most first, ties oldest first;
    TIME_ASC and TIME_DESC are by CORE's own time (a turn's timestamp), ties in append order
    (oldest first, newest first), turns without a time last. The column orders (<COLUMN>_ASC,
    <COLUMN>_DESC) are by one column of a list (`RecordListing.column_orders` says which),
    ties in append order (oldest first, newest first), records without a value last; texts in
    byte order of their UTF-8 (SQLite's BINARY, PostgreSQL's COLLATE "C": "B" before "a",
    "z" before "é"), false before true. RANK is a search's: best match first (bm25 on SQLite,
    ts_rank on PostgreSQL), ties oldest first; only with `search`."""

    OLDEST_FIRST = "oldest_first"
    NEWEST_FIRST = "newest_first"
    MOST_SEEN = "most_seen"
    TIME_ASC = "time_asc"
    TIME_DESC = "time_desc"
    RANK = "rank"
    ID_ASC = "id_asc"
    ID_DESC = "id_desc"
    KIND_ASC = "kind_asc"
    KIND_DESC = "kind_desc"
    AXIS_ASC = "axis_asc"
    AXIS_DESC = "axis_desc"
    ORGAN_ASC = "organ_asc"
    ORGAN_DESC = "organ_desc"
    CODE_ASC = "code_asc"
    CODE_DESC = "code_desc"
    GROUNDING_SOURCE_ASC = "grounding_source_asc"
    GROUNDING_SOURCE_DESC = "grounding_source_desc"
    VERIFICATION_ASC = "verification_asc"
    VERIFICATION_DESC = "verification_desc"
    CORPUS_ASC = "corpus_asc"
    CORPUS_DESC = "corpus_desc"
    TURN_ID_ASC = "turn_id_asc"
    TURN_ID_DESC = "turn_id_desc"
    EPISTEMIC_STATE_ASC = "epistemic_state_asc"
    EPISTEMIC_STATE_DESC = "epistemic_state_desc"
    CLEARANCE_ASC = "clearance_asc"
    CLEARANCE_DESC = "clearance_desc"
    SURFACE_ID_ASC = "surface_id_asc"
    SURFACE_ID_DESC = "surface_id_desc"
    RUNNABLE_ASC = "runnable_asc"
    RUNNABLE_DESC = "runnable_desc"
    PROBLEM_TEXT_ASC = "problem_text_asc"
    PROBLEM_TEXT_DESC = "problem_text_desc"
    TEXT_ASC = "text_asc"
    TEXT_DESC = "text_desc"
    PROMPT_ASC = "prompt_asc"
    PROMPT_DESC = "prompt_desc"
    SOURCE_ASC = "source_asc"
    SOURCE_DESC = "source_desc"
    RECORD_TYPE_ASC = "record_type_asc"
    RECORD_TYPE_DESC = "record_type_desc"
    NEW_ROWS_ASC = "new_rows_asc"
    NEW_ROWS_DESC = "new_rows_desc"
    PRESENT_ROWS_ASC = "present_rows_asc"
    PRESENT_ROWS_DESC = "present_rows_desc"
    INGESTED_AT_ASC = "ingested_at_asc"
    INGESTED_AT_DESC = "ingested_at_desc"

    @property
    def column(self) -> str | None:
        """The column an order sorts by, as a list names it (CODE), or None."""
        return self.name.rpartition("_")[0] if self in COLUMN_ORDERS else None

    @property
    def descending(self) -> bool:
        return self.name.endswith("_DESC")


TIME_ORDERS = (Order.TIME_ASC, Order.TIME_DESC)
SEQ_ORDERS = (Order.OLDEST_FIRST, Order.NEWEST_FIRST)
COLUMN_ORDERS = tuple(o for o in Order if o.name.endswith(("_ASC", "_DESC"))
                      and o not in TIME_ORDERS)


def column_orders(column: str) -> tuple[Order, Order]:
    """The two orders of one column (CODE): ascending, descending."""
    return Order[f"{column}_ASC"], Order[f"{column}_DESC"]


@dataclass(frozen=True, slots=True)
class SortKey:
    column: ColumnElement[Any]
    descending: bool = False
    constant: bool = False  # the same for every row of its part: never sorted on

    def ordering(self, reverse: bool) -> ColumnElement[Any]:
        return self.column.asc() if self.descending == reverse else self.column.desc()

    def beyond(self, value: int | str | KeySlot, reverse: bool) -> ColumnElement[bool]:
        """Strictly later than `value` in this order (earlier with `reverse`)."""
        if self.descending == reverse:
            return self.column > bound(value, self.column)
        return self.column < bound(value, self.column)


def bound(value: int | str | KeySlot, like: ColumnElement[Any] | None = None
          ) -> ColumnElement[Any]:
    """A cursor's key value as SQL: an integer as a bigint (keys.py), a column's text as
    text, 0 or 1 as false or true when compared with a boolean column (a cursor holds 0 or 1:
    PostgreSQL compares a boolean with no integer). A KeySlot: its parameter, typed so."""
    if isinstance(value, KeySlot):
        return value.bind(like)
    if isinstance(value, str):
        return literal(value, Text())
    if like is not None and isinstance(like.type, Boolean):
        return literal(bool(value), Boolean())
    return key_value(value)


def blank_of(column: ColumnElement[Any]) -> ColumnElement[Any]:
    """What stands for a null of `column` in a key: a value of its type."""
    if isinstance(column.type, Boolean):
        return literal(False, Boolean())
    if isinstance(column.type, Integer):
        return literal(0, Integer())
    return literal("", Text())


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


@dataclass(frozen=True, slots=True)
class TimeOrder:
    """How a listing with CORE time reads its rows in a TIME order: `split` asks the store
    whether some rows have no time (then a second part holds them), per request: that answer
    is part of the order's shape (statement_shapes.py); `listing` builds the parts for it."""

    split: Callable[[Connection], bool]
    listing: Callable[[Order, Select[Any], bool], Listing]


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
    if order in COLUMN_ORDERS:
        raise QueryError(f"order: {order.name} orders by a column {listing} are not sorted "
                         "by; use OLDEST_FIRST or NEWEST_FIRST")
    part = Part(statement, [SortKey(seq, descending=order is Order.NEWEST_FIRST)])
    return Listing([part], lookup=part)


def by_column(order: Order, statement: Select[Any], column: ColumnElement[Any],
              seq: ColumnElement[int], *, nulls: bool) -> Listing:
    """`statement`'s rows by `column` in `order`'s direction, ties by seq in the same
    direction; rows where it is null (`nulls`: some may be) last, in seq order. Each row's
    key is (0, value, seq), or (1, a blank, seq) for a null: one cursor pages both parts, each
    read along the column's (column, seq) index. Texts in byte order (`in_byte_order`)."""
    descending = order.descending
    blank = blank_of(column)
    # Ids (Sha256, lowercase hex of one length) sort alike in every collation: their primary
    # key's index serves them. Texts are compared in byte order.
    collated = isinstance(column.type, Text)
    value = in_byte_order(column) if collated else column
    filled = Part(statement.where(column.is_not(None)) if nulls else statement,
                  [SortKey(literal(0, Integer()), constant=True), SortKey(value, descending),
                   SortKey(seq, descending)], seek=True)
    lookup = Part(statement, [SortKey(case((column.is_(None), 1), else_=0)),
                              SortKey(in_byte_order(func.coalesce(column, blank))
                                      if collated else func.coalesce(column, blank)),
                              SortKey(seq)])
    if not nulls:
        return Listing([filled], lookup)
    empty = Part(statement.where(column.is_(None)),
                 [SortKey(literal(1, Integer()), constant=True), SortKey(blank, constant=True),
                  SortKey(seq, descending)])
    return Listing([filled, empty], lookup)


def past_arms(keys: Sequence[SortKey], values: Sequence[Any], *, reverse: bool = False
              ) -> list[ColumnElement[bool]]:
    """The rows past the row keyed `values` as disjoint ranges: for keys (a, b), a beyond
    a0; a equal to a0 and b beyond b0."""
    arms: list[ColumnElement[bool]] = []
    for index, key in enumerate(keys):
        equal = [keys[j].column == bound(values[j], keys[j].column) for j in range(index)]
        arms.append(and_(*equal, key.beyond(values[index], reverse)))
    return arms


def past(keys: Sequence[SortKey], values: Sequence[Any], *, reverse: bool = False
         ) -> ColumnElement[bool]:
    """Rows strictly after the row keyed `values` in the order (before it, with `reverse`):
    for keys (a, b), a beyond a0, or a equal to a0 and b beyond b0."""
    return or_(false(), *past_arms(keys, values, reverse=reverse))


def at(keys: Sequence[SortKey], values: Sequence[Any]) -> ColumnElement[bool]:
    """The row keyed exactly `values`."""
    return and_(*(key.column == bound(value, key.column)
                  for key, value in zip(keys, values, strict=True)))
