"""GraphQL types for CORE turns: which turns were grounded by what, and how each verified."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import strawberry

from store.api.log_types import inclusion_field
from store.api.record_views import RecordView, fields_of_record
from store.api.surface_types import Surface
from store.api.types import FacetCount, enum_facets
from store.db import queries
from store.model.turns import NormativeClearance, TurnKind


@strawberry.type(description="The identity, safety and ethics verdict outcomes of a turn.")
class Verdicts:
    identity: str | None
    safety: str | None
    ethics: str | None


@fields_of_record(
    queries.StoredTurn, key="turn_key", views={queries.StoredSurface: Surface},
    description="One CORE turn as recorded, with the surface record it emitted.",
    fields=("turn_key", "seq", "kind", "turn_id", "batch_id", "prompt", "timestamp",
            "grounding_source", "epistemic_state", "normative_clearance", "normative_detail",
            "verdicts", "refusal_emitted", "hedge_injected", "trace_hash", "trace_integrity",
            "journal_digest", "line", "surface"),
    turn_key="sha256 naming the stored line (and, outside a journal, its position).",
    turn_id="The journal's turn_id (from 1) or a TurnEvent's turn (from 0).",
    timestamp="As CORE wrote it (UTC, ISO 8601).",
    epistemic_state="As CORE wrote it, e.g. decoded.",
    journal_digest="sha256:<hex> as the journal line carries it; checked on ingest.",
    line="The input line, byte for byte as read (UTF-8, no line ending).")
class Turn(RecordView):
    """The fields of queries.StoredTurn, its verdicts as one, then its proof."""

    kind: TurnKind  # the record holds the stored value
    normative_clearance: NormativeClearance | None
    verdicts: Verdicts
    as_of: strawberry.Private[int | None]  # the tree size it was read as of, for its fields
    _computed: ClassVar[Mapping[str, Callable[[Any], Any]]] = {"verdicts": lambda turn: Verdicts(
        identity=turn.verdict_identity, safety=turn.verdict_safety, ethics=turn.verdict_ethics)}

    inclusion_proof = inclusion_field("turns", "turn_key")


@fields_of_record(
    queries.TurnFacets, views={queries.FacetCount: FacetCount},
    description="Turns counted per value over the filtered turns; lists by count desc, value. "
    "Values as filters take them (TEACHING; decoded).", total="Matching turns.")
class TurnFacets(RecordView):
    """The fields of queries.TurnFacets."""

    _computed = enum_facets("by_grounding_source", "by_verification", "by_normative_clearance")
