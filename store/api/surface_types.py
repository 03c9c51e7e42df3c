"""GraphQL types for teaching-surface provenance (ADR-0052): surfaces, their turns, facets."""

from __future__ import annotations

from typing import Any

import strawberry

from store.api.facet_types import FacetCount, enum_facets, facet_page_field
from store.api.log_index import LogIndex
from store.api.log_types import inclusion_field
from store.api.record_views import RecordView, fields_of_record
from store.api.types import Batch, sightings_field
from store.db import queries
from store.model.surface_records import CheckedFile


@strawberry.type(description="A file a verification was checked against: a corpus file or a "
                             "pack's lexicon.")
class CheckedAgainst(RecordView):
    kind: str = strawberry.field(description="corpus or pack.")
    id: str = strawberry.field(description="The corpus_id or pack_id.")
    sha256: str = strawberry.field(
        description="sha256 of the corpus file bytes, or the pack's lexicon checksum.")
    version: str | None = strawberry.field(description="The pack's version; null for a corpus.")


@strawberry.type(description="One sighting of a surface: the turn that emitted it.")
class SurfaceOccurrence(RecordView):
    occurrence_id: strawberry.ID
    seq: LogIndex
    session_id: str | None
    turn_id: str | None
    prompt: str | None
    batch: Batch = strawberry.field(description="The ingest that recorded this turn.")
    turn_key: strawberry.ID | None = strawberry.field(
        description="The stored turn (see `turn`), when the sighting was ingested as a turn.")


@fields_of_record(
    queries.StoredSurface, key="surface_id", views={CheckedFile: CheckedAgainst},
    description="A surface CORE emitted with its grounding_source provenance, stored once per "
    "surface_id.",
    fields=("surface_id", "seq", "grounding_source", "surface", "subject", "intent", "corpus_id",
            "chain_id", "chain_provenance", "pack_id", "pack_version", "connective", "object",
            "subject_domains", "object_domains", "verification", "expected_surface",
            "surface_form", "hops", "hop_chain_ids", "candidate_chain_ids", "surface_prefix",
            "checked_against", "occurrence_count"),
    surface="As CORE emitted it, verbatim; only a NONE record may lack one.",
    chain_provenance="The chain's review record, e.g. adr-0052:reviewed:2026-05-18.",
    connective="The corpus key (e.g. is_grounded_in), not its humanised reading.",
    subject_domains="The subject's pack semantic_domains in the re-derived surface, in order; "
    "null without a registered chain.",
    object_domains="The object's, likewise.",
    expected_surface="For MISMATCH: the surface the registered corpora and packs compose.",
    surface_form="The chain template recovered from the surface text; null when not one.",
    hops="The `, which ...` clauses after the root chain (0 for the single form).",
    hop_chain_ids="The hop chains, in order.",
    candidate_chain_ids="Every chain that renders these exact bytes (several when the intent "
    "cannot be told from the text, e.g. light's cause and verification chains).",
    surface_prefix="A known Workbench prefix stripped before matching, verbatim.",
    checked_against="The corpus file and packs this verification was checked against.",
    occurrence_count="How many turns emitted this surface (by asOf, if read as of it).")
class Surface(RecordView):
    """The fields of queries.StoredSurface but batch_id, then its sightings and proof."""

    as_of: strawberry.Private[int | None]  # the tree size it was read as of, for its fields

    occurrences = sightings_field(
        queries.list_surface_occurrences, "surface_id", SurfaceOccurrence, "The turns that "
        "emitted it, in append order unless `order` says NEWEST_FIRST (by asOf, if read as of "
        "it).")

    inclusion_proof = inclusion_field("surface_records", "surface_id")


@fields_of_record(
    queries.SurfaceFacets, views={queries.FacetCount: FacetCount},
    description="Counts over the filtered surfaces; lists by count desc, value.",
    total="Distinct surfaces.", occurrences="The turns that emitted them.")
class SurfaceFacets(RecordView):
    """The fields of queries.SurfaceFacets."""

    _computed = enum_facets("by_grounding_source", "by_verification", "by_form")
    facet_reader: strawberry.Private[tuple[Any, int | None]] = (None, None)  # (filter, asOf)

    facet = facet_page_field("surfaces")
