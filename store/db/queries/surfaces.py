"""Teaching-surface provenance records: the row builder, facets, and the turns that emitted
one surface."""

from __future__ import annotations

from typing import Any, Unpack

import orjson
from sqlalchemy import (
    Connection,
    Select,
    func,
    select,
)

from store.db.queries.as_of import Snapshot, held
from store.db.queries.batches import BATCH_COLUMNS, batch_of
from store.db.queries.facets import grouped_facets
from store.db.queries.filters import SurfaceFilter, equals
from store.db.queries.pages import PageArgs, seq_page
from store.db.queries.records import Page, StoredSurface, SurfaceFacets, SurfaceOccurrence
from store.db.schema.tables import ingest_batches as batches_t
from store.db.schema.tables import surface_occurrences as sightings_t
from store.model.surface_records import CheckedFile, SurfaceForm, SurfaceVerification
from store.model.teaching_surface import GroundingSource


def _domains(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(orjson.loads(text))


def _checked_against(text: str | None) -> tuple[CheckedFile, ...]:
    return () if text is None else tuple(CheckedFile(**item) for item in orjson.loads(text))


def surface_of(row: Any) -> StoredSurface:
    return StoredSurface(
        surface_id=row.surface_id,
        seq=row.seq,
        batch_id=row.batch_id,
        grounding_source=GroundingSource(row.grounding_source),
        surface=row.surface,
        subject=row.subject,
        intent=row.intent,
        corpus_id=row.corpus_id,
        chain_id=row.chain_id,
        chain_provenance=row.chain_provenance,
        pack_id=row.pack_id,
        pack_version=row.pack_version,
        connective=row.connective,
        object=row.object,
        subject_domains=_domains(row.subject_domains),
        object_domains=_domains(row.object_domains),
        verification=SurfaceVerification(row.verification),
        expected_surface=row.expected_surface,
        occurrence_count=row.occurrence_count,
        surface_form=SurfaceForm(row.surface_form) if row.surface_form else None,
        hops=row.hops,
        hop_chain_ids=_domains(row.hop_chain_ids) or (),
        candidate_chain_ids=_domains(row.candidate_chain_ids) or (),
        surface_prefix=row.surface_prefix,
        checked_against=_checked_against(row.checked_against),
    )


def _surface_occurrence(row: Any) -> SurfaceOccurrence:
    return SurfaceOccurrence(
        occurrence_id=row.occurrence_id,
        seq=row.seq,
        surface_id=row.surface_id,
        session_id=row.session_id,
        turn_id=row.turn_id,
        prompt=row.prompt,
        batch=batch_of(row, "batch_"),
        turn_key=row.turn_key,
    )


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
    (`rows`, with their sightings)."""
    filtered = rows.subquery("filtered")
    names = ("grounding_source", "corpus_id", "intent", "verification")
    total, occurrences, lists = grouped_facets(
        connection, select(filtered), {name: filtered.c[name] for name in names},
        func.count(), func.sum(filtered.c.occurrence_count))
    return SurfaceFacets(total, occurrences, *lists)
