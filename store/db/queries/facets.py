"""Facet counts: per-value totals over pre-grouped combinations, in one statement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import (
    CTE,
    ColumnElement,
    Connection,
    Select,
    Table,
    func,
    literal,
    literal_column,
    select,
    union_all,
)

from store.db.queries.as_of import Snapshot, held
from store.db.queries.filters import ColumnFilter
from store.db.queries.records import FacetCount


def facet_counts(
    connection: Connection, combos: CTE, column_names: Sequence[str]
) -> tuple[int, int, list[list[FacetCount]]]:
    """Totals and per-value counts from `combos`: rows grouped by every facet column at once
    (a few hundred), each with `n` records and `s` sightings. One statement; each facet sums
    the groups.
    """
    facets = union_all(*(
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
    lists: list[list[FacetCount]] = [[] for _ in column_names]
    for index, value, count, occurrences in connection.execute(facets):
        # int(): PostgreSQL's sum() of counts is numeric.
        lists[index].append(FacetCount(value=value, count=int(count),
                                       occurrences=int(occurrences)))
    # Every filtered row falls in exactly one group of the first facet (a null is a group).
    total = sum(facet.count for facet in lists[0])
    occurrences = sum(facet.occurrences for facet in lists[0])
    return total, occurrences, lists


def range_facets(connection: Connection, records: Table, key: str, sightings: Table,
                 where: ColumnFilter, snapshot: Snapshot | None, column_names: Sequence[str]
                 ) -> tuple[int, int, list[list[FacetCount]]]:
    """Facets over a range, as residual tallies count them: `count` the records the range's
    batches first stored (`where`, range included), `occurrences` the sightings the range's
    batches recorded of records `where` matches without its range (an older record seen
    again adds sightings to its value, not a record)."""
    columns = [records.c[name].label(name) for name in column_names]
    stored = select(*columns, literal(1).label("n"), literal(0).label("s")).where(
        *where.conditions(), *held(snapshot, records))
    seen = (select(*columns, literal(0).label("n"), literal(1).label("s"))
            .select_from(sightings.join(records, records.c[key] == sightings.c[key]))
            .where(*where.without_range().conditions(),
                   *where.batch_conditions(sightings.c.batch_id), *held(snapshot, sightings)))
    both = union_all(stored, seen).subquery("stored_and_seen")
    grouped = [both.c[name] for name in column_names]
    combos = (select(*grouped, func.sum(both.c.n).label("n"), func.sum(both.c.s).label("s"))
              .group_by(*grouped).cte("combos"))
    return facet_counts(connection, combos, column_names)


def grouped_facets(connection: Connection, rows: Select[Any],
                   columns: Mapping[str, ColumnElement[Any]], records: ColumnElement[Any],
                   sightings: ColumnElement[Any]) -> tuple[int, int, list[list[FacetCount]]]:
    """`facet_counts` over `rows` grouped by every facet column (named by `columns`' keys),
    each group counting `records` and their `sightings`."""
    combos = (
        rows.with_only_columns(*(column.label(name) for name, column in columns.items()),
                               records.label("n"), sightings.label("s"))
        .group_by(*columns.values())
        .cte("combos")
    )
    return facet_counts(connection, combos, tuple(columns))
