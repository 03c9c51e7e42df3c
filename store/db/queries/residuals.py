"""Residuals: pages, lookups, counts and facets (facets sum the tallies)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Connection,
    Label,
    Select,
    func,
    select,
)

from store.db.queries.as_of import Snapshot, held, snapshot_at
from store.db.queries.facets import facet_counts
from store.db.queries.filters import ResidualFilter, equals
from store.db.queries.orders import Order
from store.db.queries.pages import page_of
from store.db.queries.records import Page, ResidualFacets, StoredResidual, spans_of
from store.db.queries.sightings import sighted_listing, sightings_count
from store.db.schema.tables import TALLY_DIMENSIONS
from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import residual_occurrences as occurrences_t
from store.db.schema.tables import residual_tallies as tallies_t
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


def _counted(snapshot: Snapshot | None) -> Label[int]:
    return sightings_count(residuals_t, "residual_id", occurrences_t,
                           *held(snapshot, occurrences_t))


def residual_rows(snapshot: Snapshot | None = None) -> Select[Any]:
    """Residuals with their sightings, as of `snapshot` (None: now)."""
    return select(residuals_t, _counted(snapshot)).where(*held(snapshot, residuals_t))


def residual_by_id(connection: Connection, residual_id: str,
                   as_of: int | None = None) -> StoredResidual | None:
    row = connection.execute(
        residual_rows(snapshot_at(connection, as_of))
        .where(equals(residuals_t.c.residual_id, residual_id))
    ).first()
    return None if row is None else residual_of(row)


def list_residuals(
    connection: Connection,
    where: ResidualFilter | None = None,
    first: int | None = None,
    after: str | None = None,
    *,
    last: int | None = None,
    before: str | None = None,
    order: Order = Order.OLDEST_FIRST,
    as_of: int | None = None,
) -> Page[StoredResidual]:
    snapshot = snapshot_at(connection, as_of)
    rows = select(residuals_t).where(*(where.conditions() if where else []),
                                     *held(snapshot, residuals_t))
    listing = sighted_listing(order, rows, residuals_t, "residual_id", occurrences_t, snapshot,
                              listing="residuals")
    return page_of(connection, listing, order, residual_of, first, after, last, before)


def _tallies(connection: Connection, where: ResidualFilter | None,
             as_of: int | None) -> Select[Any]:
    snapshot = snapshot_at(connection, as_of)
    return select(tallies_t).where(
        *(where.conditions(tallies_t) if where else []),
        *([] if snapshot is None else [snapshot.covers(tallies_t.c.batch_id)]))


def count_residuals(connection: Connection, where: ResidualFilter | None = None,
                    as_of: int | None = None) -> int:
    """Matching residuals, summed from the tallies (every filter field is a tally column)."""
    tallies = _tallies(connection, where, as_of).subquery("tallies")
    # int(): PostgreSQL's sum() of integers is bigint or numeric.
    return int(connection.execute(
        select(func.coalesce(func.sum(tallies.c.residuals), 0))).scalar_one())


def residual_facets(connection: Connection, where: ResidualFilter | None = None,
                    as_of: int | None = None) -> ResidualFacets:
    """Counts per kind, axis, organ, family and code over the filtered residuals: sums of the
    batches' tallies, so the cost follows the number of batches, not of residuals. With a
    batch range, `occurrences` are the sightings recorded in those batches."""
    tallies = _tallies(connection, where, as_of).subquery("tallies")
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
