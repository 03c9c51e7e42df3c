"""Projection of refused assessments into residuals: ADR-0225 examples, ids, rules."""

from __future__ import annotations

import hashlib
import json

import pytest
from spec_adr0225 import spec_residual_id

from store.model.parsing import parse_frame
from store.model.projection import project_assessment, project_residuals, residual_id
from store.model.records import ContractAssessment, ContractResidual, SourceSpan
from store.model.taxonomy import ResidualKind

UD_ORGAN = "unary_delta_transition"
UD_FAMILY = "state_change.unary_delta"


def refused_frame(problem_text: str, missing, hazards, spans, organ=UD_ORGAN) -> dict:
    """A frame shaped like CORE's output for one refused assessment."""
    codes = [*missing, *hazards]
    return {
        "problem_text": problem_text,
        "contract_assessments": [
            {
                "candidate_organ": organ,
                "missing_bindings": list(missing),
                "unresolved_hazards": list(hazards),
                "runnable": False,
                "explanation": "diagnostic candidate is not runnable: " + ", ".join(codes),
                "evidence_spans": spans,
            }
        ],
    }


def project_frame(frame: dict) -> list[ContractResidual]:
    return project_residuals(parse_frame(frame).assessments)


def by_code(residuals: list[ContractResidual]) -> dict[str, ContractResidual]:
    return {r.residual_code: r for r in residuals}


def spans_of(residual: ContractResidual) -> list[dict]:
    return [s.as_dict() for s in residual.evidence_spans]


# --- ADR-0225 Examples A-D -------------------------------------------------------------------

GAINED_4 = {"text": "gained", "start": 4, "end": 10, "sentence_index": None}


def test_example_a_tom_gained_3():
    frame = refused_frame(
        "Tom gained 3.",
        ["action_cue_unbound", "direction_unbound", "changed_object_unbound"],
        [],
        [GAINED_4],
    )
    residuals = project_frame(frame)
    assert sorted(r.residual_code for r in residuals) == [
        "action_cue_unbound",
        "changed_object_unbound",
        "direction_unbound",
    ]
    shown = by_code(residuals)["changed_object_unbound"]
    assert shown.candidate_organ == "unary_delta_transition"
    assert shown.family_id == "state_change.unary_delta"
    assert shown.residual_kind is ResidualKind.MISSING_ROLE
    assert shown.residual_kind.value == "missing_role"
    assert shown.source_axis.value == "role"
    assert spans_of(shown) == [GAINED_4]
    assert shown.explanation == "The changed object role is unbound."
    assert shown.residual_id == spec_residual_id(
        UD_ORGAN, "missing_role", "changed_object_unbound", [GAINED_4]
    )
    for r in residuals:  # the two codes the ADR leaves out are role gaps too
        assert (r.residual_kind.value, r.source_axis.value) == ("missing_role", "role")
        assert r.family_id == UD_FAMILY
        assert spans_of(r) == [GAINED_4]
    assert [r.residual_id for r in residuals] == sorted(r.residual_id for r in residuals)


def test_example_b_tom_gained_apples():
    frame = refused_frame("Tom gained apples.", ["delta_quantity_unbound"], [], [GAINED_4])
    [residual] = project_frame(frame)
    assert residual.candidate_organ == "unary_delta_transition"
    assert residual.family_id == "state_change.unary_delta"
    assert residual.residual_kind.value == "missing_role"
    assert residual.residual_code == "delta_quantity_unbound"
    assert residual.source_axis.value == "role"
    assert spans_of(residual) == [GAINED_4]
    assert residual.explanation == "The delta quantity role is unbound."
    assert residual.residual_id == spec_residual_id(
        UD_ORGAN, "missing_role", "delta_quantity_unbound", [GAINED_4]
    )


def test_example_c_passive_topology():
    span = {"text": "gained", "start": 14, "end": 20, "sentence_index": None}
    frame = refused_frame("3 apples were gained by Tom.", [], ["passive_voice_unsupported"], [span])
    [residual] = project_frame(frame)
    assert residual.candidate_organ == "unary_delta_transition"
    assert residual.family_id == "state_change.unary_delta"
    assert residual.residual_kind.value == "unsupported_topology"
    assert residual.residual_code == "passive_voice_unsupported"
    assert residual.source_axis.value == "topology"
    assert spans_of(residual) == [span]
    assert residual.explanation == "Passive voice topology is unsupported."
    assert residual.residual_id == spec_residual_id(
        UD_ORGAN, "unsupported_topology", "passive_voice_unsupported", [span]
    )


def test_example_d_unit_object_conflict():
    span = {"text": "degrees", "start": 13, "end": 20, "sentence_index": None}
    frame = refused_frame("Tom gained 3 degrees.", [], ["unit_object_conflict"], [span])
    [residual] = project_frame(frame)
    assert residual.candidate_organ == "unary_delta_transition"
    assert residual.family_id == "state_change.unary_delta"
    assert residual.residual_kind.value == "unit_object_conflict"
    assert residual.residual_code == "unit_object_conflict"
    assert residual.source_axis.value == "unit_object"
    assert spans_of(residual) == [span]
    assert residual.explanation == "Quantity unit conflicts with object type."
    assert residual.residual_id == spec_residual_id(
        UD_ORGAN, "unit_object_conflict", "unit_object_conflict", [span]
    )


# --- residual_id ---------------------------------------------------------------------------

KNOWN_VECTOR = "e56fa420ce0acc64071fc5ef819d740d54f1ab17f1a268728a0ef490784ffe32"


def test_known_id_vector_via_residual_id():
    span = SourceSpan(text="gained", start=4, end=10, sentence_index=0)
    got = residual_id(UD_ORGAN, ResidualKind.MISSING_ROLE, "changed_object_unbound", [span])
    assert got == KNOWN_VECTOR


def test_known_id_vector_via_projection():
    assessment = ContractAssessment(
        candidate_organ=UD_ORGAN,
        missing_bindings=("changed_object_unbound",),
        runnable=False,
        explanation="diagnostic candidate is not runnable: changed_object_unbound",
        evidence_spans=(SourceSpan(text="gained", start=4, end=10, sentence_index=0),),
    )
    [residual] = project_assessment(assessment)
    assert residual.residual_id == KNOWN_VECTOR


def test_spec_recipe_reproduces_the_known_vector():
    # Guards the tests' own written-out recipe.
    span = {"text": "gained", "start": 4, "end": 10, "sentence_index": 0}
    assert spec_residual_id(UD_ORGAN, "missing_role", "changed_object_unbound", [span]) == (
        KNOWN_VECTOR
    )


def _id(spans: list[SourceSpan], organ=UD_ORGAN, code="changed_object_unbound") -> str:
    assessment = ContractAssessment(
        candidate_organ=organ, missing_bindings=(code,), evidence_spans=tuple(spans)
    )
    [residual] = project_assessment(assessment)
    return residual.residual_id


def test_sentence_index_null_and_zero_give_different_ids():
    null_id = _id([SourceSpan("gained", 4, 10, None)])
    zero_id = _id([SourceSpan("gained", 4, 10, 0)])
    assert zero_id == KNOWN_VECTOR
    assert null_id != zero_id
    assert null_id == spec_residual_id(
        UD_ORGAN,
        "missing_role",
        "changed_object_unbound",
        [{"text": "gained", "start": 4, "end": 10, "sentence_index": None}],
    )


def test_span_order_changes_the_id():
    a = SourceSpan("84", 10, 12)
    b = SourceSpan("84 degrees", 10, 20)
    c = SourceSpan("degrees", 13, 20)
    ids = {_id([a, b, c]), _id([c, b, a]), _id([b, a, c])}
    assert len(ids) == 3


@pytest.mark.parametrize(
    "text",
    ["\u00e9t\u00e9", "gagn\u00e9", "\u2014", "Tom\u2014gained", "\u5f97\u5230", "\U0001f34e"],
    ids=["accents", "gagne", "em-dash", "em-dash-inside", "cjk", "astral"],
)
def test_non_ascii_span_text_hashes_per_the_canonical_recipe(text):
    span = {"text": text, "start": 0, "end": len(text), "sentence_index": None}
    # docs/design.md's recipe, spelled out: UTF-8, non-ASCII kept, sorted keys, no whitespace.
    payload = {
        "candidate_organ": UD_ORGAN,
        "residual_kind": "missing_role",
        "residual_code": "changed_object_unbound",
        "evidence_spans": [span],
    }
    encoded = json.dumps(
        payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True
    ).encode("utf-8")
    assert text.encode("utf-8") in encoded  # not \\u-escaped
    expected = hashlib.sha256(encoded).hexdigest()
    assert _id([SourceSpan(text, 0, len(text))]) == expected
    # The ASCII-escaped encoding would name a different id.
    escaped = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode("ascii")
    assert hashlib.sha256(escaped).hexdigest() != expected


def test_id_is_64_lowercase_hex():
    rid = _id([SourceSpan("gained", 4, 10)])
    assert len(rid) == 64
    assert set(rid) <= set("0123456789abcdef")


def test_explanation_is_not_hashed():
    spans = (SourceSpan("gained", 4, 10),)
    ids = set()
    for explanation in ["diagnostic candidate is not runnable: changed_object_unbound", "", "x"]:
        [r] = project_assessment(
            ContractAssessment(
                candidate_organ=UD_ORGAN,
                missing_bindings=("changed_object_unbound",),
                explanation=explanation,
                evidence_spans=spans,
            )
        )
        ids.add(r.residual_id)
    assert len(ids) == 1


@pytest.mark.parametrize(
    "organ",
    ["unary_delta_transition", "temporal_tariff", "nested_fraction_remainder_total"],
)
def test_family_id_is_not_hashed(organ):
    # The recipe covers organ, kind, code and spans only; family_id (null or not) is not in it.
    span = {"text": "gained", "start": 4, "end": 10, "sentence_index": None}
    code = "changed_object_unbound"
    assert _id([SourceSpan("gained", 4, 10)], organ=organ, code=code) == spec_residual_id(
        organ, "missing_role", code, [span]
    )


def test_kind_is_hashed_by_its_lower_case_value():
    span = {"text": "gained", "start": 4, "end": 10, "sentence_index": None}
    code = "unbound_base_quantity"  # unmapped: falls back
    assert _id([SourceSpan("gained", 4, 10)], code=code) == spec_residual_id(
        UD_ORGAN, "contract_gap_unclassified", code, [span]
    )


# --- projection rules (core-facts "Projection, as CORE implements it") ------------------------


def test_runnable_assessment_yields_nothing_even_with_labels():
    assessment = ContractAssessment(
        candidate_organ=UD_ORGAN,
        missing_bindings=("changed_object_unbound", "direction_unbound"),
        unresolved_hazards=("passive_voice_unsupported",),
        runnable=True,
        explanation="unary delta: Tom gains 3 apples.",
        evidence_spans=(SourceSpan("gained", 4, 10),),
    )
    assert project_assessment(assessment) == []
    assert project_residuals([assessment]) == []


def test_codes_are_missing_bindings_then_hazards_deduplicated():
    assessment = ContractAssessment(
        candidate_organ=UD_ORGAN,
        missing_bindings=("direction_unbound", "changed_object_unbound", "direction_unbound"),
        unresolved_hazards=("passive_voice_unsupported", "changed_object_unbound"),
        runnable=False,
        evidence_spans=(SourceSpan("gained", 4, 10),),
    )
    residuals = project_assessment(assessment)
    assert [r.residual_code for r in residuals] == [
        "direction_unbound",
        "changed_object_unbound",
        "passive_voice_unsupported",
    ]
    assert len({r.residual_id for r in project_residuals([assessment])}) == 3


def test_code_in_both_lists_projects_once():
    assessment = ContractAssessment(
        candidate_organ=UD_ORGAN,
        missing_bindings=("unit_object_conflict",),
        unresolved_hazards=("unit_object_conflict",),
        evidence_spans=(SourceSpan("degrees", 13, 20),),
    )
    assert [r.residual_code for r in project_residuals([assessment])] == ["unit_object_conflict"]


def test_refused_assessment_without_codes_yields_nothing():
    assessment = ContractAssessment(candidate_organ=UD_ORGAN, runnable=False)
    assert project_residuals([assessment]) == []


def test_spans_are_kept_verbatim_and_in_order():
    # Overlapping, unsorted spans as CORE really emits them: never merged, widened or sorted.
    spans = (
        SourceSpan("degrees", 13, 20, None),
        SourceSpan("84", 10, 12, 0),
        SourceSpan("84 degrees", 10, 20, None),
        SourceSpan("", 5, 5, 1),
    )
    assessment = ContractAssessment(
        candidate_organ=UD_ORGAN,
        missing_bindings=("changed_object_unbound", "unit_object_conflict"),
        evidence_spans=spans,
    )
    expected = [
        {"text": "degrees", "start": 13, "end": 20, "sentence_index": None},
        {"text": "84", "start": 10, "end": 12, "sentence_index": 0},
        {"text": "84 degrees", "start": 10, "end": 20, "sentence_index": None},
        {"text": "", "start": 5, "end": 5, "sentence_index": 1},
    ]
    residuals = project_residuals([assessment])
    assert len(residuals) == 2
    for residual in residuals:
        assert spans_of(residual) == expected
        assert residual.evidence_spans == spans


def test_output_is_sorted_by_residual_id_across_assessments():
    a1 = ContractAssessment(
        candidate_organ=UD_ORGAN,
        missing_bindings=("action_cue_unbound", "direction_unbound", "changed_object_unbound"),
        evidence_spans=(SourceSpan("gained", 4, 10),),
    )
    a2 = ContractAssessment(
        candidate_organ="percent_partition",
        missing_bindings=("original_whole_unbound",),
        unresolved_hazards=("partition_subgroups_not_distinct",),
        evidence_spans=(SourceSpan("40%", 0, 3),),
    )
    residuals = project_residuals([a1, a2])
    ids = [r.residual_id for r in residuals]
    assert len(ids) == 5
    assert ids == sorted(ids)
    gained = [{"text": "gained", "start": 4, "end": 10, "sentence_index": None}]
    pct = [{"text": "40%", "start": 0, "end": 3, "sentence_index": None}]
    expected = sorted(
        [
            spec_residual_id(UD_ORGAN, "missing_role", "action_cue_unbound", gained),
            spec_residual_id(UD_ORGAN, "missing_role", "direction_unbound", gained),
            spec_residual_id(UD_ORGAN, "missing_role", "changed_object_unbound", gained),
            spec_residual_id("percent_partition", "missing_role", "original_whole_unbound", pct),
            spec_residual_id(
                "percent_partition", "hazard_blocked", "partition_subgroups_not_distinct", pct
            ),
        ]
    )
    assert ids == expected


def test_same_assessment_twice_gives_two_equal_residuals():
    assessment = ContractAssessment(
        candidate_organ=UD_ORGAN,
        missing_bindings=("changed_object_unbound",),
        evidence_spans=(SourceSpan("gained", 4, 10),),
    )
    residuals = project_residuals([assessment, assessment])
    assert len(residuals) == 2
    assert residuals[0] == residuals[1]


def test_same_content_in_different_problems_gives_the_same_id():
    # "Tom gained apples." and "Sam gained pears.": the span "gained" sits at 4..10 in both.
    tom = refused_frame("Tom gained apples.", ["delta_quantity_unbound"], [], [GAINED_4])
    sam = refused_frame("Sam gained pears.", ["delta_quantity_unbound"], [], [GAINED_4])
    assessments = [*parse_frame(tom).assessments, *parse_frame(sam).assessments]
    residuals = project_residuals(assessments)
    assert len(residuals) == 2
    assert residuals[0].residual_id == residuals[1].residual_id
    assert residuals[0].residual_id == spec_residual_id(
        UD_ORGAN, "missing_role", "delta_quantity_unbound", [GAINED_4]
    )


def test_equal_ids_from_different_assessments_are_all_kept():
    # Equal ids name equal content (the assessment explanation is not part of a residual), so
    # ties are kept, never collapsed, and the sorted output is the same whatever the input order.
    tom = ContractAssessment(
        candidate_organ=UD_ORGAN,
        missing_bindings=("delta_quantity_unbound",),
        explanation="tom",
        evidence_spans=(SourceSpan("gained", 4, 10),),
    )
    other = ContractAssessment(
        candidate_organ=UD_ORGAN,
        missing_bindings=("direction_unbound",),
        evidence_spans=(SourceSpan("gained", 4, 10),),
    )
    sam = ContractAssessment(
        candidate_organ=UD_ORGAN,
        missing_bindings=("delta_quantity_unbound",),
        explanation="sam",
        evidence_spans=(SourceSpan("gained", 4, 10),),
    )
    forward = project_residuals([tom, other, sam])
    backward = project_residuals([sam, other, tom])
    assert forward == backward  # residuals do not depend on assessment explanations
    ids = [r.residual_id for r in forward]
    assert ids == sorted(ids)
    assert len(ids) == 3 and len(set(ids)) == 2


def test_projection_accepts_any_iterable():
    assessment = ContractAssessment(
        candidate_organ=UD_ORGAN,
        missing_bindings=("changed_object_unbound", "direction_unbound"),
        evidence_spans=(SourceSpan("gained", 4, 10),),
    )
    from_list = project_residuals([assessment])
    from_generator = project_residuals(a for a in [assessment])
    assert from_list == from_generator
