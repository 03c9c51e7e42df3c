"""Facet counts: per-value totals over pre-grouped combinations, in one statement."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import (
    CTE,
    Connection,
    func,
    literal_column,
    select,
    union_all,
)

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
