"""CORE turn records: Workbench journal lines, ChatResponse lines and TurnEvent lines.

core-interop.md §4 (fields) and §5 (journal). CORE's own reader checks almost nothing; this
one rejects what CORE would never write, naming the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Final

from store.model.canonical import content_id
from store.model.fields import (
    RecordError,
    describe,
    integer,
    json_list,
    json_object,
    required,
    string,
)
from store.model.journal_digest import DIGEST_PATTERN, derived_trace_integrity, journal_digest
from store.model.surface_records import SurfaceRecord
from store.model.teaching_surface import GroundingSource

__all__ = [
    "JOURNAL_OPTIONAL_KEYS",
    "JOURNAL_REQUIRED_KEYS",
    "JournalSequence",
    "NormativeClearance",
    "TurnKind",
    "TurnRecord",
    "journal_digest",
    "parse_turn_line",
    "stored_turn_key",
    "turn_key",
    "turn_line_kind",
]


class TurnKind(StrEnum):
    WORKBENCH_JOURNAL = "workbench_journal"
    CHAT_RUNTIME = "chat_runtime"
    TURN_EVENT = "turn_event"


class NormativeClearance(StrEnum):
    SUPPRESSED = "suppressed"
    VIOLATED = "violated"
    UNASSESSABLE = "unassessable"
    CLEARED = "cleared"


class VerdictOutcome(StrEnum):
    CLEARED = "cleared"
    VIOLATED = "violated"
    UNASSESSABLE = "unassessable"


JOURNAL_REQUIRED_KEYS: Final = (
    "turn_id", "timestamp", "trace_hash", "prompt", "surface", "articulation_surface",
    "walk_surface", "grounding_source", "epistemic_state", "normative_clearance", "verdicts",
    "refusal_emitted", "hedge_injected", "checkpoint_emitted", "proposal_candidates",
    "turn_cost_ms",
)
EVIDENCE_KEYS: Final = (
    "leeway_evidence", "pipeline_record", "field_evidence", "construction_evidence",
    "meta_rh_evidence", "practice_evidence",
)
JOURNAL_OPTIONAL_KEYS: Final = (*EVIDENCE_KEYS, "trace_integrity", "journal_digest")
_JOURNAL_KEYS: Final = frozenset(JOURNAL_REQUIRED_KEYS + JOURNAL_OPTIONAL_KEYS)
VERDICT_KEYS: Final = ("identity", "safety", "ethics")
_CANDIDATE_KEYS: Final = frozenset({"candidate_id", "source_kind"})
_JOURNAL_ONLY_KEYS: Final = frozenset({"journal_digest", "trace_integrity"})
_OUTCOMES: Final = frozenset(o.value for o in VerdictOutcome)


@dataclass(frozen=True, slots=True)
class TurnRecord:
    kind: TurnKind
    turn_id: int | None  # journal turn_id (from 1) or TurnEvent `turn` (from 0)
    prompt: str | None
    surface: str | None
    timestamp: str | None
    grounding_source: GroundingSource
    epistemic_state: str | None  # as CORE wrote it
    normative_clearance: NormativeClearance | None
    normative_detail: str | None
    verdict_identity: str | None  # the verdict's outcome, None when there was no verdict
    verdict_safety: str | None
    verdict_ethics: str | None
    refusal_emitted: bool | None
    hedge_injected: bool | None
    trace_hash: str | None  # "" and null both None: CORE's default for "not hashed"
    trace_integrity: str | None
    journal_digest: str | None
    subject: str | None = None
    intent: str | None = None

    def surface_record(self) -> SurfaceRecord:
        return SurfaceRecord(
            grounding_source=self.grounding_source,
            surface=self.surface,
            intent=self.intent,
            subject=self.subject,
            prompt=self.prompt,
            turn_id=str(self.turn_id) if self.turn_id is not None else None,
        )


def turn_line_kind(value: Any) -> TurnKind | None:
    """Which turn shape a decoded line has; None for anything else (surface records, frames)."""
    if not isinstance(value, dict):
        return None
    # journal_digest and trace_integrity are written by the journal only, so even a line
    # that lost its turn_id is a (broken) journal line, not a ChatResponse.
    if all(key in value for key in JOURNAL_REQUIRED_KEYS) or _JOURNAL_ONLY_KEYS & value.keys():
        return TurnKind.WORKBENCH_JOURNAL
    if "grounding_source" in value and (
        "epistemic_state" in value or "normative_clearance" in value
    ):
        return TurnKind.TURN_EVENT if "turn" in value else TurnKind.CHAT_RUNTIME
    return None


def parse_turn_line(value: Any, text: str) -> TurnRecord:
    """A turn record from a decoded line and its text as read (the digest hashes the text)."""
    kind = turn_line_kind(value)
    if kind is None:
        json_object(value, "record")
        raise RecordError(
            "record: not a turn line (needs the journal keys, or grounding_source with"
            " epistemic_state or normative_clearance)"
        )
    # The line is stored verbatim: a key given twice reads as one value here (the last) and
    # as another in a reader that keeps the first.
    json.loads(text, object_pairs_hook=_unique_keys)
    record = (_parse_journal_line(value, text) if kind is TurnKind.WORKBENCH_JOURNAL
              else _parse_runtime_line(value, kind))
    if record.timestamp is not None:
        _check_timestamp(record.timestamp)
    return record


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise RecordError(f"{key}: the key appears twice in one object")
        seen.add(key)
    return dict(pairs)


def _check_timestamp(timestamp: str) -> None:
    """ISO 8601 date and time, as CORE writes it (Python's isoformat(), in UTC)."""
    try:
        parsed = datetime.fromisoformat(timestamp)
    except ValueError:
        parsed = None
    if parsed is None or len(timestamp) < 19 or timestamp[10] not in "T ":
        raise RecordError(f"timestamp: {timestamp!r} is not an ISO 8601 date and time "
                          "(e.g. 2026-07-30T18:01:02.123456+00:00)")


def _grounding_source(value: Any) -> GroundingSource:
    raw = string(value, "grounding_source")
    try:
        return GroundingSource(raw)
    except ValueError:
        allowed = ", ".join(s.value for s in GroundingSource)
        raise RecordError(f"grounding_source: {raw!r} is not one of {allowed}") from None


def _clearance(value: Any) -> NormativeClearance:
    raw = string(value, "normative_clearance")
    try:
        return NormativeClearance(raw)
    except ValueError:
        allowed = ", ".join(c.value for c in NormativeClearance)
        raise RecordError(f"normative_clearance: {raw!r} is not one of {allowed}") from None


def _optional_string(value: Any, where: str) -> str | None:
    return None if value is None else string(value, where)


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise RecordError(f"{where}: expected a boolean, got {describe(value)}")
    return value


def _verdict_outcome(value: Any, where: str) -> str | None:
    if value is None:
        return None
    verdict = json_object(value, where)
    if set(verdict) != {"outcome", "runtime_detail"}:
        raise RecordError(f"{where}: expected exactly outcome and runtime_detail,"
                          f" got {sorted(verdict)}")
    outcome = string(verdict["outcome"], f"{where}.outcome")
    if outcome not in _OUTCOMES:
        allowed = ", ".join(o.value for o in VerdictOutcome)
        raise RecordError(f"{where}.outcome: {outcome!r} is not one of {allowed}")
    string(verdict["runtime_detail"], f"{where}.runtime_detail")
    return outcome


def _verdicts(value: Any) -> dict[str, str | None]:
    verdicts = json_object(value, "verdicts")
    if set(verdicts) != set(VERDICT_KEYS):
        raise RecordError(f"verdicts: expected exactly identity, safety and ethics,"
                          f" got {sorted(verdicts)}")
    return {key: _verdict_outcome(verdicts[key], f"verdicts.{key}") for key in VERDICT_KEYS}


def _proposal_candidates(value: Any) -> None:
    for i, item in enumerate(json_list(value, "proposal_candidates")):
        candidate = json_object(item, f"proposal_candidates[{i}]")
        if set(candidate) != _CANDIDATE_KEYS:
            raise RecordError(f"proposal_candidates[{i}]: expected exactly candidate_id and"
                              f" source_kind, got {sorted(candidate)}")


def _journal_turn_id(value: Any) -> int:
    turn_id = integer(value, "turn_id")
    if turn_id < 1:
        raise RecordError(f"turn_id: must be at least 1, got {turn_id}")
    return turn_id


def _checked_digest(obj: dict[str, Any], text: str) -> str | None:
    stated = string(obj.get("journal_digest", ""), "journal_digest")
    if not stated:
        return None  # CORE's default: an entry written before digests existed
    if not DIGEST_PATTERN.fullmatch(stated):
        raise RecordError(f"journal_digest: {stated!r} is not sha256: and 64 lowercase hex")
    computed = journal_digest(text, obj)
    if computed != stated:
        raise RecordError(f"journal_digest: the line says {stated}, its content hashes to"
                          f" {computed}")
    return stated


def _parse_journal_line(value: Any, text: str) -> TurnRecord:
    obj = json_object(value, "record")
    unknown = sorted(set(obj) - _JOURNAL_KEYS)
    if unknown:
        raise RecordError(f"{unknown[0]}: not a journal field")
    for key in JOURNAL_REQUIRED_KEYS:
        required(obj, key, "record")
    turn_id = _journal_turn_id(obj["turn_id"])
    trace_hash = _optional_string(obj["trace_hash"], "trace_hash")
    for key in ("timestamp", "prompt", "surface", "epistemic_state"):
        string(obj[key], key)
    for key in ("articulation_surface", "walk_surface"):
        _optional_string(obj[key], key)
    source = _grounding_source(obj["grounding_source"])
    clearance = _clearance(obj["normative_clearance"])
    outcomes = _verdicts(obj["verdicts"])
    flags = {key: _boolean(obj[key], key)
             for key in ("refusal_emitted", "hedge_injected", "checkpoint_emitted")}
    _proposal_candidates(obj["proposal_candidates"])
    integer(obj["turn_cost_ms"], "turn_cost_ms")
    for key in EVIDENCE_KEYS:
        if obj.get(key) is not None:
            json_object(obj[key], key)
    trace_integrity = (string(obj["trace_integrity"], "trace_integrity")
                       if "trace_integrity" in obj else derived_trace_integrity(trace_hash))
    return TurnRecord(
        kind=TurnKind.WORKBENCH_JOURNAL,
        turn_id=turn_id,
        prompt=obj["prompt"],
        surface=obj["surface"],
        timestamp=obj["timestamp"],
        grounding_source=source,
        epistemic_state=obj["epistemic_state"],
        normative_clearance=clearance,
        normative_detail=None,  # the journal keeps verdicts, not ChatResponse's detail string
        verdict_identity=outcomes["identity"],
        verdict_safety=outcomes["safety"],
        verdict_ethics=outcomes["ethics"],
        refusal_emitted=flags["refusal_emitted"],
        hedge_injected=flags["hedge_injected"],
        trace_hash=trace_hash or None,
        trace_integrity=trace_integrity,
        journal_digest=_checked_digest(obj, text),
    )


def _optional_boolean(obj: dict[str, Any], key: str) -> bool | None:
    return None if obj.get(key) is None else _boolean(obj[key], key)


def _parse_runtime_line(value: Any, kind: TurnKind) -> TurnRecord:
    """ChatResponse and TurnEvent lines; their many other keys (dispatch_trace, ...) are
    ignored."""
    obj = json_object(value, "record")
    turn_id: int | None = None
    if kind is TurnKind.TURN_EVENT:
        turn_id = integer(obj["turn"], "turn")
        if turn_id < 0:
            raise RecordError(f"turn: must be at least 0, got {turn_id}")
    source = _grounding_source(required(obj, "grounding_source", "record"))
    clearance = obj.get("normative_clearance")
    texts = {
        key: _optional_string(obj.get(key), key)
        for key in ("prompt", "surface", "timestamp", "epistemic_state", "normative_detail",
                    "trace_hash", "subject", "intent")
    }
    return TurnRecord(
        kind=kind,
        turn_id=turn_id,
        prompt=texts["prompt"],
        surface=texts["surface"],
        timestamp=texts["timestamp"],
        grounding_source=source,
        epistemic_state=texts["epistemic_state"],
        normative_clearance=_clearance(clearance) if clearance is not None else None,
        normative_detail=texts["normative_detail"],
        verdict_identity=None,
        verdict_safety=None,
        verdict_ethics=None,
        refusal_emitted=_optional_boolean(obj, "refusal_emitted"),
        hedge_injected=_optional_boolean(obj, "hedge_injected"),
        trace_hash=texts["trace_hash"] or None,
        trace_integrity=None,
        journal_digest=None,
        subject=texts["subject"],
        intent=texts["intent"],
    )


class JournalSequence:
    """One input file's turn_ids: 1, 2, 3, ... with no gap and no repeat.

    A rejected id does not advance the sequence, so the ids that pass stay gapless.
    """

    __slots__ = ("_expected",)

    def __init__(self, expected: int = 1) -> None:
        self._expected = expected  # above 1: the input continues a journal stored up to here

    @property
    def expected(self) -> int:
        return self._expected

    def check(self, turn_id: int) -> str | None:
        if turn_id == self._expected:
            self._expected += 1
            return None
        problem = "a repeat" if turn_id < self._expected else "a gap"
        return f"turn_id: expected {self._expected}, found {turn_id} ({problem})"


def turn_key(kind: TurnKind, text: str, line_number: int) -> str:
    """The stored turn's id: its verbatim line; outside a journal (no turn id to tell two
    identical outputs apart) also its line number in the input."""
    journal = kind is TurnKind.WORKBENCH_JOURNAL
    return stored_turn_key(kind.value, text, None if journal else line_number)


def stored_turn_key(kind: str, line: str, line_number: int | None) -> str:
    """The same recipe over a stored turn: its line number counts when it has one."""
    identity: dict[str, Any] = {"kind": kind, "line": line}
    if line_number is not None:
        identity["line_number"] = line_number
    return content_id(identity)
