"""GraphQL types for teaching-surface provenance (ADR-0052): surfaces, their turns, facets."""

from __future__ import annotations

from typing import TypeAlias

import strawberry

from store.api.log_types import inclusion_field
from store.api.record_views import RecordView
from store.api.types import (
    Batch,
    FacetCount,
    sightings_field,
)
from store.db import queries
from store.model.surface_records import SurfaceForm, SurfaceVerification
from store.model.teaching_surface import GroundingSource

# The domain enums themselves: GraphQL names (TEACHING), stored values (teaching).
strawberry.enum(
    GroundingSource, name="GroundingSource",
    description="Where a turn's surface was grounded: CORE's closed grounding_source set.",
)
GroundingSourceEnum: TypeAlias = GroundingSource
strawberry.enum(
    SurfaceVerification, name="SurfaceVerification",
    description="How a teaching surface compared with its re-derivation from corpora and packs.",
)
SurfaceVerificationEnum: TypeAlias = SurfaceVerification
strawberry.enum(
    SurfaceForm, name="SurfaceForm",
    description="Which chain template a teaching surface has: single (ADR-0052), composed "
    "(ADR-0062, one hop), transitive (ADR-0083, two or more hops) or cross-pack (ADR-0067).",
)
SurfaceFormEnum: TypeAlias = SurfaceForm


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
    seq: int
    session_id: str | None
    turn_id: str | None
    prompt: str | None
    batch: Batch = strawberry.field(description="The ingest that recorded this turn.")
    turn_key: strawberry.ID | None = strawberry.field(
        description="The stored turn (see `turn`), when the sighting was ingested as a turn.")


@strawberry.type(description="A surface CORE emitted with its grounding_source provenance, "
                             "stored once per surface_id.")
class Surface:
    surface_id: strawberry.ID
    seq: int
    grounding_source: GroundingSourceEnum
    surface: str | None = strawberry.field(
        description="As CORE emitted it, verbatim; only a NONE record may lack one.")
    subject: str | None
    intent: str | None
    corpus_id: str | None
    chain_id: str | None
    chain_provenance: str | None = strawberry.field(
        description="The chain's review record, e.g. adr-0052:reviewed:2026-05-18.")
    pack_id: str | None
    pack_version: str | None
    connective: str | None = strawberry.field(
        description="The corpus key (e.g. is_grounded_in), not its humanised reading.")
    object: str | None
    subject_domains: list[str] | None = strawberry.field(
        description="The subject's pack semantic_domains in the re-derived surface, in order; "
        "null without a registered chain.")
    object_domains: list[str] | None = strawberry.field(
        description="The object's, likewise.")
    verification: SurfaceVerificationEnum
    expected_surface: str | None = strawberry.field(
        description="For MISMATCH: the surface the registered corpora and packs compose.")
    surface_form: SurfaceFormEnum | None = strawberry.field(
        description="The chain template recovered from the surface text; null when not one.")
    hops: int | None = strawberry.field(
        description="The `, which ...` clauses after the root chain (0 for the single form).")
    hop_chain_ids: list[str] = strawberry.field(description="The hop chains, in order.")
    candidate_chain_ids: list[str] = strawberry.field(
        description="Every chain that renders these exact bytes (several when the intent cannot "
        "be told from the text, e.g. light's cause and verification chains).")
    surface_prefix: str | None = strawberry.field(
        description="A known Workbench prefix stripped before matching, verbatim.")
    checked_against: list[CheckedAgainst] = strawberry.field(
        description="The corpus file and packs this verification was checked against.")

    occurrence_count: int = strawberry.field(
        description="How many turns emitted this surface (by asOf, if read as of it).")
    as_of: strawberry.Private[int | None]  # the tree size it was read as of, for its fields

    occurrences = sightings_field(
        queries.list_surface_occurrences, "surface_id", SurfaceOccurrence, "The turns that "
        "emitted it, in append order unless `order` says NEWEST_FIRST (by asOf, if read as of "
        "it).")

    inclusion_proof = inclusion_field("surface_records", "surface_id")

    @classmethod
    def of(cls, stored: queries.StoredSurface, as_of: int | None) -> Surface:
        def domains(values: tuple[str, ...] | None) -> list[str] | None:
            return None if values is None else list(values)

        return cls(
            surface_id=strawberry.ID(stored.surface_id),
            seq=stored.seq,
            grounding_source=stored.grounding_source,
            surface=stored.surface,
            subject=stored.subject,
            intent=stored.intent,
            corpus_id=stored.corpus_id,
            chain_id=stored.chain_id,
            chain_provenance=stored.chain_provenance,
            pack_id=stored.pack_id,
            pack_version=stored.pack_version,
            connective=stored.connective,
            object=stored.object,
            subject_domains=domains(stored.subject_domains),
            object_domains=domains(stored.object_domains),
            verification=stored.verification,
            expected_surface=stored.expected_surface,
            occurrence_count=stored.occurrence_count,
            surface_form=stored.surface_form,
            hops=stored.hops,
            hop_chain_ids=list(stored.hop_chain_ids),
            candidate_chain_ids=list(stored.candidate_chain_ids),
            surface_prefix=stored.surface_prefix,
            checked_against=[CheckedAgainst.of(f) for f in stored.checked_against],
            as_of=as_of,
        )


@strawberry.type(description="Counts over the filtered surfaces; lists by count desc, value.")
class SurfaceFacets(RecordView):
    total: int = strawberry.field(description="Distinct surfaces.")
    occurrences: int = strawberry.field(description="The turns that emitted them.")
    by_grounding_source: list[FacetCount]
    by_corpus: list[FacetCount]
    by_intent: list[FacetCount]
    by_verification: list[FacetCount]
