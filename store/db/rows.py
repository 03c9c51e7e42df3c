"""Domain records -> table rows (plain dicts of str/int/bool/None), keyed for the ledger."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from store.model.canonical import canonical, content_id
from store.model.corpora import TeachingRegistry
from store.model.parsing import AssessmentFrame, parse_frame
from store.model.projection import project_assessment
from store.model.records import ContractAssessment, ContractResidual, SourceSpan
from store.model.surface_records import (
    CheckedSurface,
    check_surface,
    is_surface_line,
    parse_surface_record,
)
from store.model.teaching_surface import surface_key

Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class PendingRow:
    """A row to append, before the ledger gives it a seq and the batch its id."""

    table: str
    key: tuple[Any, ...]
    row: Row


def ledger_key(key: tuple[Any, ...]) -> str:
    return "/".join(str(part) for part in key)


def json_text(value: Any) -> str:
    return canonical(value).decode("utf-8")


def _spans_text(spans: tuple[SourceSpan, ...]) -> str:
    return json_text([span.as_dict() for span in spans])


def assessment_id(frame: AssessmentFrame, assessment: ContractAssessment) -> str:
    """Names an assessment in its context: the same assessment of another problem differs."""
    return content_id(
        {
            "problem_text": frame.problem_text,
            "source_ref": frame.source_ref,
            "assessment": assessment.as_dict(),
        }
    )


def residual_row(residual: ContractResidual, spans_text: str) -> Row:
    return {
        "residual_id": residual.residual_id,
        "candidate_organ": residual.candidate_organ,
        "family_id": residual.family_id,
        "residual_kind": residual.residual_kind.value,
        "residual_code": residual.residual_code,
        "source_axis": residual.source_axis.value,
        "evidence_spans": spans_text,
        "explanation": residual.explanation,
    }


def frame_rows(frame: AssessmentFrame) -> list[PendingRow]:
    """Each assessment, then its residuals and their occurrences, in projection order."""
    rows: list[PendingRow] = []
    for assessment in frame.assessments:
        aid = assessment_id(frame, assessment)
        spans_text = _spans_text(assessment.evidence_spans)  # residuals carry the same spans
        rows.append(
            PendingRow(
                "contract_assessments",
                (aid,),
                {
                    "assessment_id": aid,
                    "problem_text": frame.problem_text,
                    "source_ref": frame.source_ref,
                    "candidate_organ": assessment.candidate_organ,
                    "runnable": assessment.runnable,
                    "missing_bindings": json_text(list(assessment.missing_bindings)),
                    "unresolved_hazards": json_text(list(assessment.unresolved_hazards)),
                    "explanation": assessment.explanation,
                    "evidence_spans": spans_text,
                },
            )
        )
        for ordinal, residual in enumerate(project_assessment(assessment)):
            rid = residual.residual_id
            rows.append(
                PendingRow("contract_residuals", (rid,), residual_row(residual, spans_text))
            )
            rows.append(
                PendingRow(
                    "residual_occurrences",
                    (aid, ordinal),
                    {"assessment_id": aid, "ordinal": ordinal, "residual_id": rid},
                )
            )
    return rows


def surface_rows(checked: CheckedSurface) -> list[PendingRow]:
    """The surface's content row and this sighting of it (one per turn)."""
    record, check = checked.record, checked.check
    derived = check.derived
    subject_domains = list(derived.subject_domains) if derived else None
    object_domains = list(derived.object_domains) if derived else None
    provenance = {
        "grounding_source": record.grounding_source.value,
        "surface": record.surface,
        "subject": record.subject,
        "intent": record.intent,
        "corpus_id": record.corpus_id or (derived.corpus_id if derived else None),
        "chain_id": record.chain_id or (derived.chain_id if derived else None),
        "pack_id": derived.pack_id if derived else None,
    }
    surface_id = surface_key(
        **provenance, subject_domains=subject_domains, object_domains=object_domains
    )
    row: Row = {
        "surface_id": surface_id,
        **provenance,
        "chain_provenance": derived.chain_provenance if derived else None,
        "pack_version": derived.pack_version if derived else None,
        "connective": derived.connective if derived else None,
        "object": derived.object if derived else None,
        "subject_domains": json_text(subject_domains) if derived else None,
        "object_domains": json_text(object_domains) if derived else None,
        "verification": check.verification.value,
        "expected_surface": check.expected_surface,
    }
    sighting = {"surface_id": surface_id, "session_id": record.session_id,
                "turn_id": record.turn_id, "prompt": record.prompt}
    occurrence_id = content_id(sighting)
    return [
        PendingRow("surface_records", (surface_id,), row),
        PendingRow("surface_occurrences", (occurrence_id,),
                   {"occurrence_id": occurrence_id, **sighting}),
    ]


RegistryProvider = Callable[[], TeachingRegistry]


def record_rows(value: Any, registry: RegistryProvider) -> tuple[str, list[PendingRow]]:
    """The rows one input line contributes; its shape says what kind of record it is."""
    if is_surface_line(value):
        checked = check_surface(parse_surface_record(value), registry())
        return "surfaces", surface_rows(checked)
    return "assessments", frame_rows(parse_frame(value))
