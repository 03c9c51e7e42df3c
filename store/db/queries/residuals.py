"""Residuals: pages, lookups, counts and facets (facets sum the tallies)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    func,
    select,
)

from store.db.queries.facets import facet_counts
from store.db.queries.filters import ResidualFilter, equals
from store.db.queries.pages import (
    page_of,
    sightings_count,
)
from store.db.queries.records import Page, ResidualFacets, StoredResidual, spans_of
from store.db.tables import TALLY_DIMENSIONS
from store.db.tables import contract_residuals as residuals_t
from store.db.tables import residual_occurrences as occurrences_t
from store.db.tables import residual_tallies as tallies_t
from store.model.records import ContractResidual
from store.model.taxonomy import (
    ResidualKind,
    ResidualSourceAxis,
)


def residual_of(row: Any) -> StoredResidual:
    return StoredResidual(
        seq=row.seq,
        batch_id=row.batch_id,
        residual=ContractResidual(
            residual_id=row.residual_id,
            candidate_organ=row.candidate_organ,
            family_id=row.family_id,
            residual_kind=ResidualKind(row.residual_kind),
            residual_code=row.residual_code,
            source_axis=ResidualSourceAxis(row.source_axis),
            evidence_spans=spans_of(row.evidence_spans),
            explanation=row.explanation,
        ),
        occurrence_count=row.occurrence_count,
    )




_RESIDUAL_SIGHTINGS = sightings_count(residuals_t, "residual_id", occurrences_t)


def residual_rows() -> Select[Any]:
    return select(residuals_t, _RESIDUAL_SIGHTINGS)


def _residuals_select(where: ResidualFilter | None) -> Select[Any]:
    conditions = where.conditions() if where else []
    return residual_rows().where(*conditions)


def residual_by_id(connection: Connection, residual_id: str) -> StoredResidual | None:
    row = connection.execute(
        residual_rows().where(equals(residuals_t.c.residual_id, residual_id))
    ).first()
    return None if row is None else residual_of(row)


def list_residuals(
    connection: Connection,
    where: ResidualFilter | None = None,
    first: int | None = None,
    after: str | None = None,
) -> Page[StoredResidual]:
    statement = _residuals_select(where)
    return page_of(connection, statement, residuals_t.c.seq, first, after, residual_of)


def count_residuals(connection: Connection, where: ResidualFilter | None = None) -> int:
    """Matching residuals, summed from the tallies (every filter field is a tally column)."""
    tallies = _tallies(where).subquery("tallies")
    # int(): PostgreSQL's sum() of integers is bigint or numeric.
    return int(connection.execute(
        select(func.coalesce(func.sum(tallies.c.residuals), 0))).scalar_one())






def _tallies(where: ResidualFilter | None) -> Select[Any]:
    return select(tallies_t).where(*(where.conditions(tallies_t) if where else []))


def residual_facets(connection: Connection, where: ResidualFilter | None = None) -> ResidualFacets:
    """Counts per kind, axis, organ, family and code over the filtered residuals: sums of the
    batches' tallies, so the cost follows the number of batches, not of residuals."""
    tallies = _tallies(where).subquery("tallies")
    dims = [tallies.c[name] for name in TALLY_DIMENSIONS]
    combos = (
        select(*dims, func.sum(tallies.c.residuals).label("n"),
               func.sum(tallies.c.occurrences).label("s"))
        .group_by(*dims)
        .cte("combos")
    )
    total, occurrences, (by_kind, by_axis, by_organ, by_family, by_code) = facet_counts(
        connection, combos, TALLY_DIMENSIONS)
    return ResidualFacets(
        total=total,
        occurrences=occurrences,
        by_kind=by_kind,
        by_axis=by_axis,
        by_organ=by_organ,
        by_family=by_family,
        by_code=by_code,
    )
