"""The listing declarations: how each listed record kind is read, declared once as a
`RecordListing` (listings.py).

Each kind's row record (how a row becomes its record), its listing (table, filter,
sightings, joined records, facets, sortable columns, GraphQL names) and the names callers
knew before listings were declared. `LISTINGS` holds them in the order the API serves them;
the GraphQL resolvers (`store.api.listing_fields`), the CLI's `export` and `prove`, and the
console read it; `check_listings` fails a declaration that disagrees with its record kind
when the module loads. Adding a kind: docs/design.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Unpack

from sqlalchemy import Connection

from store.db.queries.batches import BATCH_RECORD
from store.db.queries.filters import (
    AssessmentFilter,
    ResidualFilter,
    SurfaceFilter,
    TurnFilter,
)
from store.db.queries.journals import IN_TIME_ORDER
from store.db.queries.listings import Filter, Joined, RecordListing
from store.db.queries.pages import PageArgs
from store.db.queries.records import (
    Batch,
    Page,
    ProposalCandidate,
    ResidualFacets,
    StoredAssessment,
    StoredResidual,
    StoredSurface,
    StoredTurn,
    SurfaceFacets,
    TurnFacets,
    TurnFields,
)
from store.db.queries.residuals import (
    RESIDUAL_FACET_SET,
    RESIDUAL_FACETS,
    residual_combos,
    residuals_from_tallies,
)
from store.db.queries.row_records import (
    flat_record,
    json_records,
    json_tuple,
    json_tuple_or_null,
    optional,
)
from store.db.queries.surfaces import SURFACE_FACET_SET, SURFACE_FACETS, surface_combos
from store.db.queries.turns import (
    TURN_FACET_SET,
    TURN_FACETS,
    counted_on_fields,
    journal_seq,
    read_by_seq,
    turn_combos,
)
from store.db.schema.record_kinds import KINDS_BY_TABLE, RecordKind
from store.db.schema.tables import contract_assessments as assessments_t
from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import ingest_batches as batches_t
from store.db.schema.tables import residual_occurrences as occurrences_t
from store.db.schema.tables import surface_occurrences as surface_sightings_t
from store.db.schema.tables import surface_records as surfaces_t
from store.db.schema.tables import turn_fields as turn_fields_t
from store.db.schema.tables import turns as turns_t
from store.model.records import ContractAssessment, ContractResidual, SourceSpan
from store.model.surface_records import CheckedFile, SurfaceForm, SurfaceVerification
from store.model.taxonomy import ResidualKind, ResidualSourceAxis
from store.model.teaching_surface import GroundingSource

# How each kind's records are read off its rows (row_records.py): by column name, with the
# columns not stored as the record holds them converted, and the records nested in it.
RESIDUAL_RECORD = flat_record(StoredResidual, residual=flat_record(
    ContractResidual, residual_kind=ResidualKind, source_axis=ResidualSourceAxis,
    evidence_spans=json_records(SourceSpan)))
SURFACE_RECORD = flat_record(
    StoredSurface, grounding_source=GroundingSource, verification=SurfaceVerification,
    subject_domains=json_tuple_or_null, object_domains=json_tuple_or_null,
    surface_form=optional(SurfaceForm, blank_is_null=True), hop_chain_ids=json_tuple,
    candidate_chain_ids=json_tuple, checked_against=json_records(CheckedFile))
TURN_FIELDS_RECORD = flat_record(
    TurnFields, checkpoint_emitted=optional(bool),
    proposal_candidates=optional(json_records(ProposalCandidate)))
TURN_RECORD = flat_record(
    StoredTurn, grounding_source=GroundingSource, refusal_emitted=optional(bool),
    hedge_injected=optional(bool), surface=SURFACE_RECORD.at("surface_"),
    fields=TURN_FIELDS_RECORD.at("fields_"))
ASSESSMENT_RECORD = flat_record(StoredAssessment, assessment=flat_record(
    ContractAssessment, missing_bindings=json_tuple, unresolved_hazards=json_tuple,
    runnable=bool, evidence_spans=json_records(SourceSpan)), batch=BATCH_RECORD.at("batch_"))

RESIDUALS: RecordListing[ResidualFilter, StoredResidual] = RecordListing(
    "residuals", residuals_t, RESIDUAL_RECORD, ResidualFilter, one="residual",
    api_type="Residual", sightings=occurrences_t, counter=residuals_from_tallies,
    facets=RESIDUAL_FACET_SET, facets_type="ResidualFacets", sightings_exported="occurrences",
    facet_fields=tuple(RESIDUAL_FACETS), combos=residual_combos,
    column_orders=(("ID", residuals_t.c.residual_id), ("KIND", residuals_t.c.residual_kind),
                   ("AXIS", residuals_t.c.source_axis),
                   ("ORGAN", residuals_t.c.candidate_organ),
                   ("CODE", residuals_t.c.residual_code)),
    list_help="Residuals, in `order`.",
    filter_help="A residual's batch is the one that first stored it; with a range, "
                "residualFacets' occurrences are the sightings recorded in the batches of the "
                "range.",
    one_help="One residual by its residual_id (64 hex digits).",
    facets_help="Counts by kind, axis, organ, family and code, filtered.")
SURFACES: RecordListing[SurfaceFilter, StoredSurface] = RecordListing(
    "surfaces", surfaces_t, SURFACE_RECORD, SurfaceFilter, one="surface", api_type="Surface",
    sightings=surface_sightings_t, facets=SURFACE_FACET_SET, facets_type="SurfaceFacets",
    facet_fields=tuple(SURFACE_FACETS), combos=surface_combos,
    column_orders=(("ID", surfaces_t.c.surface_id),
                   ("GROUNDING_SOURCE", surfaces_t.c.grounding_source),
                   ("VERIFICATION", surfaces_t.c.verification),
                   ("CORPUS", surfaces_t.c.corpus_id), ("TEXT", surfaces_t.c.surface)),
    sightings_exported="sightings",
    list_help="Surfaces with their provenance, in `order`.",
    filter_help="A surface's batch is the one that first stored it.",
    one_help="One surface by its surface_id (64 hex digits).",
    facets_help="Counts by grounding source, corpus, intent and verification.")
# Derived (revision 0011), not listed on its own: read joined to each turn.
TURN_FIELDS: RecordListing[Filter, TurnFields] = RecordListing(
    "turn_fields", turn_fields_t, TURN_FIELDS_RECORD, exported=False)
TURNS: RecordListing[TurnFilter, StoredTurn] = RecordListing(
    "turns", turns_t, TURN_RECORD, TurnFilter, one="turn", api_type="Turn",
    # A turn's surface was stored by its batch or an earlier one: only turns need the
    # snapshot; the surface's sightings are counted as of it. Its fields were written with
    # it (outer: a missing row, which verify names, hides no turn).
    joined=(Joined(SURFACES, "surface_id", prefix="surface_", filtered=True),
            Joined(TURN_FIELDS, "turn_key", prefix="fields_", filtered=True, outer=True)),
    time_ordered=IN_TIME_ORDER, paged_by_key=True, seq_of=journal_seq,
    counter=counted_on_fields, conditions_of=read_by_seq,
    facets=TURN_FACET_SET, facets_type="TurnFacets", facet_fields=tuple(TURN_FACETS),
    combos=turn_combos,
    column_orders=(("ID", turns_t.c.turn_key), ("TURN_ID", turns_t.c.turn_id),
                   ("GROUNDING_SOURCE", turns_t.c.grounding_source),
                   ("EPISTEMIC_STATE", turns_t.c.epistemic_state),
                   ("CLEARANCE", turns_t.c.normative_clearance),
                   ("SURFACE_ID", turns_t.c.surface_id), ("PROMPT", turns_t.c.prompt)),
    list_help="CORE turns in `order` (not MOST_SEEN; TIME_ASC and TIME_DESC by CORE's own "
              "timestamp), with the surface each emitted: which turns were grounded by what.",
    one_help="One turn by its turn_key (64 hex digits).",
    filter_help="Verification, corpus, chain and form are the emitted surface's; the batch "
                "range is the turn's own batch. journal is a journal's id (its turn 1's "
                "turnKey); timeFrom and timeTo bound CORE's own timestamp, inclusive, each "
                "an ISO 8601 time with an offset.",
    facets_help="Turns counted by grounding source, verification, epistemic state, normative "
                "clearance and corpus.")
BATCHES: RecordListing[Filter, Batch] = RecordListing(
    "batches", batches_t, BATCH_RECORD, api_type="Batch",
    column_orders=(("SOURCE", batches_t.c.source), ("RECORD_TYPE", batches_t.c.record_type),
                   ("NEW_ROWS", batches_t.c.new_rows),
                   ("PRESENT_ROWS", batches_t.c.present_rows),
                   ("INGESTED_AT", batches_t.c.ingested_at)),
    list_help="Ingest batches in `order` (not MOST_SEEN).")
ASSESSMENTS: RecordListing[AssessmentFilter, StoredAssessment] = RecordListing(
    "assessments", assessments_t, ASSESSMENT_RECORD, AssessmentFilter, one="assessment",
    api_type="Assessment", joined=(Joined(BATCHES, "batch_id", prefix="batch_"),),
    column_orders=(("ID", assessments_t.c.assessment_id),
                   ("ORGAN", assessments_t.c.candidate_organ),
                   ("RUNNABLE", assessments_t.c.runnable),
                   ("PROBLEM_TEXT", assessments_t.c.problem_text)),
    list_help="Assessments in `order` (not MOST_SEEN).",
    one_help="One assessment by its assessment_id.")

# Every listing, in the order the API serves them.
LISTINGS: Mapping[str, RecordListing[Any, Any]] = {listing.name: listing for listing in (
    RESIDUALS, SURFACES, TURNS, ASSESSMENTS, BATCHES)}


def check_listings(listings: Mapping[str, RecordListing[Any, Any]] = LISTINGS,
                   kinds: Mapping[str, RecordKind] = KINDS_BY_TABLE) -> None:
    """Each listing's table is a ledgered record kind with a one-column key, and its
    sightings name that key: a declaration that disagrees fails when the module loads."""
    problems = []
    for name, listing in listings.items():
        kind = kinds.get(listing.table.name)
        if kind is None or not kind.ledgered or len(kind.key) != 1:
            problems.append(f"{name}: {listing.table.name} is not a ledgered record kind "
                            "with a one-column key")
        elif listing.sightings is not None and listing.key not in listing.sightings.c:
            problems.append(f"{name}: its sightings have no {listing.key} column")
    if problems:
        raise TypeError("; ".join(problems))


check_listings()

# The names callers knew before listings were declared: each listing's list, count, get.
list_residuals, count_residuals, residual_by_id = RESIDUALS.list, RESIDUALS.count, RESIDUALS.get
list_surfaces, count_surfaces, surface_by_id = SURFACES.list, SURFACES.count, SURFACES.get
list_turns, count_turns, turn_by_key = TURNS.list, TURNS.count, TURNS.get
list_assessments, count_assessments, assessment_by_id = (
    ASSESSMENTS.list, ASSESSMENTS.count, ASSESSMENTS.get)

# Typed by the facets each listing's declaration builds.
residual_facets: Callable[[Connection, ResidualFilter | None, int | None], ResidualFacets] = (
    RESIDUALS.facet_counts)
surface_facets: Callable[[Connection, SurfaceFilter | None, int | None], SurfaceFacets] = (
    SURFACES.facet_counts)
turn_facets: Callable[[Connection, TurnFilter | None, int | None], TurnFacets] = (
    TURNS.facet_counts)


def list_batches(connection: Connection, first: int | None = None, after: str | None = None,
                 **page: Unpack[PageArgs]) -> Page[Batch]:
    """Ingest batches (they take no filter)."""
    return BATCHES.list(connection, None, first, after, **page)


def count_batches(connection: Connection, as_of: int | None = None) -> int:
    return BATCHES.count(connection, None, as_of)
