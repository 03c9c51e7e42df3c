"""ContractAssessment -> ContractResidual, exactly as CORE projects it (ADR-0225)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from store.model.canonical import content_id
from store.model.records import ContractAssessment, ContractResidual, SourceSpan
from store.model.taxonomy import ResidualKind, classify, explain, family_of


def residual_id(
    candidate_organ: str,
    residual_kind: ResidualKind,
    residual_code: str,
    evidence_spans: Iterable[SourceSpan],
) -> str:
    """sha256 over organ, kind value, code and the spans in their own order."""
    return stored_residual_id(candidate_organ, residual_kind.value, residual_code,
                              [span.as_dict() for span in evidence_spans])


def stored_residual_id(
    candidate_organ: str,
    residual_kind: str,
    residual_code: str,
    evidence_spans: Iterable[Mapping[str, Any]],
) -> str:
    """The same recipe over the values a row stores (kind as its value, spans as dicts)."""
    return content_id(
        {
            "candidate_organ": candidate_organ,
            "residual_kind": residual_kind,
            "residual_code": residual_code,
            "evidence_spans": [dict(span) for span in evidence_spans],
        }
    )


def residual_codes(assessment: ContractAssessment) -> list[str]:
    """Missing bindings then unresolved hazards, first sighting wins."""
    return list(dict.fromkeys((*assessment.missing_bindings, *assessment.unresolved_hazards)))


def project_assessment(assessment: ContractAssessment) -> list[ContractResidual]:
    """One residual per code, in code order (unsorted); runnable yields nothing."""
    if assessment.runnable:
        return []
    organ = assessment.candidate_organ
    family = family_of(organ)
    spans = assessment.evidence_spans
    residuals = []
    for code in residual_codes(assessment):
        kind, axis = classify(code)
        residuals.append(
            ContractResidual(
                residual_id=residual_id(organ, kind, code, spans),
                candidate_organ=organ,
                family_id=family,
                residual_kind=kind,
                residual_code=code,
                source_axis=axis,
                evidence_spans=spans,
                explanation=explain(code),
            )
        )
    return residuals


def project_residuals(assessments: Iterable[ContractAssessment]) -> list[ContractResidual]:
    """All residuals of `assessments`, sorted by residual_id; equal ids keep input order."""
    residuals = [r for a in assessments for r in project_assessment(a)]
    residuals.sort(key=lambda r: r.residual_id)  # stable sort keeps input order on ties
    return residuals
