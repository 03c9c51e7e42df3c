"""Residuals: counts and facets (both sum the tallies; a filter of residual ids, which the
tallies do not hold, counts the rows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import (
    CTE,
    Select,
    func,
    select,
)

from store.db.queries.as_of import Snapshot, held
from store.db.queries.facets import FacetSet, grouped_combos, range_combos
from store.db.queries.filters import ResidualFilter
from store.db.queries.records import ResidualFacets
from store.db.queries.search import Searched, record_tallies
from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import residual_occurrences as occurrences_t
from store.db.schema.tally_tables import TALLY_DIMENSIONS, residual_record_tallies
from store.db.schema.tally_tables import residual_tallies as tallies_t


def _tallies(where: ResidualFilter | None, snapshot: Snapshot | None) -> Select[Any]:
    return select(tallies_t).where(
        *(where.conditions(tallies_t) if where else []),
        *([] if snapshot is None else [snapshot.covers(tallies_t.c.batch_id)]))


def residuals_from_tallies(where: ResidualFilter | None, snapshot: Snapshot | None
                           ) -> Select[Any]:
    """The statement counting matching residuals: summed from the tallies (every filter
    field but the ids is a tally column); with ids, counted (at most MAX_IDS rows)."""
    if where is not None and where.has_ids():
        return select(func.count()).select_from(residuals_t).where(
            *where.conditions(), *held(snapshot, residuals_t))
    # The sum straight off the tallies' rows: a subquery of them all would build a proxy of
    # each of their columns per request, costing more than the statement takes to run.
    # PostgreSQL's sum() of integers is bigint or numeric: the count is read with int().
    return _tallies(where, snapshot).with_only_columns(
        func.coalesce(func.sum(tallies_t.c.residuals), 0))


# Each facet: the filter field it selects -> its column (of the residuals and the tallies).
RESIDUAL_FACETS: Mapping[str, str] = {
    "kind": "residual_kind", "axis": "source_axis", "organ": "candidate_organ",
    "family_id": "family_id", "code": "residual_code"}
assert tuple(RESIDUAL_FACETS.values()) == TALLY_DIMENSIONS  # ResidualFacets' order


def residual_combos(rows: Select[Any], where: ResidualFilter | None,
                    snapshot: Snapshot | None, names: Sequence[str]) -> CTE:
    """The filtered residuals grouped by the facets `names`: sums of the batches' tallies,
    so the cost follows the number of batches, not of residuals. With a batch range,
    sightings are those recorded in its batches (with ids, the same counts from the rows)."""
    columns = {name: RESIDUAL_FACETS[name] for name in names}
    searched = record_tallies(where, snapshot) if isinstance(where, Searched) else None
    if searched is not None:  # a search: its matches' rows of the record tallies, summed
        return _summed_combos(residual_record_tallies, columns, searched)
    if where is not None and where.has_ids():
        return range_combos(residuals_t, "residual_id", occurrences_t, where, snapshot, columns)
    return _summed_combos(tallies_t, columns, _tallies(where, snapshot))


def _summed_combos(rows: Any, columns: Mapping[str, str], statement: Select[Any] | None = None
                   ) -> CTE:
    """`rows` (tallies, or rows shaped as them) grouped by the facet `columns`, each group
    summing their residuals (`n`) and occurrences (`s`)."""
    return grouped_combos(
        select(rows) if statement is None else statement,
        {name: rows.c[column] for name, column in columns.items()},
        func.sum(rows.c.residuals), func.sum(rows.c.occurrences))


# Counts per kind, axis, organ, family and code over the filtered residuals
# (residual_combos).
RESIDUAL_FACET_SET = FacetSet(tuple(RESIDUAL_FACETS), lambda total, sightings, lists:
                              ResidualFacets(total, sightings, *lists))
