"""The read-model's records: frozen, slotted, validated on construction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.model.taxonomy import ResidualKind, ResidualSourceAxis


@dataclass(frozen=True, slots=True)
class SourceSpan:
    text: str
    start: int
    end: int
    sentence_index: int | None = None

    def __post_init__(self) -> None:
        if self.start < 0:
            raise ValueError(f"span start {self.start} is negative")
        if self.end < self.start:
            raise ValueError(f"span end {self.end} is before its start {self.start}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "sentence_index": self.sentence_index,
        }


@dataclass(frozen=True, slots=True)
class ContractAssessment:
    candidate_organ: str
    missing_bindings: tuple[str, ...] = ()
    unresolved_hazards: tuple[str, ...] = ()
    runnable: bool = False
    explanation: str = ""
    evidence_spans: tuple[SourceSpan, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "candidate_organ": self.candidate_organ,
            "missing_bindings": list(self.missing_bindings),
            "unresolved_hazards": list(self.unresolved_hazards),
            "runnable": self.runnable,
            "explanation": self.explanation,
            "evidence_spans": [span.as_dict() for span in self.evidence_spans],
        }


@dataclass(frozen=True, slots=True)
class ContractResidual:
    residual_id: str
    candidate_organ: str
    family_id: str | None
    residual_kind: ResidualKind
    residual_code: str
    source_axis: ResidualSourceAxis
    evidence_spans: tuple[SourceSpan, ...]
    explanation: str

    def __post_init__(self) -> None:
        # The taxonomy is closed: broad kinds such as MATH_FAILED cannot exist.
        if type(self.residual_kind) is not ResidualKind:
            raise ValueError(f"residual_kind {self.residual_kind!r} is not a ResidualKind")
        if type(self.source_axis) is not ResidualSourceAxis:
            raise ValueError(f"source_axis {self.source_axis!r} is not a ResidualSourceAxis")

    def as_dict(self) -> dict[str, Any]:
        """The record as CORE serializes it: lower-case values, null family_id."""
        return {
            "residual_id": self.residual_id,
            "candidate_organ": self.candidate_organ,
            "family_id": self.family_id,
            "residual_kind": self.residual_kind.value,
            "residual_code": self.residual_code,
            "source_axis": self.source_axis.value,
            "evidence_spans": [span.as_dict() for span in self.evidence_spans],
            "explanation": self.explanation,
        }
