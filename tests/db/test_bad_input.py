"""A file with any bad line writes nothing: exit 2, `PATH:LINE: reason` for each bad line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import cli
from jsonl_files import write_jsonl
from log_leaves import history
from raw_reads import dump
from store_support import gained_frame, row_counts

GOOD = json.dumps(gained_frame("Ann gained 4.", "quantity_unbound")).encode()


def _frame_with_span(start: int, end: int, text: str) -> bytes:
    record = gained_frame("Bob gained 7.", "direction_unbound")
    record["contract_assessments"][0]["evidence_spans"] = [
        {"text": text, "start": start, "end": end, "sentence_index": None}]
    return json.dumps(record).encode()


def _with_runnable(value: object) -> bytes:
    record = gained_frame("Bob gained 7.", "direction_unbound")
    record["contract_assessments"][0]["runnable"] = value
    return json.dumps(record).encode()


# Each bad line goes on line 2, after a good line 1.
BAD_LINES = {
    "malformed JSON": (b'{"problem_text": "Tom gained 3.", ', "malformed JSON"),
    "not an object": (b"[1, 2, 3]", "record: expected an object, got a list"),
    "neither frame nor assessment": (b'{"problem_text": "x"}', "record: neither a frame"),
    "runnable is a string": (
        _with_runnable("no"), "contract_assessments[0].runnable: expected a boolean, got a string"),
    "missing_bindings is a string": (
        json.dumps({"candidate_organ": "fraction_decrease", "missing_bindings": "scale_unbound",
                    "unresolved_hazards": [], "runnable": False, "explanation": "",
                    "evidence_spans": []}).encode(),
        "assessment.missing_bindings: expected a list, got a string"),
    "span start below zero": (
        _frame_with_span(-1, 3, "Bob"),
        "contract_assessments[0].evidence_spans[0].start: -1 is negative"),
    "span end before start": (
        _frame_with_span(10, 4, ""),
        "contract_assessments[0].evidence_spans[0].end: 4 is before start 10"),
    "span text not the problem text": (
        _frame_with_span(4, 10, "lost"),
        "contract_assessments[0].evidence_spans[0]: text 'lost' does not match"
        " problem_text[4:10] = 'gained'"),
    "span start is a float": (
        _frame_with_span(4, 10, "gained").replace(b'"start": 4', b'"start": 4.0'),
        "contract_assessments[0].evidence_spans[0].start: expected an integer, got a number"),
    "invalid UTF-8": (b'{"problem_text": "Tom \xff gained"}', "invalid UTF-8 at byte 22"),
    "a 10 MB line": (b'{"problem_text": "' + b"x" * 10_000_000 + b'"}',
                     "line is longer than 1048576 bytes"),
}


@pytest.fixture
def store_with_rows(examples_store: Path) -> Path:
    """Bad input must leave existing rows and the ledger exactly as they were."""
    return examples_store


@pytest.mark.parametrize("case", list(BAD_LINES))
def test_a_bad_line_rejects_the_file_naming_its_line(
    store_with_rows: Path, tmp_path: Path, case: str
) -> None:
    bad_line, reason = BAD_LINES[case]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(GOOD + b"\n" + bad_line + b"\n" + GOOD + b"\n")
    counts, ledger = row_counts(store_with_rows), history(store_with_rows)

    result = cli("ingest", "--db", store_with_rows, path)

    assert result.exit_code == 2
    assert result.stderr.startswith(f"{path}:2: {reason}"), result.stderr
    assert f"{path}: rejected, nothing written" in result.stderr
    assert row_counts(store_with_rows) == counts
    assert history(store_with_rows) == ledger


def test_an_empty_file_is_rejected(store_with_rows: Path, tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    before = dump(store_with_rows)

    result = cli("ingest", "--db", store_with_rows, path)

    assert result.exit_code == 2
    assert f"{path}: no records: the input is empty" in result.stderr
    assert dump(store_with_rows) == before


def test_a_file_of_blank_lines_is_rejected_as_empty(store_with_rows: Path, tmp_path: Path) -> None:
    path = tmp_path / "blank.jsonl"
    path.write_bytes(b"\n  \n\n")
    result = cli("ingest", "--db", store_with_rows, path)
    assert result.exit_code == 2
    assert f"{path}: no records: the input is empty" in result.stderr


def test_line_numbers_count_blank_lines(store_with_rows: Path, tmp_path: Path) -> None:
    path = tmp_path / "gaps.jsonl"
    path.write_bytes(GOOD + b"\n\n\n" + b"{oops\n")
    result = cli("ingest", "--db", store_with_rows, path)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{path}:4: malformed JSON")


def test_every_bad_line_of_a_file_is_reported(store_with_rows: Path, tmp_path: Path) -> None:
    path = tmp_path / "several.jsonl"
    path.write_bytes(b"\n".join([
        GOOD,
        b"{oops",
        b'{"problem_text": "' + b"y" * 2_000_000 + b'"}',
        GOOD,
        _frame_with_span(-1, 3, "Bob"),
        b"\xc3\x28",
    ]) + b"\n")
    before = dump(store_with_rows)

    result = cli("ingest", "--db", store_with_rows, path)

    assert result.exit_code == 2
    reported = [line.split(": ", 1)[0] for line in result.stderr.splitlines()]
    assert reported == [f"{path}:2", f"{path}:3", f"{path}:5", f"{path}:6", f"{path}"]
    assert dump(store_with_rows) == before


def test_other_files_in_the_same_command_still_ingest(
    store_with_rows: Path, tmp_path: Path
) -> None:
    before = tmp_path / "before.jsonl"
    write_jsonl(before, [gained_frame("Ann gained 4 pears.", "pronoun_antecedent_unresolved")])
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(GOOD + b"\n{oops\n")
    after = tmp_path / "after.jsonl"
    write_jsonl(after, [gained_frame("Cal gained 9 kg.", "unit_object_conflict")])
    counts = row_counts(store_with_rows)

    result = cli("ingest", "--db", store_with_rows, before, bad, after)

    assert result.exit_code == 2
    errors = result.stderr.splitlines()
    assert len(errors) == 2
    assert errors[0].startswith(f"{bad}:2: malformed JSON: ")  # then the parser's own words
    assert errors[1] == f"{bad}: rejected, nothing written"
    assert result.stdout.strip() == (
        "3 file(s), 4 line(s): contract_assessments 2 new/0 present, contract_residuals 2 new/0"
        " present, residual_occurrences 2 new/0 present; 1 file(s) rejected")
    assert row_counts(store_with_rows) == {
        "ingest_batches": counts["ingest_batches"] + 2,
        "contract_assessments": counts["contract_assessments"] + 2,
        "contract_residuals": counts["contract_residuals"] + 2,
        "residual_occurrences": counts["residual_occurrences"] + 2,
        "tree_heads": counts["tree_heads"] + 2,  # one per batch
    }


def test_a_bad_line_in_json_mode_is_in_the_summary(store_with_rows: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(GOOD + b"\n[]\n")
    result = cli("ingest", "--json", "--db", store_with_rows, bad)
    assert result.exit_code == 2
    batch = json.loads(result.stdout)["batches"][0]
    assert (batch["rejected"], batch["rejected_lines"], batch["batch_id"]) == (True, 1, None)
    assert batch["errors"] == [f"{bad}:2: record: expected an object, got a list"]
