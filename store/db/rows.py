"""Domain records -> table rows (plain dicts of str/int/bool/None), keyed for the ledger."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.model.canonical import canonical, content_id
from store.model.parsing import AssessmentFrame
from store.model.projection import project_assessment
from store.model.records import ContractAssessment, ContractResidual, SourceSpan

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


def residual_row(residual: ContractResidual, spans_text: str | None = None) -> Row:
    return {
        "residual_id": residual.residual_id,
        "candidate_organ": residual.candidate_organ,
        "family_id": residual.family_id,
        "residual_kind": residual.residual_kind.value,
        "residual_code": residual.residual_code,
        "source_axis": residual.source_axis.value,
        "evidence_spans": spans_text or _spans_text(residual.evidence_spans),
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


def record_rows(value: Any) -> tuple[str, list[PendingRow]]:
    """The rows one input line contributes; its shape says what kind of record it is."""
    from store.model.parsing import parse_frame

    return "assessments", frame_rows(parse_frame(value))
