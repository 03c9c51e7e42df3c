"""Construction evidence for the construction tests, typed out from core-workbench.md §4 (its
shapes) and ADR-0225 (example A's problem, "Tom gained 3."; core-facts.md: it refuses with
three codes). Never CORE's data."""

from __future__ import annotations

from typing import Any

PROBLEM = "Tom gained 3."

# The turn key of the journal line `journal_line(journal_entry(1, "Tom gained 3.", DISCLOSURE,
# "none", construction_evidence=recorded_payload()))` (sha256 of its kind and line).
TURN_KEY = "c62a6382c9a8a00945ddfc0f1f7ca1ae691538b77850ebf52542e69679aa8eb3"
# Its assessments in payload order: the refused unary delta, the runnable binding.
REFUSED_ID = "85c05fbe7133f2e905ce85b69659c62227230f3f8fec586522b8a7e64d073e22"
RUNNABLE_ID = "53270f582bf6eae709ef12b83be91797ae8bb8eabddc36c61dd63c0f307c6807"
# The refused one's residuals, by code (missing bindings then hazards, de-duplicated); the
# same ids ADR-0225 example A's frame gives (examples/adr_0225_frames.jsonl).
RESIDUALS = {
    "changed_object_unbound": "be3e33436b53ca065b212fb84907805390aba675d25f1d1b52adcec10743cf7d",
    "direction_unbound": "39b60db8dbcc8445553872431a5623d9ef0bb0ef99832fbe61beacaa92b52299",
    "action_cue_unbound": "54b43aa2d7a9ec73c55f994d92be93d9f3148b28f72ac43c1f99fdf360f5fc42",
}

GAINED = {"start": 4, "end": 10, "text": "gained"}  # problem_text[4:10]
THREE = {"start": 11, "end": 12, "text": "3"}


def refused_assessment() -> dict[str, Any]:
    """A ContractAssessmentView as the seam carries it: family_id (unchecked), no
    sentence_index in its spans."""
    return {
        "candidate_organ": "unary_delta_transition",
        "family_id": "state_change.unary_delta",
        "missing_bindings": ["changed_object_unbound", "direction_unbound"],
        "unresolved_hazards": ["action_cue_unbound", "direction_unbound"],
        "runnable": False,
        "explanation": "diagnostic candidate is not runnable: changed_object_unbound, "
                       "direction_unbound",
        "evidence_spans": [GAINED],
    }


def runnable_assessment() -> dict[str, Any]:
    return {
        "candidate_organ": "quantity_entity_binding",
        "family_id": "binding.quantity_entity",
        "missing_bindings": [],
        "unresolved_hazards": [],
        "runnable": True,
        "explanation": "quantity 3 binds locally.",
        "evidence_spans": [THREE],
    }


def recorded_payload(**fields: Any) -> dict[str, Any]:
    """A `construction_evidence_v1` payload with every list of §4, status recorded."""
    payload: dict[str, Any] = {
        "schema_version": "construction_evidence_v1",
        "turn_id": 1,
        "status": "recorded",
        "missing_reason": None,
        "problem_text": PROBLEM,
        "proposals": [{
            "family_id": "state_change.unary_delta",
            "relation_type": "unary_delta",
            "candidate_organ": "unary_delta_transition",
            "status": "proposed",
            "evidence_spans": [GAINED],
            "role_obligations": [{"role": "changed_object", "required": True,
                                  "description": "the object whose count changes"}],
            "diagnostic_only": True,
            "serving_allowed": False,
        }],
        "mentions": [{"mention_id": "m1", "kind": "quantity", "surface": "3", "span": THREE,
                      "fact_id": None}],
        "bindings": [{"binding_type": "quantity_entity", "source_mention_id": "m1",
                      "target_mention_id": "m0", "evidence_spans": [THREE]}],
        "bound_relations": [{"relation_type": "unary_delta",
                             "roles": [{"role": "delta_quantity", "target_id": "m1",
                                        "evidence_spans": [THREE]}],
                             "evidence_spans": [GAINED]}],
        "contract_assessments": [refused_assessment(), runnable_assessment()],
        "diagnostic_only": True,
        "serving_allowed": False,
    }
    payload.update(fields)
    return payload


def equivalent_frame(turn_key: str) -> dict[str, Any]:
    """The frame a user would ingest for the same assessments, written out by hand: the
    problem text, the turn's key as source_ref, CORE's ContractAssessment shape (no
    family_id; spans with a null sentence_index)."""
    def assessment(view: dict[str, Any]) -> dict[str, Any]:
        return {**{k: v for k, v in view.items() if k != "family_id"},
                "evidence_spans": [{**s, "sentence_index": None}
                                   for s in view["evidence_spans"]]}
    return {"problem_text": PROBLEM, "source_ref": turn_key,
            "contract_assessments": [assessment(refused_assessment()),
                                     assessment(runnable_assessment())]}


def construction_journal(turns: int = 4) -> list[bytes]:
    """A Workbench journal of `turns` turns, each carrying recorded construction evidence
    (two assessments each): rows in turn_constructions and turn_assessments for fixtures."""
    from turn_data import DISCLOSURE, journal_entry, journal_line

    return [(journal_line(journal_entry(n, PROBLEM, DISCLOSURE, "none",
                                        construction_evidence=recorded_payload())) + "\n"
             ).encode("utf-8") for n in range(1, turns + 1)]
