"""A Workbench journal line's `construction_evidence`, read as CORE's own seam reads it.

core-workbench.md §4: a payload is `recorded` (its ContractAssessmentViews then project to
ContractResiduals, ADR-0225) or `missing_evidence` with a reason. A payload that is absent,
of another schema version or malformed is not a bad line: the turn records why nothing was
projected. CORE's seam cites its reasons without printing them here, so the reasons are
core-audit's spellings of CORE's cases (snake case, as CORE's other seams spell theirs, e.g.
`field_evidence_not_persisted`), documented in docs/graphql.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from store.model.records import ContractAssessment, SourceSpan

SCHEMA_VERSION: Final = "construction_evidence_v1"
NOT_PERSISTED: Final = "construction_evidence_not_persisted"
UNSUPPORTED_SHAPE: Final = "construction_evidence_unsupported_shape"
UNSUPPORTED_SCHEMA: Final = "construction_evidence_unsupported_schema_version"
UNSUPPORTED_STATUS: Final = "construction_evidence_unsupported_status"
PROBLEM_TEXT_MISSING: Final = "construction_evidence_problem_text_missing"
PROBLEM_TEXT_NOT_TEXT: Final = "construction_evidence_problem_text_not_a_string"
PROJECTION_FAILED: Final = "construction_evidence_projection_failed"

# Required keys per list (CE's reader; core-workbench.md §4 "Required keys").
_REQUIRED: Final = {
    "proposals": ("family_id", "relation_type", "candidate_organ", "status"),
    "mentions": ("mention_id", "kind", "surface", "span"),
    "bindings": ("binding_type", "source_mention_id", "target_mention_id"),
    "bound_relations": ("relation_type",),
    "contract_assessments": ("candidate_organ",),
}
LISTS: Final = tuple(_REQUIRED)


class ConstructionStatus(StrEnum):
    RECORDED = "recorded"
    MISSING_EVIDENCE = "missing_evidence"


@dataclass(frozen=True, slots=True)
class ConstructionReading:
    """What the seam makes of one payload: recorded with its assessments, or missing and why."""

    status: ConstructionStatus
    missing_reason: str | None
    problem_text: str | None = None
    assessments: tuple[ContractAssessment, ...] = ()


class _Unreadable(ValueError):
    """A payload the seam drops whole (rule 7): the reason names the first failure."""


def _missing(reason: str) -> ConstructionReading:
    return ConstructionReading(ConstructionStatus.MISSING_EVIDENCE, reason)


def _int(value: Any, where: str) -> int:
    # CORE reads offsets with int(): 4.0, "4" and True read as numbers, "four" fails.
    if isinstance(value, (int, float, str)):
        try:
            return int(value)
        except (ValueError, OverflowError):
            pass
    raise _Unreadable(f"{where}: int() refuses {value!r}")


def _key(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict):
        raise _Unreadable(f"{where}: not an object")
    if key not in obj:
        raise _Unreadable(f"{where}: missing required key {key!r}")
    return obj[key]


def _span(value: Any, where: str, problem_text: str) -> SourceSpan:
    start = _int(_key(value, "start", where), f"{where}.start")
    end = _int(_key(value, "end", where), f"{where}.end")
    text = str(_key(value, "text", where))
    if not 0 <= start <= end <= len(problem_text):
        raise _Unreadable(f"{where}: offsets {start}:{end} are outside problem_text")
    if not text:
        raise _Unreadable(f"{where}: empty text")
    if problem_text[start:end] != text:
        raise _Unreadable(f"{where}: text {text!r} is not problem_text[{start}:{end}]")
    return SourceSpan(text=text, start=start, end=end)  # the view has no sentence_index


def _spans(value: Any, where: str, problem_text: str) -> tuple[SourceSpan, ...]:
    if not isinstance(value, list):
        return ()  # rule 8: a spans field that is not a list reads as none
    return tuple(_span(item, f"{where}[{i}]", problem_text) for i, item in enumerate(value))


def _labels(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list) else ()


def _assessment(value: Any, where: str, problem_text: str) -> ContractAssessment:
    return ContractAssessment(
        candidate_organ=str(value["candidate_organ"]),
        missing_bindings=_labels(value.get("missing_bindings")),
        unresolved_hazards=_labels(value.get("unresolved_hazards")),
        runnable=bool(value.get("runnable", False)),
        explanation=str(value.get("explanation", "")),
        evidence_spans=_spans(value.get("evidence_spans"), f"{where}.evidence_spans",
                              problem_text),
    )


def _check_item(name: str, item: Any, where: str, problem_text: str) -> None:
    """The nested shapes the seam reads besides assessments: required keys and spans."""
    for key in _REQUIRED[name]:
        _key(item, key, where)
    if name == "proposals":
        obligations = item.get("role_obligations")
        for j, obligation in enumerate(obligations if isinstance(obligations, list) else ()):
            for key in ("role", "required", "description"):
                _key(obligation, key, f"{where}.role_obligations[{j}]")
    if name == "mentions":
        _span(item["span"], f"{where}.span", problem_text)
    if name == "bound_relations":
        roles = item.get("roles")
        for j, role in enumerate(roles if isinstance(roles, list) else ()):
            for key in ("role", "target_id"):
                _key(role, key, f"{where}.roles[{j}]")
            _spans(role.get("evidence_spans"), f"{where}.roles[{j}].evidence_spans",
                   problem_text)
    if name != "mentions":
        _spans(item.get("evidence_spans"), f"{where}.evidence_spans", problem_text)


def read_construction(payload: Any) -> ConstructionReading:
    """The seam's reading of a journal line's `construction_evidence` (core-workbench.md §4,
    rules 1-10, in their order)."""
    if payload is None:
        return _missing(NOT_PERSISTED)
    if not isinstance(payload, dict):
        return _missing(UNSUPPORTED_SHAPE)
    version = payload.get("schema_version")
    if version != SCHEMA_VERSION:
        return _missing(f"{UNSUPPORTED_SCHEMA}: {version!r}")
    status = payload.get("status")
    if status == ConstructionStatus.MISSING_EVIDENCE.value:
        reason = payload.get("missing_reason")
        return _missing(str(reason) if reason else NOT_PERSISTED)
    if status != ConstructionStatus.RECORDED.value:
        return _missing(f"{UNSUPPORTED_STATUS}: {status!r}")
    problem_text = payload.get("problem_text")
    if problem_text is None:
        return _missing(PROBLEM_TEXT_MISSING)
    if not isinstance(problem_text, str):
        return _missing(PROBLEM_TEXT_NOT_TEXT)
    try:
        assessments = _read_lists(payload, problem_text)
    except _Unreadable as exc:
        return _missing(f"{PROJECTION_FAILED}: {exc}")
    return ConstructionReading(ConstructionStatus.RECORDED, None, problem_text, assessments)


def _read_lists(payload: dict[str, Any], problem_text: str) -> tuple[ContractAssessment, ...]:
    assessments: list[ContractAssessment] = []
    for name in LISTS:
        items = payload.get(name) or []
        if not isinstance(items, list):
            raise _Unreadable(f"{name}: not a list")
        for i, item in enumerate(items):
            where = f"{name}[{i}]"
            if name == "contract_assessments":
                _key(item, "candidate_organ", where)
                assessments.append(_assessment(item, where, problem_text))
            else:
                _check_item(name, item, where, problem_text)
    return tuple(assessments)


def equivalent_frame(reading: ConstructionReading, turn_key: str) -> dict[str, Any]:
    """The frame whose ingest stores exactly the assessments and residuals this turn's
    evidence projects to: its problem text, the turn's key as its source_ref, the
    assessments as CORE's ContractAssessment (spans with a null sentence_index)."""
    return {"problem_text": reading.problem_text, "source_ref": turn_key,
            "contract_assessments": [a.as_dict() for a in reading.assessments]}
