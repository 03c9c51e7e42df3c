"""GraphQL types for CORE turns: which turns were grounded by what, and how each verified."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from store.api.context import RequestContext
from store.api.facet_types import FacetCount, enum_facets, facet_page_field
from store.api.log_types import inclusion_field
from store.api.record_views import FromValue, FromValues, RecordView, fields_of_record
from store.api.surface_types import Surface
from store.api.thread_reads import kept_in_read, read_in_thread
from store.api.types import Assessment, Residual
from store.db import queries
from store.model.construction import ConstructionStatus
from store.model.turn_fields import evidence_payload
from store.model.turns import NormativeClearance, TurnKind

EXCERPT = 120  # characters of CORE's prompt_excerpt and surface_excerpt


@strawberry.type(description="The identity, safety and ethics verdicts of a turn: each "
                             "outcome (cleared, violated, unassessable; null when CORE "
                             "recorded no verdict) and, for journal turns, its runtime_detail.")
class Verdicts:
    identity: str | None
    safety: str | None
    ethics: str | None
    identity_detail: str | None = strawberry.field(
        description="verdicts.identity.runtime_detail: the sorted deviation axes, joined by ','.")
    safety_detail: str | None = strawberry.field(
        description="verdicts.safety.runtime_detail: the sorted violated boundary ids.")
    ethics_detail: str | None = strawberry.field(
        description="verdicts.ethics.runtime_detail: the sorted violated commitment ids.")


@fields_of_record(queries.ProposalCandidate,
                  description="A candidate that appeared during the turn, as CORE wrote it.",
                  source_kind="Always discovery in CORE's live path.")
class ProposalCandidate(RecordView):
    """The fields of queries.ProposalCandidate."""


def _evidence(key: str, description: str) -> Any:
    def payload(self: Any) -> JSON | None:
        found: JSON | None = evidence_payload(self.line, key)
        return found

    return strawberry.field(payload, description=f"{description} Exactly as CORE wrote it in "
                            "the line (JSON; null when absent or null).")


def _excerpt(text: str | None) -> str | None:
    return None if text is None else text[:EXCERPT]


@fields_of_record(
    queries.StoredTurn, key="turn_key", views={queries.StoredSurface: Surface},
    description="One CORE turn as recorded, with the surface record it emitted.",
    fields=("turn_key", "seq", "kind", "turn_id", "batch_id", "prompt", "timestamp",
            "grounding_source", "epistemic_state", "normative_clearance", "normative_detail",
            "verdicts", "refusal_emitted", "hedge_injected", "trace_hash", "trace_integrity",
            "journal_digest", "line", "surface", "journal_id", "articulation_surface",
            "walk_surface", "proposal_candidates", "turn_cost_ms", "checkpoint_emitted"),
    turn_key="sha256 naming the stored line (and, outside a journal, its position).",
    turn_id="The journal's turn_id (from 1) or a TurnEvent's turn (from 0).",
    timestamp="As CORE wrote it (UTC, ISO 8601 with its offset).",
    journal_id="The journal this turn belongs to: its turn 1's turnKey (journal turns only).",
    articulation_surface="As CORE wrote it; null also when CORE wrote \"\" (it stores null).",
    walk_surface="As CORE wrote it; null also when CORE wrote \"\" (it stores null).",
    proposal_candidates="Journal turns: the candidates that appeared during the turn.",
    turn_cost_ms="Journal turns: the runtime turn's wall-clock ms, rounded (journaling "
                 "excluded).",
    checkpoint_emitted="Journal turns: whether the runtime wrote an engine-state checkpoint.",
    epistemic_state="As CORE wrote it, e.g. decoded.",
    journal_digest="sha256:<hex> as the journal line carries it; checked on ingest.",
    line="The input line, byte for byte as read (UTF-8, no line ending).",
    prompt_excerpt="CORE's TurnJournalSummary.prompt_excerpt: the prompt's first 120 "
                   "characters (code points, no ellipsis), as the Trace timeline shows it.",
    surface_excerpt="CORE's surface_excerpt (TurnJournalSummary, RunTurnRef): the surface's "
                    "first 120 characters (code points, no ellipsis).")
class Turn(RecordView):
    """The fields of queries.StoredTurn, its verdicts as one, then its proof."""

    kind: TurnKind  # the record holds the stored value
    normative_clearance: NormativeClearance | None
    verdicts: Verdicts
    journal_id: strawberry.ID | None
    articulation_surface: str | None
    walk_surface: str | None
    proposal_candidates: list[ProposalCandidate] | None
    turn_cost_ms: int | None
    checkpoint_emitted: bool | None
    prompt_excerpt: str | None
    surface_excerpt: str | None
    as_of: strawberry.Private[int | None]  # the tree size it was read as of, for its fields
    _computed: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "verdicts": FromValues(Verdicts, {
            "identity": ("verdict_identity",), "safety": ("verdict_safety",),
            "ethics": ("verdict_ethics",),
            "identity_detail": ("fields", "verdict_identity_detail"),
            "safety_detail": ("fields", "verdict_safety_detail"),
            "ethics_detail": ("fields", "verdict_ethics_detail")}),
        # CORE cuts with Python's [:120] (J:26-27, 112-122): a page of the Trace timeline
        # then carries 120 characters of each, not whole prompts and surfaces.
        "prompt_excerpt": FromValue(("prompt",), _excerpt),
        "surface_excerpt": FromValue(("surface", "surface"), _excerpt)}

    leeway_evidence = _evidence("leeway_evidence", "CORE's leeway record: class_name, license, "
                                "theta, claim_disclosure, source_digest, "
                                "calibration_evidence_ref.")
    pipeline_record = _evidence("pipeline_record", "The CognitivePipelineRecord "
                                "(cognitive_pipeline_record_v1): stages and edges.")
    field_evidence = _evidence("field_evidence", "The FieldEvidence (field_evidence_v1).")
    construction_evidence = _evidence("construction_evidence", "The construction evidence "
                                      "(construction_evidence_v1), as stored.")
    meta_rh_evidence = _evidence("meta_rh_evidence", "The meta_rh evidence.")
    practice_evidence = _evidence("practice_evidence", "The practice evidence "
                                  "(practice_evidence_v1).")
    async def _construction(self, info: Info[RequestContext, None]
                            ) -> queries.TurnConstruction:
        return await info.context.turn_constructions.load((_turn_line(self), self.as_of))

    @strawberry.field(description="What the line's construction_evidence came to, as CORE's "
                                  "seam reports it: RECORDED or MISSING_EVIDENCE (a null "
                                  "payload: construction_evidence_not_persisted). Null for a "
                                  "turn of another kind, or a payload not projected by asOf.")
    @read_in_thread(lambda sql, turn: _read_construction(sql, turn).status)
    async def construction_status(self, info: Info[RequestContext, None]
                                  ) -> ConstructionStatus | None:
        return (await self._construction(info)).status

    @strawberry.field(description="Why nothing was projected (status MISSING_EVIDENCE); null "
                                  "when recorded. Reasons: docs/graphql.md.")
    @read_in_thread(lambda sql, turn: _read_construction(sql, turn).missing_reason)
    async def construction_missing_reason(self, info: Info[RequestContext, None]
                                          ) -> str | None:
        return (await self._construction(info)).missing_reason

    @strawberry.field(description="The contract assessments of its recorded "
                                  "construction_evidence, in the payload's order, stored as the "
                                  "equivalent frame stores them (its problem text; source_ref: "
                                  "this turn's turnKey).")
    @read_in_thread(lambda sql, turn: [Assessment.of(a, turn.as_of) for a in
                                       _read_construction(sql, turn).assessments])
    async def assessments(self, info: Info[RequestContext, None]) -> list[Assessment]:
        return [Assessment.of(a, self.as_of)
                for a in (await self._construction(info)).assessments]

    @strawberry.field(description="The residuals its assessments project to (ADR-0225), each "
                                  "once, sorted by residualId as CORE orders a record's.")
    @read_in_thread(lambda sql, turn: _residuals_of(turn, list(queries.assessment_residuals(
        sql, [a.assessment_id for a in _read_construction(sql, turn).assessments],
        as_of=turn.as_of).values())))
    async def residuals(self, info: Info[RequestContext, None]) -> list[Residual]:
        construction = await self._construction(info)
        loads = [info.context.assessment_residuals.load((a.assessment_id, self.as_of))
                 for a in construction.assessments]
        return _residuals_of(self, await asyncio.gather(*loads))

    inclusion_proof = inclusion_field("turns", "turn_key")


def _turn_line(turn: Any) -> queries.TurnLine:
    """What a turn view's construction is read from (turn_key and line: fields
    fields_of_record adds from the record)."""
    return queries.TurnLine(str(turn.turn_key), turn.kind.value, turn.line)


def _read_construction(sql: Any, turn: Any) -> queries.TurnConstruction:
    """A turn view's construction, read on `sql` (a read in one thread: ReadScope), once for
    the fields of the turn that ask for it."""
    line = _turn_line(turn)
    return kept_in_read(("turn construction", line.turn_key, turn.as_of), lambda: (
        queries.turn_constructions(sql, [line], as_of=turn.as_of)[line.turn_key]))


def _residuals_of(turn: Any, produced_by: list[list[queries.StoredResidual]]) -> list[Residual]:
    """The residuals its assessments produced (each assessment's, in turn), each once, sorted
    by residual_id."""
    produced = {r.residual.residual_id: r for found in produced_by for r in found}
    return [Residual.of(produced[rid], turn.as_of) for rid in sorted(produced)]


@fields_of_record(
    queries.TurnFacets, views={queries.FacetCount: FacetCount},
    description="Turns counted per value over the filtered turns; lists by count desc, value. "
    "Values as filters take them (TEACHING; decoded).", total="Matching turns.")
class TurnFacets(RecordView):
    """The fields of queries.TurnFacets."""

    _computed = enum_facets("by_grounding_source", "by_verification", "by_normative_clearance",
                            "by_kind", "by_trace_integrity", "by_form")
    facet_reader: strawberry.Private[tuple[Any, int | None]] = (None, None)  # (filter, asOf)

    facet = facet_page_field("turns")
