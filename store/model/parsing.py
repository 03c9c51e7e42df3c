"""JSON values -> read-model records, with errors that name the offending field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.model.fields import RecordError
from store.model.fields import describe as _describe
from store.model.fields import integer as _integer
from store.model.fields import json_list as _list
from store.model.fields import json_object as _object
from store.model.fields import required as _field
from store.model.fields import string as _string
from store.model.fields import strings as _strings
from store.model.records import ContractAssessment, SourceSpan

# Keys a frame may use for its external reference (a case or turn id), first present wins.
REFERENCE_KEYS = ("source_ref", "case_id", "turn_id")


@dataclass(frozen=True, slots=True)
class AssessmentFrame:
    """Assessments CORE emitted for one problem, with the problem's context."""

    problem_text: str | None
    source_ref: str | None
    assessments: tuple[ContractAssessment, ...]


def parse_span(value: Any, where: str, problem_text: str | None = None) -> SourceSpan:
    # The common case, checked as below without building a field name per check.
    if type(value) is dict:
        text, start, end = value.get("text"), value.get("start"), value.get("end")
        index = value.get("sentence_index")
        if (type(text) is str and type(start) is int and type(end) is int
                and (index is None or type(index) is int) and 0 <= start <= end
                and (problem_text is None
                     or (end <= len(problem_text) and problem_text[start:end] == text))):
            return SourceSpan(text=text, start=start, end=end, sentence_index=index)
    return _checked_span(value, where, problem_text)


def _checked_span(value: Any, where: str, problem_text: str | None) -> SourceSpan:
    obj = _object(value, where)
    text = _string(_field(obj, "text", where), f"{where}.text")
    start = _integer(_field(obj, "start", where), f"{where}.start")
    end = _integer(_field(obj, "end", where), f"{where}.end")
    raw_index = obj.get("sentence_index")
    sentence_index = None if raw_index is None else _integer(raw_index, f"{where}.sentence_index")
    if start < 0:
        raise RecordError(f"{where}.start: {start} is negative")
    if end < start:
        raise RecordError(f"{where}.end: {end} is before start {start}")
    # Slicing clips out-of-range offsets ("abc"[2:99] == "c"), so bound them explicitly:
    # a span must point into the problem text, not merely compare equal to a clipped slice.
    if problem_text is not None and end > len(problem_text):
        raise RecordError(
            f"{where}.end: {end} is past the end of problem_text ({len(problem_text)} characters)"
        )
    if problem_text is not None and problem_text[start:end] != text:
        raise RecordError(
            f"{where}: text {text!r} does not match problem_text[{start}:{end}]"
            f" = {problem_text[start:end]!r}"
        )
    return SourceSpan(text=text, start=start, end=end, sentence_index=sentence_index)


def parse_assessment(
    value: Any, where: str = "assessment", problem_text: str | None = None
) -> ContractAssessment:
    obj = _object(value, where)
    organ = _string(_field(obj, "candidate_organ", where), f"{where}.candidate_organ",
                    non_empty=True)
    missing = _strings(_field(obj, "missing_bindings", where), f"{where}.missing_bindings")
    hazards = _strings(_field(obj, "unresolved_hazards", where), f"{where}.unresolved_hazards")
    runnable = _field(obj, "runnable", where)
    if not isinstance(runnable, bool):
        raise RecordError(f"{where}.runnable: expected a boolean, got {_describe(runnable)}")
    explanation = _string(_field(obj, "explanation", where), f"{where}.explanation")
    spans_where = f"{where}.evidence_spans"
    spans = tuple(
        parse_span(item, f"{spans_where}[{i}]", problem_text)
        for i, item in enumerate(_list(_field(obj, "evidence_spans", where), spans_where))
    )
    return ContractAssessment(
        candidate_organ=organ,
        missing_bindings=missing,
        unresolved_hazards=hazards,
        runnable=runnable,
        explanation=explanation,
        evidence_spans=spans,
    )


def _context(obj: dict[str, Any]) -> tuple[str | None, str | None]:
    problem_text = obj.get("problem_text")
    if problem_text is not None:
        _string(problem_text, "problem_text")
    source_ref = None
    for key in REFERENCE_KEYS:
        if obj.get(key) is not None:
            source_ref = _string(obj[key], key)
            break
    return problem_text, source_ref


def parse_frame(value: Any) -> AssessmentFrame:
    """A CORE frame `{"problem_text"?, "contract_assessments": [...]}` or one bare assessment."""
    obj = _object(value, "record")
    problem_text, source_ref = _context(obj)
    if "contract_assessments" in obj:
        items = _list(obj["contract_assessments"], "contract_assessments")
        assessments = tuple(
            parse_assessment(item, f"contract_assessments[{i}]", problem_text)
            for i, item in enumerate(items)
        )
    elif "candidate_organ" in obj:
        assessments = (parse_assessment(obj, "assessment", problem_text),)
    else:
        raise RecordError(
            "record: neither a frame (no 'contract_assessments') nor an assessment"
            " (no 'candidate_organ')"
        )
    return AssessmentFrame(problem_text=problem_text, source_ref=source_ref,
                           assessments=assessments)
