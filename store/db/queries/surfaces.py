"""Teaching-surface provenance records: facets, and the turns that emitted one surface."""

from __future__ import annotations

from typing import Any, Unpack

from sqlalchemy import (
    Connection,
    Select,
    func,
    select,
)

from store.db.queries.as_of import Snapshot, held
from store.db.queries.batches import BATCH_COLUMNS, BATCH_RECORD
from store.db.queries.facets import grouped_facets, range_facets
from store.db.queries.filters import SurfaceFilter, equals
from store.db.queries.pages import PageArgs, seq_page
from store.db.queries.records import Page, SurfaceFacets, SurfaceOccurrence
from store.db.queries.row_records import flat_record
from store.db.schema.tables import ingest_batches as batches_t
from store.db.schema.tables import surface_occurrences as sightings_t
from store.db.schema.tables import surface_records as surfaces_t

_surface_occurrence = flat_record(SurfaceOccurrence, batch=BATCH_RECORD.at("batch_"))


def list_surface_occurrences(connection: Connection, surface_id: str, first: int | None = None,
                             after: str | None = None, **page: Unpack[PageArgs]
                             ) -> Page[SurfaceOccurrence]:
    """The turns that emitted one surface, with the batch that recorded each, in `order`."""

    def rows(snapshot: Snapshot | None) -> Select[Any]:
        return (select(sightings_t, *BATCH_COLUMNS)
                .join(batches_t, batches_t.c.batch_id == sightings_t.c.batch_id)
                .where(equals(sightings_t.c.surface_id, surface_id),
                       *held(snapshot, sightings_t)))

    return seq_page(connection, rows, sightings_t.c.seq, _surface_occurrence,
                    "surface occurrences", first, after, **page)


def surface_facets_of(connection: Connection, rows: Select[Any],
                      where: SurfaceFilter | None, snapshot: Snapshot | None) -> SurfaceFacets:
    """Counts per grounding source, corpus, intent and verification over the filtered surfaces
    (`rows`, with their sightings); over a range, as residualFacets count (range_facets)."""
    names = ("grounding_source", "corpus_id", "intent", "verification")
    if where is not None and where.has_range():
        total, occurrences, lists = range_facets(
            connection, surfaces_t, "surface_id", sightings_t, where, snapshot, names)
        return SurfaceFacets(total, occurrences, *lists)
    filtered = rows.subquery("filtered")
    total, occurrences, lists = grouped_facets(
        connection, select(filtered), {name: filtered.c[name] for name in names},
        func.count(), func.sum(filtered.c.occurrence_count))
    return SurfaceFacets(total, occurrences, *lists)
