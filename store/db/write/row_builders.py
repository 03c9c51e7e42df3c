"""Domain records -> table rows (plain dicts of str/int/bool/None), keyed for the ledger."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from store.model.assessment_ids import assessment_id as assessment_content_id
from store.model.canonical import canonical
from store.model.construction import ConstructionStatus, read_construction
from store.model.corpora import TeachingRegistry
from store.model.fields import RecordError
from store.model.jsonl import JsonLine
from store.model.parsing import AssessmentFrame, parse_frame
from store.model.projection import project_assessment
from store.model.records import ContractAssessment, ContractResidual, SourceSpan
from store.model.surface_ids import sighting_id, surface_id, surface_identity
from store.model.surface_records import (
    CheckedSurface,
    SurfaceVerification,
    check_surface,
    is_surface_line,
    parse_surface_record,
)
from store.model.turns import (
    JournalSequence,
    TurnKind,
    TurnRecord,
    parse_turn_line,
    turn_key,
    turn_line_kind,
)

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
    return assessment_content_id(frame.problem_text, frame.source_ref, assessment.as_dict())


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


def _json_or_none(values: list[Any] | None) -> str | None:
    return None if values is None else json_text(values)


def surface_rows(checked: CheckedSurface, turn_key: str | None = None) -> list[PendingRow]:
    """The surface's content row and this sighting of it (one per turn)."""
    check, derived = checked.check, checked.check.derived
    identity = surface_identity(checked)
    key = surface_id(identity)
    mismatch = check.verification is SurfaceVerification.MISMATCH
    row: Row = {
        "surface_id": key,
        **identity.provenance(),
        "chain_provenance": derived.chain_provenance if derived else None,
        "pack_version": derived.pack_version if derived else None,
        "connective": derived.connective if derived else None,
        "object": derived.object if derived else None,
        "subject_domains": _json_or_none(identity.subject_domains),
        "object_domains": _json_or_none(identity.object_domains),
        "verification": identity.verification,
        "expected_surface": check.expected_surface if mismatch else None,
        "surface_form": identity.surface_form,
        "hops": identity.hops,
        "hop_chain_ids": _json_or_none(identity.hop_chain_ids),
        "candidate_chain_ids": _json_or_none(identity.candidate_chain_ids),
        "surface_prefix": identity.surface_prefix,
        "checked_against": _json_or_none(identity.checked_against),
    }
    record = checked.record
    occurrence = sighting_id(key, record.session_id, record.turn_id, record.prompt, turn_key)
    return [
        PendingRow("surface_records", (key,), row),
        PendingRow("surface_occurrences", (occurrence,), {
            "occurrence_id": occurrence, "surface_id": key, "session_id": record.session_id,
            "turn_id": record.turn_id, "prompt": record.prompt, "turn_key": turn_key}),
    ]


def turn_rows(turn: TurnRecord, line: JsonLine, checked: CheckedSurface) -> list[PendingRow]:
    """A turn, the surface it emitted and that sighting; the line is kept verbatim."""
    key = turn_key(turn.kind, line.text, line.number)
    rows = surface_rows(checked, key)
    row: Row = {
        "turn_key": key,
        "kind": turn.kind.value,
        "turn_id": turn.turn_id,
        "prompt": turn.prompt,
        "timestamp": turn.timestamp,
        "grounding_source": turn.grounding_source.value,
        "epistemic_state": turn.epistemic_state,
        "normative_clearance": (turn.normative_clearance.value
                                if turn.normative_clearance is not None else None),
        "normative_detail": turn.normative_detail,
        "verdict_identity": turn.verdict_identity,
        "verdict_safety": turn.verdict_safety,
        "verdict_ethics": turn.verdict_ethics,
        "refusal_emitted": turn.refusal_emitted,
        "hedge_injected": turn.hedge_injected,
        "trace_hash": turn.trace_hash,
        "trace_integrity": turn.trace_integrity,
        "journal_digest": turn.journal_digest,
        "surface_id": rows[0].key[0],
        "line": line.text,
        "line_number": None if turn.kind is TurnKind.WORKBENCH_JOURNAL else line.number,
    }
    rows.append(PendingRow("turns", (key,), row))
    if turn.kind is TurnKind.WORKBENCH_JOURNAL:
        rows += construction_rows(key, line.value.get("construction_evidence"))
    return rows


def construction_rows(turn_key: str, payload: Any) -> list[PendingRow]:
    """What a journal line's construction_evidence comes to (none for a null one): its
    status and, when recorded, the rows the equivalent frame (its problem text, the turn's
    key as source_ref) stores, then the turn's links to its assessments, in order."""
    if payload is None:
        return []
    reading = read_construction(payload)
    rows = [PendingRow("turn_constructions", (turn_key,), {
        "turn_key": turn_key, "status": reading.status.value,
        "missing_reason": reading.missing_reason})]
    if reading.status is not ConstructionStatus.RECORDED:
        return rows
    frame = AssessmentFrame(reading.problem_text, turn_key, reading.assessments)
    rows += frame_rows(frame)
    rows += [PendingRow("turn_assessments", (turn_key, ordinal), {
                 "turn_key": turn_key, "ordinal": ordinal,
                 "assessment_id": assessment_id(frame, assessment)})
             for ordinal, assessment in enumerate(reading.assessments)]
    return rows


RegistryProvider = Callable[[], TeachingRegistry]


class InputStart(NamedTuple):
    """Where an input begins in its file: line 1 and turn 1, or, for the tail of a file whose
    earlier lines are stored (`core-audit follow`), the next line's number and turn id."""

    line: int = 1
    turn_id: int = 1
    journal_id: str | None = None  # the turn_key of the file's turn 1, when turn_id > 1


class RecordReader:
    """The rows each input line contributes; its shape says what kind of record it is.

    One reader per batch: a Workbench journal's turn ids must run 1, 2, 3... within the file.
    """

    def __init__(self, registry: RegistryProvider, start: InputStart | None = None) -> None:
        self.registry = registry
        self.journal = JournalSequence(start.turn_id if start else 1)

    def rows(self, line: JsonLine) -> tuple[str, list[PendingRow]]:
        value = line.value
        kind = turn_line_kind(value)
        if kind is not None:
            if kind is TurnKind.WORKBENCH_JOURNAL:
                turn_id = value.get("turn_id")
                if isinstance(turn_id, int) and not isinstance(turn_id, bool):
                    problem = self.journal.check(turn_id)
                    if problem is not None:
                        raise RecordError(problem)
            turn = parse_turn_line(value, line.text)
            checked = check_surface(turn.surface_record(), self.registry())
            return "turns", turn_rows(turn, line, checked)
        if is_surface_line(value):
            checked = check_surface(parse_surface_record(value), self.registry())
            return "surfaces", surface_rows(checked)
        return "assessments", frame_rows(parse_frame(value))
