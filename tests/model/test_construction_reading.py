"""CORE's construction seam (core-workbench.md §4, "How a stored payload is read", rules 1-10),
case by case: what a journal line's construction_evidence comes to. Expected values are the
spec's cases, written out; the reasons' spellings are core-audit's (docs/graphql.md)."""

from __future__ import annotations

from typing import Any

import pytest
from construction_data import GAINED, PROBLEM, recorded_payload

from store.model.construction import ConstructionStatus, read_construction
from store.model.records import ContractAssessment, SourceSpan

MISSING = ConstructionStatus.MISSING_EVIDENCE


def test_a_recorded_payload_yields_its_assessments_as_contract_assessments() -> None:
    reading = read_construction(recorded_payload())
    assert reading.status is ConstructionStatus.RECORDED
    assert reading.missing_reason is None
    assert reading.problem_text == PROBLEM
    # family_id is not carried (CORE recomputes it from the organ); spans have no
    # sentence_index (the view drops it), so it hashes as null.
    assert reading.assessments == (
        ContractAssessment(
            candidate_organ="unary_delta_transition",
            missing_bindings=("changed_object_unbound", "direction_unbound"),
            unresolved_hazards=("action_cue_unbound", "direction_unbound"),
            runnable=False,
            explanation="diagnostic candidate is not runnable: changed_object_unbound, "
                        "direction_unbound",
            evidence_spans=(SourceSpan("gained", 4, 10, None),)),
        ContractAssessment(
            candidate_organ="quantity_entity_binding", runnable=True,
            explanation="quantity 3 binds locally.",
            evidence_spans=(SourceSpan("3", 11, 12, None),)),
    )


@pytest.mark.parametrize(("payload", "reason"), [
    # 1: nothing persisted
    (None, "construction_evidence_not_persisted"),
    # 2: not an object
    ("recorded", "construction_evidence_unsupported_shape"),
    ([recorded_payload()], "construction_evidence_unsupported_shape"),
    # 3: another schema version, named
    (recorded_payload(schema_version="construction_evidence_v2"),
     "construction_evidence_unsupported_schema_version: 'construction_evidence_v2'"),
    ({"status": "recorded"}, "construction_evidence_unsupported_schema_version: None"),
    # 4: the payload's own missing reason, or reason 1 when it is empty
    (recorded_payload(status="missing_evidence", missing_reason="problem_frame_unavailable"),
     "problem_frame_unavailable"),
    (recorded_payload(status="missing_evidence", missing_reason=""),
     "construction_evidence_not_persisted"),
    # 5: another status, named
    (recorded_payload(status="proposed"), "construction_evidence_unsupported_status: 'proposed'"),
    # 6: one reason per problem_text case
    (recorded_payload(problem_text=None), "construction_evidence_problem_text_missing"),
    (recorded_payload(problem_text=7), "construction_evidence_problem_text_not_a_string"),
])
def test_a_payload_that_is_not_recorded_evidence_says_why(payload: Any, reason: str) -> None:
    reading = read_construction(payload)
    assert (reading.status, reading.missing_reason, reading.assessments) == (MISSING, reason, ())


def _assessment(**fields: Any) -> dict[str, Any]:
    return {"candidate_organ": "unary_delta_transition", "missing_bindings": ["direction_unbound"],
            "evidence_spans": [GAINED], **fields}


@pytest.mark.parametrize(("payload", "why"), [
    (recorded_payload(contract_assessments=[_assessment(evidence_spans=[
        {"start": 4, "end": 10, "text": "gains"}])]),
     "contract_assessments[0].evidence_spans[0]: text 'gains' is not problem_text[4:10]"),
    (recorded_payload(contract_assessments=[_assessment(evidence_spans=[
        {"start": 4, "end": 99, "text": "gained"}])]),
     "contract_assessments[0].evidence_spans[0]: offsets 4:99 are outside problem_text"),
    (recorded_payload(contract_assessments=[_assessment(evidence_spans=[
        {"start": 4, "end": 4, "text": ""}])]),
     "contract_assessments[0].evidence_spans[0]: empty text"),
    (recorded_payload(contract_assessments=[_assessment(evidence_spans=[
        {"start": "four", "end": 10, "text": "gained"}])]),
     "contract_assessments[0].evidence_spans[0].start: int() refuses 'four'"),
    (recorded_payload(contract_assessments=[{"missing_bindings": []}]),
     "contract_assessments[0]: missing required key 'candidate_organ'"),
    # One bad item anywhere drops the whole record (spec §7, fact 13).
    (recorded_payload(mentions=[{"mention_id": "m1", "kind": "quantity", "surface": "3"}]),
     "mentions[0]: missing required key 'span'"),
    (recorded_payload(proposals=[{"family_id": "x", "relation_type": "y",
                                  "candidate_organ": "z", "status": "proposed",
                                  "role_obligations": [{"role": "r", "required": True}]}]),
     "proposals[0].role_obligations[0]: missing required key 'description'"),
    (recorded_payload(bound_relations=[{"relation_type": "unary_delta",
                                        "roles": [{"role": "delta_quantity"}]}]),
     "bound_relations[0].roles[0]: missing required key 'target_id'"),
])
def test_one_unreadable_part_drops_the_whole_record(payload: dict[str, Any], why: str) -> None:
    reading = read_construction(payload)
    assert reading.status is MISSING
    assert reading.missing_reason == f"construction_evidence_projection_failed: {why}"
    assert reading.assessments == ()


def test_values_are_coerced_as_cores_seam_coerces_them() -> None:
    """Rule 8: a spans field that is not a list reads as none. Rule 9: bool() on runnable (so
    the string "false" reads as true), str() on labels, int() on offsets."""
    reading = read_construction(recorded_payload(contract_assessments=[
        _assessment(runnable="false", evidence_spans="gained"),
        _assessment(missing_bindings=[7], evidence_spans=[
            {"start": "11", "end": 12.0, "text": "3"}]),
    ]))
    first, second = reading.assessments
    assert (first.runnable, first.evidence_spans) == (True, ())
    assert second.missing_bindings == ("7",)
    assert second.evidence_spans == (SourceSpan("3", 11, 12, None),)


def test_absent_optional_fields_take_the_views_defaults() -> None:
    """ContractAssessmentView: runnable false, explanation "", lists empty."""
    reading = read_construction(recorded_payload(contract_assessments=[
        {"candidate_organ": "temporal_tariff"}]))
    assert reading.assessments == (ContractAssessment(candidate_organ="temporal_tariff"),)
