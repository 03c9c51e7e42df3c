"""Two Workbench journals whose lines carry every TurnJournalEntry field (core-workbench.md §3)
and every construction_evidence_v1 field (§4), written out by hand from the spec's shapes
(never CORE's files): the store the Workbench documents' tests read (graphql/workbench/).

Journal A (batch 1), four turns:
1. every optional field set: leeway, a recorded pipeline record with stages and edges, field
   evidence, construction evidence with all five lists (construction_data.py: "Tom gained 3."
   refuses with three codes), meta_rh evidence and a sealed practice trace whose residual_ids
   are those three residuals;
2. a legacy turn (no trace_hash), teaching-grounded, every optional field null;
3. construction evidence refusing with a label of the map (unit_object_conflict) and one
   outside it (unbound_base_quantity, the fallback);
4. construction evidence CORE's seam reports missing, with its own reason; a prompt of two
   lines, longer than CORE's excerpt.
Journal B (batch 2), one turn: "Tom gained 3." again, so its three residuals are seen twice.
"""

from __future__ import annotations

from typing import Any

from construction_data import GAINED, PROBLEM, RESIDUALS, recorded_payload
from turn_data import DISCLOSURE, LIGHT_SURFACE, journal_entry, journal_line

TRACE_1 = "7a" * 32
TRACE_3 = "3c" * 32
TRACE_4 = "4d" * 32
TRACE_B = "b1" * 32
PRACTICE_RESIDUAL_IDS = sorted(RESIDUALS.values())  # CORE's residual_ids: sorted ascending

LEEWAY = {"class_name": "arithmetic_word_problem", "license": "PROPOSE", "theta": 0.25,
          "claim_disclosure": "proposal_only", "source_digest": "sha256:" + "5e" * 32,
          "calibration_evidence_ref": "calibration/leeway_v1.json"}
PIPELINE = {
    "schema_version": "cognitive_pipeline_record_v1", "status": "recorded",
    "missing_reason": None, "trace_hash": TRACE_1, "versor_condition": 1.45208915114381e-07,
    "field_digest": None,  # CORE's pipeline record hard-codes it (core-workbench.md §7.8)
    "stages": [
        {"stage_id": "input", "label": "Input", "status": "recorded",
         "summary": "prompt received", "detail": {"characters": 13}},
        {"stage_id": "intent", "label": "Intent", "status": "recorded",
         "summary": "arithmetic word problem", "detail": {"intent": "quantity_change"}},
        {"stage_id": "trace_hash", "label": "Trace hash", "status": "recorded",
         "summary": "sealed", "detail": {"trace_hash": TRACE_1}},
    ],
    "edges": [{"from_stage": "input", "to_stage": "intent", "label": "classify"},
              {"from_stage": "intent", "to_stage": "trace_hash", "label": None}],
}
FIELD = {"schema_version": "field_evidence_v1", "status": "recorded", "missing_reason": None,
         "trace_hash": TRACE_1, "versor_condition": 1.45208915114381e-07,
         "versor_condition_ceiling": 1e-06, "field_valid": True,
         "field_digest": "sha256:" + "f1" * 32, "parent_field_digest": "sha256:" + "f0" * 32,
         "transition_inner_product": 0.875}
META_RH = {"schema_version": "meta_rh_evidence_v1", "status": "recorded",
           "note": "an object CORE's journal carries verbatim (its shape is not in the spec)"}
SEALED_TRACE = {
    "trace_id": "71" * 32, "trace_policy_version": "sealed_practice_trace_v1",
    "input_digest": "12" * 32, "problem_frame_digest": "13" * 32,
    "original_contract_assessment_id": "14" * 32, "search_gate_decision_id": "15" * 32,
    "compute_budget_id": "16" * 32, "geometric_search_run_id": "17" * 32,
    "practice_disposition": "sealed_exhausted_no_candidate",
    "residual_ids": PRACTICE_RESIDUAL_IDS, "candidate_attempt_ids": [],
    "candidate_attempt_binding_ids": [], "replay_result_ids": [], "replay_refusal_ids": [],
    "upstream_identity_chain": ["14" * 32, "15" * 32], "trace_records": ["search_gate"],
    "evidence_spans": [{**GAINED, "sentence_index": 0}],
    "created_by_policy": "sealed_practice_trace_v1",
    "explanation": "no candidate closed the refused contract",
}
PRACTICE = {"schema_version": "practice_evidence_v1", "turn_id": 1, "status": "recorded",
            "missing_reason": None, "record_kind": "sealed_trace",
            "practice_disposition": "sealed_exhausted_no_candidate", "chain": [],
            "sealed_trace": SEALED_TRACE, "trace_refusal": None, "diagnostic_only": True,
            "serving_allowed": False, "mutation_allowed": False,
            "replay_execution_allowed": False, "replay_executed_by_workbench": False}
CANDIDATES = [{"candidate_id": "cand-tom-1", "source_kind": "discovery"},
              {"candidate_id": "cand-tom-2", "source_kind": "discovery"}]
VERDICTS_1 = {"identity": {"outcome": "violated", "runtime_detail": "tone,warmth"},
              "safety": {"outcome": "cleared", "runtime_detail": ""},
              "ethics": {"outcome": "unassessable", "runtime_detail": ""}}
ARTICULATION = "I can't say yet: what changed in Tom's count is not bound."

APPLES = "Tom has 3 apples."
APPLES_EVIDENCE = recorded_payload(
    problem_text=APPLES, proposals=[], mentions=[], bindings=[], bound_relations=[],
    contract_assessments=[{
        "candidate_organ": "quantity_entity_binding", "family_id": "binding.quantity_entity",
        "missing_bindings": ["unit_object_conflict"],
        "unresolved_hazards": ["unbound_base_quantity"], "runnable": False,
        "explanation": "diagnostic candidate is not runnable: unit_object_conflict",
        "evidence_spans": [{"start": 8, "end": 9, "text": "3"},
                           {"start": 10, "end": 16, "text": "apples"}]}])
# Longer than CORE's 120-character excerpt, and of two lines (the timeline shows the first).
VAULT_PROMPT = ("Is the vault open?\nI ask because the answer it stored last week was about "
                "another door, and the two doors share one key: which is it now?")
NOT_ATTEMPTED = recorded_payload(status="missing_evidence",
                                 missing_reason="construction_not_attempted",
                                 problem_text=None, proposals=[], mentions=[], bindings=[],
                                 bound_relations=[], contract_assessments=[])


def journal_a() -> list[dict[str, Any]]:
    return [
        journal_entry(
            1, PROBLEM, DISCLOSURE, "none", timestamp="2026-07-30T18:01:01.123456+00:00",
            trace_hash=TRACE_1, articulation_surface=ARTICULATION,
            walk_surface="Tom — gained — 3", epistemic_state="undetermined",
            normative_clearance="unassessable", verdicts=VERDICTS_1, refusal_emitted=True,
            hedge_injected=True, checkpoint_emitted=True, proposal_candidates=CANDIDATES,
            turn_cost_ms=42, leeway_evidence=LEEWAY, pipeline_record=PIPELINE,
            field_evidence=FIELD, construction_evidence=recorded_payload(),
            meta_rh_evidence=META_RH, practice_evidence=PRACTICE),
        journal_entry(
            2, "Why does light exist?", LIGHT_SURFACE, "teaching",
            timestamp="2026-07-30T18:02:00.000000+00:00", trace_hash=None,
            trace_integrity="legacy_unhashed", walk_surface=None, turn_cost_ms=9),
        journal_entry(
            3, APPLES, "pack — a ratified lexicon.", "pack",
            timestamp="2026-07-30T18:03:00.000000+00:00", trace_hash=TRACE_3,
            epistemic_state="evidenced_incomplete", normative_clearance="cleared",
            turn_cost_ms=15, construction_evidence=APPLES_EVIDENCE),
        journal_entry(
            4, VAULT_PROMPT, "vault — the stored answer.", "vault",
            timestamp="2026-07-30T18:04:00.000000+00:00", trace_hash=TRACE_4,
            epistemic_state="verified", normative_clearance="cleared", turn_cost_ms=3,
            construction_evidence=NOT_ATTEMPTED),
    ]


def journal_b() -> list[dict[str, Any]]:
    return [journal_entry(1, "Tom gained 3, again.", DISCLOSURE, "none",
                          timestamp="2026-08-01T09:00:00.000000+00:00", trace_hash=TRACE_B,
                          epistemic_state="undetermined", normative_clearance="unassessable",
                          turn_cost_ms=40, construction_evidence=recorded_payload())]


def journal_lines(entries: list[dict[str, Any]]) -> list[str]:
    """The lines CORE writes (canonical JSON with its journal_digest), in order."""
    return [journal_line(entry) for entry in entries]
