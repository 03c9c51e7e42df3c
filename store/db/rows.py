"""Domain records -> table rows (plain dicts of str/int/bool/None), keyed for the ledger."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from store.model.canonical import canonical, content_id
from store.model.corpora import TeachingRegistry
from store.model.fields import RecordError
from store.model.jsonl import JsonLine
from store.model.parsing import AssessmentFrame, parse_frame
from store.model.projection import project_assessment
from store.model.records import ContractAssessment, ContractResidual, SourceSpan
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


def _json_or_none(values: tuple[str, ...] | None) -> str | None:
    return None if values is None else json_text(list(values))


def surface_rows(checked: CheckedSurface, turn_key: str | None = None) -> list[PendingRow]:
    """The surface's content row and this sighting of it (one per turn)."""
    record, check = checked.record, checked.check
    derived = check.derived
    verified = check.verification is SurfaceVerification.VERIFIED
    # An ambiguous verification (two chains, same bytes) names no single chain.
    chain_id = check.chain_id if verified else (derived.chain_id if derived else None)
    subject_domains = list(derived.subject_domains) if derived else None
    object_domains = list(derived.object_domains) if derived else None
    intent = record.intent
    if intent is None and derived is not None and chain_id is not None:
        intent = derived.intent.value
    provenance = {
        "grounding_source": record.grounding_source.value,
        "surface": record.surface,
        "subject": record.subject if record.subject is not None else check.subject,
        "intent": intent,
        "corpus_id": record.corpus_id or check.corpus_id,
        "chain_id": record.chain_id or chain_id,
        "pack_id": derived.pack_id if derived else None,
    }
    checked_columns: Row = {
        "surface_form": check.form.value if check.form is not None else None,
        "hops": check.hops,
        "hop_chain_ids": _json_or_none(check.hop_chain_ids if check.hops is not None else None),
        "candidate_chain_ids": _json_or_none(check.candidate_chain_ids or None),
        "surface_prefix": check.prefix,
        "checked_against": json_text([f.as_dict() for f in check.checked_against])
        if check.checked_against else None,
    }
    identity = {**provenance, "subject_domains": subject_domains,
                "object_domains": object_domains}
    if check.verification is not SurfaceVerification.NOT_CHECKED:
        identity["verification"] = check.verification.value
    # Null additions stay out: a record stored before revision 0005 keeps its id.
    identity.update({k: v for k, v in checked_columns.items() if v is not None})
    surface_id = content_id(identity)
    mismatch = check.verification is SurfaceVerification.MISMATCH
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
        "expected_surface": check.expected_surface if mismatch else None,
        **checked_columns,
    }
    sighting: Row = {"surface_id": surface_id, "session_id": record.session_id,
                     "turn_id": record.turn_id, "prompt": record.prompt}
    if turn_key is not None:
        sighting["turn_key"] = turn_key
    occurrence_id = content_id(sighting)
    return [
        PendingRow("surface_records", (surface_id,), row),
        PendingRow("surface_occurrences", (occurrence_id,),
                   {"occurrence_id": occurrence_id, "turn_key": None, **sighting}),
    ]


def turn_rows(turn: TurnRecord, line: JsonLine, checked: CheckedSurface) -> list[PendingRow]:
    """A turn, the surface it emitted and that sighting; the line is kept verbatim."""
    identity: Row = {"kind": turn.kind.value, "line": line.text}
    if turn.kind is not TurnKind.WORKBENCH_JOURNAL:
        # Outputs without a turn id: identical lines at two places are two turns.
        identity["line_number"] = line.number
    turn_key = content_id(identity)
    rows = surface_rows(checked, turn_key)
    row: Row = {
        "turn_key": turn_key,
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
    }
    return [*rows, PendingRow("turns", (turn_key,), row)]


RegistryProvider = Callable[[], TeachingRegistry]


class RecordReader:
    """The rows each input line contributes; its shape says what kind of record it is.

    One reader per batch: a Workbench journal's turn ids must run 1, 2, 3... within the file.
    """

    def __init__(self, registry: RegistryProvider) -> None:
        self.registry = registry
        self.journal = JournalSequence()

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
