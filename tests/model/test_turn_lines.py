"""Turn lines (core-interop.md §4-§5): shapes classify, valid lines parse, invalid ones name
the field; the journal's turn_ids run 1, 2, 3, ..."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from turn_data import DISCLOSURE, LIGHT_SURFACE, TRACE_HASH, WORKED_DIGEST, WORKED_LINE

from store.model.fields import RecordError
from store.model.surface_records import SurfaceRecord
from store.model.teaching_surface import GroundingSource
from store.model.turns import (
    JournalSequence,
    NormativeClearance,
    TurnKind,
    TurnRecord,
    parse_turn_line,
    turn_line_kind,
)


def parse(text: str) -> TurnRecord:
    return parse_turn_line(orjson.loads(text), text)


def journal_line(**changes: Any) -> str:
    """The worked example without a digest (so edits are not digest failures), changed."""
    entry = orjson.loads(WORKED_LINE)
    del entry["journal_digest"]
    for key, value in changes.items():
        if value is ...:
            del entry[key]
        else:
            entry[key] = value
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def chat_response() -> dict[str, Any]:
    """A ChatResponse-shaped line (§4): no subject, intent, turn or trace hash."""
    return {
        "prompt": "Why does light exist?",
        "surface": LIGHT_SURFACE,
        "grounding_source": "teaching",
        "epistemic_state": "decoded",
        "normative_clearance": "violated",
        "normative_detail": "acknowledge_uncertainty",
        "pre_decoration_surface": LIGHT_SURFACE,
        "register_canonical_surface": LIGHT_SURFACE,
        "refusal_reason": None,
        "dispatch_trace": {
            "attempts": [["teaching", "admitted", "teaching_standard_surface_found"]],
            "selected": "teaching",
        },
    }


def turn_event() -> dict[str, Any]:
    """A TurnEvent-shaped line (§4): `turn` from 0, trace_hash defaulting to ""."""
    return {
        "turn": 0,
        "surface": LIGHT_SURFACE,
        "grounding_source": "teaching",
        "epistemic_state": "decoded",
        "normative_clearance": "violated",
        "trace_hash": "",
        "refusal_emitted": False,
        "hedge_injected": False,
    }


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- shapes ---------------------------------------------------------------------------


def test_turn_line_kind_classifies_each_shape():
    assert turn_line_kind(orjson.loads(WORKED_LINE)) is TurnKind.WORKBENCH_JOURNAL
    assert turn_line_kind({"turn_id": 3, "journal_digest": ""}) is TurnKind.WORKBENCH_JOURNAL
    assert turn_line_kind({"turn_id": 3, "trace_integrity": "x"}) is TurnKind.WORKBENCH_JOURNAL
    assert turn_line_kind({"grounding_source": "teaching", "epistemic_state": "decoded",
                           "journal_digest": ""}) is TurnKind.WORKBENCH_JOURNAL
    assert turn_line_kind(chat_response()) is TurnKind.CHAT_RUNTIME
    assert turn_line_kind(turn_event()) is TurnKind.TURN_EVENT
    assert turn_line_kind({"grounding_source": "none", "normative_clearance": "cleared"}) is (
        TurnKind.CHAT_RUNTIME
    )


@pytest.mark.parametrize(
    "value",
    [
        {"grounding_source": "teaching", "surface": LIGHT_SURFACE, "subject": "light",
         "intent": "cause"},
        {"grounding_source": "vault", "surface": "s", "turn_id": "3", "prompt": "p"},
        {"problem_text": "Tom gained apples.", "contract_assessments": []},
        {"turn": 0, "epistemic_state": "decoded", "normative_clearance": "violated"},  # §6
        [1, 2],
        "text",
        None,
    ],
    ids=["surface-record", "surface-record-with-turn-id", "core-frame", "telemetry", "list",
         "string", "null"],
)
def test_turn_line_kind_is_none_for_other_lines(value):
    assert turn_line_kind(value) is None
    with pytest.raises(RecordError, match=r"^record: "):
        parse_turn_line(value, dumps(value))


# --- journal lines --------------------------------------------------------------------


def test_worked_example_parses_to_a_turn_record():
    assert parse(WORKED_LINE) == TurnRecord(
        kind=TurnKind.WORKBENCH_JOURNAL,
        turn_id=1,
        prompt="Why does light exist?",
        surface=LIGHT_SURFACE,
        timestamp="2026-01-01T00:00:00+00:00",
        grounding_source=GroundingSource.TEACHING,
        epistemic_state="decoded",
        normative_clearance=NormativeClearance.VIOLATED,
        normative_detail=None,
        verdict_identity=None,
        verdict_safety="cleared",
        verdict_ethics="violated",
        refusal_emitted=False,
        hedge_injected=False,
        trace_hash=TRACE_HASH,
        trace_integrity="pipeline_trace",
        journal_digest=WORKED_DIGEST,
    )


def test_journal_surface_record():
    assert parse(WORKED_LINE).surface_record() == SurfaceRecord(
        grounding_source=GroundingSource.TEACHING,
        surface=LIGHT_SURFACE,
        prompt="Why does light exist?",
        turn_id="1",
    )


@pytest.mark.parametrize(
    ("trace_hash", "integrity"),
    [(TRACE_HASH, "pipeline_trace"), ("", "legacy_unhashed"), (None, "legacy_unhashed")],
)
def test_trace_integrity_derived_when_missing(trace_hash, integrity):
    record = parse(journal_line(trace_hash=trace_hash, trace_integrity=...))
    assert record.trace_integrity == integrity
    assert record.trace_hash == (trace_hash or None)


def test_trace_integrity_kept_as_written():
    assert parse(journal_line(trace_integrity="legacy_unhashed")).trace_integrity == (
        "legacy_unhashed"
    )


def test_optional_journal_fields_may_be_missing():
    line = journal_line(**{key: ... for key in (
        "leeway_evidence", "pipeline_record", "field_evidence", "construction_evidence",
        "meta_rh_evidence", "practice_evidence", "trace_integrity",
    )})
    assert parse(line).turn_id == 1


def test_unknown_key_is_rejected():
    with pytest.raises(RecordError, match=r"^session_id: not a journal field"):
        parse(journal_line(session_id="s1"))


@pytest.mark.parametrize(
    "key",
    ["turn_id", "timestamp", "trace_hash", "prompt", "surface", "articulation_surface",
     "walk_surface", "grounding_source", "epistemic_state", "normative_clearance", "verdicts",
     "refusal_emitted", "hedge_injected", "checkpoint_emitted", "proposal_candidates",
     "turn_cost_ms"],
)
def test_missing_required_key_is_rejected(key):
    with pytest.raises(RecordError, match=f"^record: missing field '{key}'"):
        parse(journal_line(**{key: ...}))


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"turn_id": True}, "turn_id"),
        ({"turn_id": 0}, "turn_id"),
        ({"turn_id": "1"}, "turn_id"),
        ({"turn_id": 1.0}, "turn_id"),
        ({"timestamp": None}, "timestamp"),
        ({"trace_hash": 7}, "trace_hash"),
        ({"prompt": None}, "prompt"),
        ({"surface": None}, "surface"),
        ({"articulation_surface": 1}, "articulation_surface"),
        ({"walk_surface": []}, "walk_surface"),
        ({"grounding_source": None}, "grounding_source"),
        ({"grounding_source": "empty_vault"}, "grounding_source"),
        ({"epistemic_state": None}, "epistemic_state"),
        ({"normative_clearance": "refused"}, "normative_clearance"),
        ({"verdicts": None}, "verdicts"),
        ({"verdicts": {"identity": None, "safety": None}}, "verdicts"),
        ({"verdicts": {"identity": None, "safety": None, "ethics": None, "extra": None}},
         "verdicts"),
        ({"verdicts": {"identity": {"outcome": "passed", "runtime_detail": ""},
                       "safety": None, "ethics": None}}, r"verdicts\.identity\.outcome"),
        ({"verdicts": {"identity": None, "safety": {"outcome": "cleared"}, "ethics": None}},
         r"verdicts\.safety"),
        ({"verdicts": {"identity": None, "safety": None,
                       "ethics": {"outcome": "violated", "runtime_detail": None}}},
         r"verdicts\.ethics\.runtime_detail"),
        ({"refusal_emitted": 0}, "refusal_emitted"),
        ({"hedge_injected": "false"}, "hedge_injected"),
        ({"checkpoint_emitted": None}, "checkpoint_emitted"),
        ({"proposal_candidates": {}}, "proposal_candidates"),
        ({"proposal_candidates": [{"candidate_id": "c1"}]}, r"proposal_candidates\[0\]"),
        ({"proposal_candidates": ["c1"]}, r"proposal_candidates\[0\]"),
        ({"turn_cost_ms": 1.5}, "turn_cost_ms"),
        ({"turn_cost_ms": False}, "turn_cost_ms"),
        ({"pipeline_record": []}, "pipeline_record"),
        ({"meta_rh_evidence": "x"}, "meta_rh_evidence"),
        ({"trace_integrity": None}, "trace_integrity"),
    ],
)
def test_bad_field_is_rejected_naming_it(changes, field):
    with pytest.raises(RecordError, match=f"^{field}: "):
        parse(journal_line(**changes))


def test_valid_variants_parse():
    record = parse(journal_line(
        articulation_surface=None,
        walk_surface=None,
        normative_clearance="suppressed",
        refusal_emitted=True,
        verdicts={"identity": {"outcome": "unassessable", "runtime_detail": "no score"},
                  "safety": None, "ethics": None},
        proposal_candidates=[{"candidate_id": "c1", "source_kind": "teaching"}],
        pipeline_record={"status": "recorded"},
        turn_id=7,
    ))
    assert record.turn_id == 7
    assert record.normative_clearance is NormativeClearance.SUPPRESSED
    assert record.refusal_emitted is True
    assert (record.verdict_identity, record.verdict_safety, record.verdict_ethics) == (
        "unassessable", None, None
    )


def test_journal_line_keeps_disclosure_surfaces_out_of_the_record():
    assert parse(journal_line(surface=DISCLOSURE)).surface == DISCLOSURE


# --- ChatResponse and TurnEvent lines -------------------------------------------------


def test_chat_runtime_line_without_subject_or_intent():
    value = chat_response()
    record = parse(dumps(value))
    assert record == TurnRecord(
        kind=TurnKind.CHAT_RUNTIME,
        turn_id=None,
        prompt="Why does light exist?",
        surface=LIGHT_SURFACE,
        timestamp=None,
        grounding_source=GroundingSource.TEACHING,
        epistemic_state="decoded",
        normative_clearance=NormativeClearance.VIOLATED,
        normative_detail="acknowledge_uncertainty",
        verdict_identity=None,
        verdict_safety=None,
        verdict_ethics=None,
        refusal_emitted=None,
        hedge_injected=None,
        trace_hash=None,
        trace_integrity=None,
        journal_digest=None,
    )
    assert record.surface_record() == SurfaceRecord(
        grounding_source=GroundingSource.TEACHING, surface=LIGHT_SURFACE,
        prompt="Why does light exist?",
    )


def test_chat_runtime_line_keeps_subject_and_intent_hints():
    value = chat_response() | {"subject": "light", "intent": "cause"}
    record = parse(dumps(value))
    assert (record.subject, record.intent) == ("light", "cause")
    assert (record.surface_record().subject, record.surface_record().intent) == (
        "light", "cause"
    )


def test_chat_runtime_line_with_null_surface():
    value = {"grounding_source": "none", "surface": None, "epistemic_state": "undetermined"}
    record = parse(dumps(value))
    assert record.surface is None
    assert record.normative_clearance is None


def test_turn_event_line():
    record = parse(dumps(turn_event()))
    assert record.kind is TurnKind.TURN_EVENT
    assert record.turn_id == 0
    assert record.trace_hash is None  # TurnEvent's default ""
    assert (record.refusal_emitted, record.hedge_injected) == (False, False)
    assert record.surface_record().turn_id == "0"
    hashed = parse(dumps(turn_event() | {"turn": 4, "trace_hash": TRACE_HASH}))
    assert (hashed.turn_id, hashed.trace_hash) == (4, TRACE_HASH)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"grounding_source": "empty_vault"}, "grounding_source"),
        ({"grounding_source": None}, "grounding_source"),
        ({"surface": 3}, "surface"),
        ({"prompt": ["p"]}, "prompt"),
        ({"epistemic_state": 1}, "epistemic_state"),
        ({"normative_clearance": "ok"}, "normative_clearance"),
        ({"normative_detail": 1}, "normative_detail"),
        ({"trace_hash": False}, "trace_hash"),
        ({"refusal_emitted": "no"}, "refusal_emitted"),
        ({"turn": -1}, "turn"),
        ({"turn": True}, "turn"),
        ({"turn": "0"}, "turn"),
    ],
)
def test_bad_runtime_field_is_rejected_naming_it(changes, field):
    with pytest.raises(RecordError, match=f"^{field}: "):
        parse(dumps(turn_event() | changes))


def test_unknown_grounding_source_rejected_on_a_chat_line():
    with pytest.raises(RecordError, match=r"^grounding_source: 'teach' is not one of"):
        parse(dumps(chat_response() | {"grounding_source": "teach"}))


# --- journal order --------------------------------------------------------------------


def test_sequence_accepts_one_two_three():
    sequence = JournalSequence()
    assert [sequence.check(n) for n in (1, 2, 3)] == [None, None, None]


def test_sequence_rejects_a_gap():
    sequence = JournalSequence()
    assert sequence.check(1) is None
    assert sequence.check(3) == "turn_id: expected 2, found 3 (a gap)"
    assert sequence.check(2) is None  # a rejected id does not advance the sequence


def test_sequence_rejects_a_repeat():
    sequence = JournalSequence()
    assert sequence.check(1) is None
    assert sequence.check(1) == "turn_id: expected 2, found 1 (a repeat)"


def test_sequence_rejects_a_start_at_two():
    assert JournalSequence().check(2) == "turn_id: expected 1, found 2 (a gap)"
