"""Assessments in their context, with their batch: the row builder."""

from __future__ import annotations

from typing import Any

import orjson

from store.db.queries.batches import batch_of
from store.db.queries.records import StoredAssessment, spans_of
from store.model.records import ContractAssessment


def assessment_of(row: Any) -> StoredAssessment:
    return StoredAssessment(
        assessment_id=row.assessment_id,
        seq=row.seq,
        problem_text=row.problem_text,
        source_ref=row.source_ref,
        assessment=ContractAssessment(
            candidate_organ=row.candidate_organ,
            missing_bindings=tuple(orjson.loads(row.missing_bindings)),
            unresolved_hazards=tuple(orjson.loads(row.unresolved_hazards)),
            runnable=bool(row.runnable),
            explanation=row.explanation,
            evidence_spans=spans_of(row.evidence_spans),
        ),
        batch=batch_of(row, "batch_"),
    )
