"""JSON values -> records: CORE's shapes parse; invalid values name the offending field."""

from __future__ import annotations

import copy
import json

import pytest

from store.model.parsing import RecordError, parse_assessment, parse_frame
from store.model.records import ContractAssessment, SourceSpan


def assessment_json() -> dict:
    return {
        "candidate_organ": "unary_delta_transition",
        "missing_bindings": ["action_cue_unbound", "direction_unbound", "changed_object_unbound"],
        "unresolved_hazards": [],
        "runnable": False,
        "explanation": (
            "diagnostic candidate is not runnable: "
            "action_cue_unbound, direction_unbound, changed_object_unbound"
        ),
        "evidence_spans": [{"text": "gained", "start": 4, "end": 10, "sentence_index": None}],
    }


def frame_json() -> dict:
    return {
        "source_ref": "adr-0225:example-a",
        "problem_text": "Tom gained 3.",
        "contract_assessments": [assessment_json()],
    }


EXPECTED_ASSESSMENT = ContractAssessment(
    candidate_organ="unary_delta_transition",
    missing_bindings=("action_cue_unbound", "direction_unbound", "changed_object_unbound"),
    unresolved_hazards=(),
    runnable=False,
    explanation=(
        "diagnostic candidate is not runnable: "
        "action_cue_unbound, direction_unbound, changed_object_unbound"
    ),
    evidence_spans=(SourceSpan(text="gained", start=4, end=10, sentence_index=None),),
)


# --- good input ------------------------------------------------------------------------------


def test_frame_line_parses():
    frame = parse_frame(json.loads(json.dumps(frame_json())))
    assert frame.problem_text == "Tom gained 3."
    assert frame.source_ref == "adr-0225:example-a"
    assert frame.assessments == (EXPECTED_ASSESSMENT,)


def test_bare_assessment_line_parses():
    frame = parse_frame(assessment_json())
    assert frame.problem_text is None
    assert frame.source_ref is None
    assert frame.assessments == (EXPECTED_ASSESSMENT,)


def test_parse_assessment_directly():
    assert parse_assessment(assessment_json()) == EXPECTED_ASSESSMENT


def test_bare_assessment_with_problem_text_checks_spans():
    value = {**assessment_json(), "problem_text": "Tom gained 3."}
    assert parse_frame(value).assessments == (EXPECTED_ASSESSMENT,)
    value["problem_text"] = "Tom gains 3."
    with pytest.raises(RecordError, match=r"evidence_spans\[0\]"):
        parse_frame(value)


def test_frame_with_several_assessments_keeps_their_order():
    value = frame_json()
    second = assessment_json()
    second["candidate_organ"] = "temporal_tariff"
    second["runnable"] = True
    value["contract_assessments"].append(second)
    organs = [a.candidate_organ for a in parse_frame(value).assessments]
    assert organs == ["unary_delta_transition", "temporal_tariff"]


def test_empty_frame_parses_to_no_assessments():
    assert parse_frame({"problem_text": "x", "contract_assessments": []}).assessments == ()


def test_unknown_extra_keys_are_ignored():
    value = frame_json()
    value["bindings_version"] = 2
    value["contract_assessments"][0]["bindings"] = [
        {"role": "delta_quantity", "value": 3, "span": {"text": "3", "start": 11, "end": 12}}
    ]
    value["contract_assessments"][0]["evidence_spans"][0]["confidence"] = "exact"
    assert parse_frame(value).assessments == (EXPECTED_ASSESSMENT,)


def test_absent_sentence_index_is_null_and_integer_is_kept():
    value = frame_json()
    spans = value["contract_assessments"][0]["evidence_spans"]
    del spans[0]["sentence_index"]
    spans.append({"text": "3", "start": 11, "end": 12, "sentence_index": 0})
    parsed = parse_frame(value).assessments[0].evidence_spans
    assert parsed == (SourceSpan("gained", 4, 10, None), SourceSpan("3", 11, 12, 0))


def test_span_offsets_are_python_code_point_offsets():
    # "é" and the em dash are one code point each; an astral character is one code point too.
    text = "Zoé \u2014 gained \U0001f34e."
    value = {
        "problem_text": text,
        "contract_assessments": [
            {
                **assessment_json(),
                "evidence_spans": [
                    {"text": "\u2014", "start": 4, "end": 5},
                    {"text": "gained", "start": 6, "end": 12},
                    {"text": "\U0001f34e", "start": 13, "end": 14},
                    {"text": "", "start": 14, "end": 14},
                ],
            }
        ],
    }
    spans = parse_frame(value).assessments[0].evidence_spans
    assert [s.text for s in spans] == ["\u2014", "gained", "\U0001f34e", ""]


@pytest.mark.parametrize("key", ["source_ref", "case_id", "turn_id"])
def test_external_reference_keys(key):
    value = frame_json()
    del value["source_ref"]
    value[key] = "case-17"
    assert parse_frame(value).source_ref == "case-17"


# --- bad input: RecordError naming the field path ---------------------------------------------

A0 = "contract_assessments[0]"
S0 = f"{A0}.evidence_spans[0]"


def _set(path: tuple, value):
    def mutate(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _delete(path: tuple):
    def mutate(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


SPAN = ("contract_assessments", 0, "evidence_spans", 0)
ASSESSMENT = ("contract_assessments", 0)

BAD_FRAMES = [
    ("string start", _set((*SPAN, "start"), "4"), f"{S0}.start"),
    ("boolean start", _set((*SPAN, "start"), True), f"{S0}.start"),
    ("float start", _set((*SPAN, "start"), 4.0), f"{S0}.start"),
    ("null start", _set((*SPAN, "start"), None), f"{S0}.start"),
    ("string end", _set((*SPAN, "end"), "10"), f"{S0}.end"),
    ("float end", _set((*SPAN, "end"), 10.5), f"{S0}.end"),
    ("negative start", _set((*SPAN, "start"), -1), f"{S0}.start"),
    ("end before start", _set((*SPAN, "end"), 3), f"{S0}.end"),
    ("text mismatch", _set((*SPAN, "text"), "gains"), S0),
    ("offsets mismatch", _set((*SPAN, "start"), 5), S0),
    ("end past problem_text", _set((*SPAN, "end"), 40), f"{S0}.end"),
    # "Tom gained 3."[11:99] == "3." only because slicing clips: still not a real offset.
    ("clipped slice", _set(SPAN, {"text": "3.", "start": 11, "end": 99}), f"{S0}.end"),
    ("empty span past the end", _set(SPAN, {"text": "", "start": 50, "end": 50}), f"{S0}.end"),
    ("string sentence_index", _set((*SPAN, "sentence_index"), "0"), f"{S0}.sentence_index"),
    ("boolean sentence_index", _set((*SPAN, "sentence_index"), False), f"{S0}.sentence_index"),
    ("non-string span text", _set((*SPAN, "text"), 6), f"{S0}.text"),
    ("missing span text", _delete((*SPAN, "text")), S0),
    ("missing span start", _delete((*SPAN, "start")), S0),
    ("missing span end", _delete((*SPAN, "end")), S0),
    ("span not an object", _set(SPAN, ["gained", 4, 10]), S0),
    ("spans not a list", _set((*ASSESSMENT, "evidence_spans"), {}), f"{A0}.evidence_spans"),
    (
        "missing_bindings a string",
        _set((*ASSESSMENT, "missing_bindings"), "changed_object_unbound"),
        f"{A0}.missing_bindings",
    ),
    (
        "missing_bindings null",
        _set((*ASSESSMENT, "missing_bindings"), None),
        f"{A0}.missing_bindings",
    ),
    (
        "non-string label",
        _set((*ASSESSMENT, "missing_bindings", 1), 7),
        f"{A0}.missing_bindings[1]",
    ),
    (
        "unresolved_hazards an object",
        _set((*ASSESSMENT, "unresolved_hazards"), {"a": 1}),
        f"{A0}.unresolved_hazards",
    ),
    ("runnable a string", _set((*ASSESSMENT, "runnable"), "false"), f"{A0}.runnable"),
    ("runnable an integer", _set((*ASSESSMENT, "runnable"), 0), f"{A0}.runnable"),
    ("runnable null", _set((*ASSESSMENT, "runnable"), None), f"{A0}.runnable"),
    ("missing runnable", _delete((*ASSESSMENT, "runnable")), A0),
    ("missing organ", _delete((*ASSESSMENT, "candidate_organ")), A0),
    ("empty organ", _set((*ASSESSMENT, "candidate_organ"), ""), f"{A0}.candidate_organ"),
    ("organ not a string", _set((*ASSESSMENT, "candidate_organ"), 1), f"{A0}.candidate_organ"),
    ("missing missing_bindings", _delete((*ASSESSMENT, "missing_bindings")), A0),
    ("missing unresolved_hazards", _delete((*ASSESSMENT, "unresolved_hazards")), A0),
    ("missing explanation", _delete((*ASSESSMENT, "explanation")), A0),
    ("explanation not a string", _set((*ASSESSMENT, "explanation"), None), f"{A0}.explanation"),
    ("missing evidence_spans", _delete((*ASSESSMENT, "evidence_spans")), A0),
    ("assessment not an object", _set(ASSESSMENT, "unary_delta_transition"), A0),
    ("assessments not a list", _set(("contract_assessments",), {}), "contract_assessments"),
    ("problem_text not a string", _set(("problem_text",), 13), "problem_text"),
    ("source_ref not a string", _set(("source_ref",), 17), "source_ref"),
]


@pytest.mark.parametrize(
    ("mutate", "path"),
    [(m, p) for _, m, p in BAD_FRAMES],
    ids=[name for name, _, _ in BAD_FRAMES],
)
def test_invalid_frame_raises_record_error_naming_the_field(mutate, path):
    value = copy.deepcopy(frame_json())
    mutate(value)
    with pytest.raises(RecordError) as info:
        parse_frame(value)
    message = str(info.value)
    assert message.startswith(path), message
    # The path is followed by its reason, not by a deeper path component.
    assert message[len(path)] == ":", message


def test_span_may_end_exactly_at_the_end_of_problem_text():
    value = frame_json()
    value["contract_assessments"][0]["evidence_spans"] = [
        {"text": "3.", "start": 11, "end": 13},
        {"text": "", "start": 13, "end": 13},
    ]
    spans = parse_frame(value).assessments[0].evidence_spans
    assert spans == (SourceSpan("3.", 11, 13), SourceSpan("", 13, 13))


def test_missing_field_message_names_the_field():
    value = frame_json()
    del value["contract_assessments"][0]["evidence_spans"][0]["start"]
    with pytest.raises(RecordError, match=r"start"):
        parse_frame(value)


def test_second_assessment_is_named_by_its_index():
    value = frame_json()
    bad = assessment_json()
    bad["evidence_spans"][0]["start"] = "4"
    value["contract_assessments"].append(bad)
    with pytest.raises(RecordError) as info:
        parse_frame(value)
    assert str(info.value).startswith("contract_assessments[1].evidence_spans[0].start:")


def test_bare_assessment_errors_name_the_field():
    value = assessment_json()
    value["evidence_spans"][0]["start"] = True
    with pytest.raises(RecordError, match=r"evidence_spans\[0\]\.start"):
        parse_frame(value)
    value = assessment_json()
    value["missing_bindings"] = "direction_unbound"
    with pytest.raises(RecordError, match=r"missing_bindings"):
        parse_assessment(value)


@pytest.mark.parametrize(
    "value",
    [None, [], "frame", 3, {}, {"problem_text": "Tom gained 3."}, {"assessments": []}],
    ids=["null", "list", "string", "number", "empty", "no-assessments", "wrong-key"],
)
def test_values_that_are_no_record_are_rejected(value):
    with pytest.raises(RecordError):
        parse_frame(value)


def test_record_error_is_a_value_error():
    assert issubclass(RecordError, ValueError)
