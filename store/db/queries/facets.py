"""Facet counts: per-value totals over pre-grouped combinations, in one statement; and one
facet's values a page at a time (`facet_page`), for a facet with more values than a list
shows.

A facet lists its values by count, most first, then by value, a null last. A page of one
facet is cut by the last value's (count, value): its cursor.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    CTE,
    ColumnElement,
    CompoundSelect,
    Connection,
    Select,
    Table,
    and_,
    func,
    literal,
    literal_column,
    or_,
    select,
    union_all,
)

from store.db.queries.as_of import Snapshot, held
from store.db.queries.errors import CursorError
from store.db.queries.filters import ColumnFilter
from store.db.queries.keys import MAX_KEY, key_value
from store.db.queries.pages import page_size
from store.db.queries.records import FacetCount, FacetPage


@dataclass(frozen=True, slots=True)
class FacetSet:
    """A listing's facets counted together: their names (columns of the listing's combos,
    in the order its facets record lists them) and that record, made of (the total, the
    sightings, one list of values per facet)."""

    names: tuple[str, ...]
    counts: Callable[[int, int, list[list[FacetCount]]], Any]


def facet_statement(combos: CTE, column_names: Sequence[str]) -> CompoundSelect[Any]:
    """Per-value counts from `combos`: rows grouped by every facet column at once (a few
    hundred), each with `n` records and `s` sightings. One statement; each facet sums the
    groups. Rows: (the facet's place in `column_names`, value, count, sightings)."""
    return union_all(*(
        select(
            literal_column(str(index)).label("facet"),
            combos.c[name].label("value"),
            func.sum(combos.c.n).label("count"),
            func.sum(combos.c.s).label("occurrences"),
        ).group_by(combos.c[name])
        for index, name in enumerate(column_names)
    )).order_by(
        literal_column("facet"), literal_column("count").desc(),
        literal_column("value").asc().nulls_last(),
    )


def facet_lists(rows: Iterable[Any], facets: int) -> tuple[int, int, list[list[FacetCount]]]:
    """The total, the sightings and each facet's values from `facet_statement`'s rows."""
    lists: list[list[FacetCount]] = [[] for _ in range(facets)]
    for index, value, count, occurrences in rows:
        # int(): PostgreSQL's sum() of counts is numeric.
        lists[index].append(FacetCount(value=value, count=int(count),
                                       occurrences=int(occurrences)))
    # Every filtered row falls in exactly one group of the first facet (a null is a group).
    total = sum(facet.count for facet in lists[0])
    occurrences = sum(facet.occurrences for facet in lists[0])
    return total, occurrences, lists


def facet_counts(
    connection: Connection, combos: CTE, column_names: Sequence[str]
) -> tuple[int, int, list[list[FacetCount]]]:
    """Totals and per-value counts from `combos` (facet_statement), read."""
    return facet_lists(connection.execute(facet_statement(combos, column_names)),
                       len(column_names))


def range_combos(records: Table, key: str, sightings: Table, where: ColumnFilter,
                 snapshot: Snapshot | None, columns: Mapping[str, str]) -> CTE:
    """Combinations over a range, as residual tallies count them: `n` the records the range's
    batches first stored (`where`, range included), `s` the sightings the range's batches
    recorded of records `where` matches without its range (an older record seen again adds
    sightings to its value, not a record). `columns`: each facet's name -> its column of
    `records`."""
    column_names = tuple(columns)
    columns_of = [records.c[column].label(name) for name, column in columns.items()]
    stored = select(*columns_of, literal(1).label("n"), literal(0).label("s")).where(
        *where.conditions(), *held(snapshot, records))
    seen = (select(*columns_of, literal(0).label("n"), literal(1).label("s"))
            .select_from(sightings.join(records, records.c[key] == sightings.c[key]))
            .where(*where.without_range().conditions(),
                   *where.batch_conditions(sightings.c.batch_id), *held(snapshot, sightings)))
    both = union_all(stored, seen).subquery("stored_and_seen")
    grouped = [both.c[name] for name in column_names]
    return (select(*grouped, func.sum(both.c.n).label("n"), func.sum(both.c.s).label("s"))
            .group_by(*grouped).cte("combos"))


def grouped_combos(rows: Select[Any], columns: Mapping[str, ColumnElement[Any]],
                   records: ColumnElement[Any], sightings: ColumnElement[Any]) -> CTE:
    """`rows` grouped by every facet column (named by `columns`' keys), each group counting
    `records` (`n`) and their `sightings` (`s`)."""
    return (
        rows.with_only_columns(*(column.label(name) for name, column in columns.items()),
                               records.label("n"), sightings.label("s"))
        .group_by(*columns.values())
        .cte("combos")
    )


def facet_page(connection: Connection, combos: CTE, name: str, first: int | None = None,
               after: str | None = None) -> FacetPage:
    """The values of the facet `name` (a column of `combos`) past the cursor `after`, the
    first `first` of them (default DEFAULT_PAGE_SIZE, at most MAX_PAGE_SIZE), with how
    many values the facet has in all. One statement (two past its last value)."""
    size = page_size(first)
    value = combos.c[name]
    counts = (select(value.label("value"), func.sum(combos.c.n).label("count"),
                     func.sum(combos.c.s).label("occurrences"),
                     func.count().over().label("value_count"))
              .group_by(value).subquery("facet_values"))
    statement = select(counts)
    if after is not None:
        count, last = facet_key(after)
        statement = statement.where(past_value(counts.c["count"], counts.c.value, count, last))
    rows = connection.execute(statement.order_by(
        counts.c["count"].desc(), counts.c.value.asc().nulls_last()).limit(size + 1)).all()
    if rows:
        value_count = int(rows[0].value_count)
    else:  # past the last value: counted on its own
        value_count = int(connection.execute(
            select(func.count()).select_from(select(value).group_by(value).subquery())
        ).scalar_one())
    # int(): PostgreSQL's sum() of counts is numeric.
    values = [FacetCount(value=row.value, count=int(row._mapping["count"]),
                         occurrences=int(row.occurrences)) for row in rows[:size]]
    more = len(rows) > size
    return FacetPage(field=name, values=values, value_count=value_count, has_more=more,
                     end_cursor=facet_cursor(values[-1]) if values and more else None)


def past_value(count: ColumnElement[Any], value: ColumnElement[Any], last_count: int,
               last_value: str | None) -> ColumnElement[bool]:
    """The values after (last_count, last_value): fewer records, or as many and a later value
    (a null after every value)."""
    fewer = count < key_value(last_count)
    if last_value is None:
        return fewer
    return or_(fewer, and_(count == key_value(last_count),
                           or_(value > last_value, value.is_(None))))


def facet_cursor(last: FacetCount) -> str:
    """The cursor past the facet value `last`: its count and value."""
    text = json.dumps(["facet", last.count, last.value], separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii")


def facet_key(cursor: str) -> tuple[int, str | None]:
    """The (count, value) inside a facet cursor; CursorError for anything else."""
    try:
        tag, count, value = json.loads(base64.b64decode(
            cursor.encode("ascii"), altchars=b"-_", validate=True).decode("utf-8"))
    except (binascii.Error, UnicodeError, ValueError, TypeError):
        raise CursorError("after: malformed facet cursor (use a facet's endCursor)") from None
    if (tag != "facet" or type(count) is not int or not 0 <= count <= MAX_KEY
            or not (value is None or isinstance(value, str))):
        raise CursorError("after: malformed facet cursor (use a facet's endCursor)")
    return count, value
