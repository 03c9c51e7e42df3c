"""Residuals: counts and facets (both sum the tallies; a filter of residual ids, which the
tallies do not hold, counts the rows)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    func,
    select,
)

from store.db.queries.as_of import Snapshot, held
from store.db.queries.facets import grouped_facets, range_facets
from store.db.queries.filters import ResidualFilter
from store.db.queries.records import ResidualFacets
from store.db.schema.tables import TALLY_DIMENSIONS
from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import residual_occurrences as occurrences_t
from store.db.schema.tables import residual_tallies as tallies_t


def _tallies(where: ResidualFilter | None, snapshot: Snapshot | None) -> Select[Any]:
    return select(tallies_t).where(
        *(where.conditions(tallies_t) if where else []),
        *([] if snapshot is None else [snapshot.covers(tallies_t.c.batch_id)]))


def residuals_from_tallies(connection: Connection, where: ResidualFilter | None,
                           snapshot: Snapshot | None) -> int:
    """Matching residuals, summed from the tallies (every filter field but the ids is a tally
    column); with ids, counted (at most MAX_IDS rows)."""
    if where is not None and where.has_ids():
        return int(connection.execute(select(func.count()).select_from(residuals_t).where(
            *where.conditions(), *held(snapshot, residuals_t))).scalar_one())
    tallies = _tallies(where, snapshot).subquery("tallies")
    # int(): PostgreSQL's sum() of integers is bigint or numeric.
    return int(connection.execute(
        select(func.coalesce(func.sum(tallies.c.residuals), 0))).scalar_one())


def residual_facets_of(connection: Connection, rows: Select[Any],
                       where: ResidualFilter | None, snapshot: Snapshot | None
                       ) -> ResidualFacets:
    """Counts per kind, axis, organ, family and code over the filtered residuals: sums of the
    batches' tallies, so the cost follows the number of batches, not of residuals. With a
    batch range, `occurrences` are the sightings recorded in those batches (with ids, the
    same counts from the rows)."""
    if where is not None and where.has_ids():
        total, occurrences, lists = range_facets(
            connection, residuals_t, "residual_id", occurrences_t, where, snapshot,
            TALLY_DIMENSIONS)
        return ResidualFacets(total, occurrences, *lists)
    tallies = _tallies(where, snapshot)
    total, occurrences, lists = grouped_facets(
        connection, tallies, {name: tallies_t.c[name] for name in TALLY_DIMENSIONS},
        func.sum(tallies_t.c.residuals), func.sum(tallies_t.c.occurrences))
    return ResidualFacets(total, occurrences, *lists)
