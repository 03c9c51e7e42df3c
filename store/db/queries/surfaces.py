"""Teaching-surface provenance records: facets, and the turns that emitted one surface."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Unpack

from sqlalchemy import (
    CTE,
    Connection,
    Select,
    func,
    select,
)

from store.db.queries.as_of import Snapshot, held
from store.db.queries.batches import BATCH_COLUMNS, BATCH_RECORD
from store.db.queries.facets import FacetSet, grouped_combos, range_combos
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


# Each facet: the filter field it selects -> its column of surface_records. The first ones
# are counted together (SurfaceFacets); chain and subject, which may have many values, a page
# at a time (facet_page).
SURFACE_FACETS: Mapping[str, str] = {
    "grounding_source": "grounding_source", "corpus_id": "corpus_id", "intent": "intent",
    "verification": "verification", "surface_form": "surface_form",
    "chain_id": "chain_id", "subject": "subject", "pack_id": "pack_id",
    "pack_version": "pack_version"}
COUNTED_TOGETHER = ("grounding_source", "corpus_id", "intent", "verification", "surface_form")


def surface_combos(rows: Select[Any], where: SurfaceFilter | None, snapshot: Snapshot | None,
                   names: Sequence[str]) -> CTE:
    """The filtered surfaces (`rows`, with their sightings) grouped by the facets `names`;
    over a range, as residualFacets count (range_combos)."""
    columns = {name: SURFACE_FACETS[name] for name in names}
    if where is not None and where.has_range():
        return range_combos(surfaces_t, "surface_id", sightings_t, where, snapshot, columns)
    filtered = rows.subquery("filtered")
    return grouped_combos(select(filtered), {name: filtered.c[column]
                                             for name, column in columns.items()},
                          func.count(), func.sum(filtered.c.occurrence_count))


# Counts per grounding source, corpus, intent, verification and form over the filtered
# surfaces (surface_combos).
SURFACE_FACET_SET = FacetSet(COUNTED_TOGETHER, lambda total, sightings, lists:
                             SurfaceFacets(total, sightings, *lists))
