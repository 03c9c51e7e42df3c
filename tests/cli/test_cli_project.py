"""`core-audit project [PATH|-]`, run as the installed console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import subprocess_environ
from spec_adr0225 import spec_residual_id

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "adr_0225_frames.jsonl"
CORE_AUDIT = Path(sys.executable).with_name("core-audit")

RESIDUAL_KEYS = [
    "residual_id",
    "candidate_organ",
    "family_id",
    "residual_kind",
    "residual_code",
    "source_axis",
    "evidence_spans",
    "explanation",
]
UD = "unary_delta_transition"


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(CORE_AUDIT), "project", *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=subprocess_environ(),
        cwd=REPO,
        check=False,
        timeout=120,
    )


def frame_line(problem_text, organ, missing, hazards, spans, runnable=False) -> bytes:
    value = {
        "problem_text": problem_text,
        "contract_assessments": [
            {
                "candidate_organ": organ,
                "missing_bindings": missing,
                "unresolved_hazards": hazards,
                "runnable": runnable,
                "explanation": "diagnostic candidate is not runnable: "
                + ", ".join(missing + hazards),
                "evidence_spans": spans,
            }
        ],
    }
    return json.dumps(value, ensure_ascii=False).encode("utf-8") + b"\n"


def residual_lines(stdout: bytes) -> list[bytes]:
    assert stdout.endswith(b"\n") or stdout == b""
    return stdout.splitlines()


def decoded(stdout: bytes) -> list[dict]:
    return [json.loads(line.decode("utf-8")) for line in residual_lines(stdout)]


GAINED_4 = {"text": "gained", "start": 4, "end": 10, "sentence_index": None}


def expected_example_residuals() -> list[dict]:
    """The residuals of examples/adr_0225_frames.jsonl, per ADR-0225 Examples A-D."""

    def residual(kind, code, axis, spans, explanation=None):
        return {
            "residual_id": spec_residual_id(UD, kind, code, spans),
            "candidate_organ": UD,
            "family_id": "state_change.unary_delta",
            "residual_kind": kind,
            "residual_code": code,
            "source_axis": axis,
            "evidence_spans": spans,
            "explanation": explanation,
        }

    example_a = sorted(
        [
            residual("missing_role", "action_cue_unbound", "role", [GAINED_4]),
            residual("missing_role", "direction_unbound", "role", [GAINED_4]),
            residual(
                "missing_role",
                "changed_object_unbound",
                "role",
                [GAINED_4],
                "The changed object role is unbound.",
            ),
        ],
        key=lambda r: r["residual_id"],
    )
    example_b = residual(
        "missing_role",
        "delta_quantity_unbound",
        "role",
        [GAINED_4],
        "The delta quantity role is unbound.",
    )
    example_c = residual(
        "unsupported_topology",
        "passive_voice_unsupported",
        "topology",
        [{"text": "gained", "start": 14, "end": 20, "sentence_index": None}],
        "Passive voice topology is unsupported.",
    )
    example_d = residual(
        "unit_object_conflict",
        "unit_object_conflict",
        "unit_object",
        [{"text": "degrees", "start": 13, "end": 20, "sentence_index": None}],
        "Quantity unit conflicts with object type.",
    )
    # Each line's residuals are sorted by residual_id; lines keep their file order (the CLI
    # streams one frame at a time). The runnable line adds nothing.
    return [*example_a, example_b, example_c, example_d]


def assert_matches_examples(stdout: bytes) -> None:
    got = decoded(stdout)
    expected = expected_example_residuals()
    assert len(got) == len(expected) == 6
    for g, e in zip(got, expected, strict=True):
        assert list(g) == RESIDUAL_KEYS
        if e["explanation"] is None:  # the ADR gives no sentence for these two codes
            assert isinstance(g["explanation"], str) and g["explanation"]
            e = {**e, "explanation": g["explanation"]}
        assert g == e


def test_example_file_projects_to_the_adr_residuals():
    result = run(str(EXAMPLES))
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    assert_matches_examples(result.stdout)


def test_example_file_keys_in_order_and_values_lower_case():
    result = run(str(EXAMPLES))
    assert result.returncode == 0
    for line in residual_lines(result.stdout):
        value = json.loads(line)
        assert list(value) == RESIDUAL_KEYS
        assert value["residual_kind"] == value["residual_kind"].lower()
        assert value["source_axis"] == value["source_axis"].lower()
        assert len(value["residual_id"]) == 64
        assert value["residual_id"] == value["residual_id"].lower()
        for span in value["evidence_spans"]:
            assert list(span) == ["text", "start", "end", "sentence_index"]


def test_stdin_dash_matches_path():
    data = EXAMPLES.read_bytes()
    by_path = run(str(EXAMPLES))
    by_stdin = run("-", stdin=data)
    assert by_stdin.returncode == 0, by_stdin.stderr
    assert by_stdin.stdout == by_path.stdout
    assert_matches_examples(by_stdin.stdout)


def test_no_path_reads_stdin():
    result = run(stdin=EXAMPLES.read_bytes())
    assert result.returncode == 0, result.stderr
    assert_matches_examples(result.stdout)


def test_empty_input_projects_nothing():
    result = run("-", stdin=b"")
    assert result.returncode == 0
    assert result.stdout == b""


def test_familyless_organ_serializes_null_family_id(tmp_path):
    path = tmp_path / "tariff.jsonl"
    spans = [{"text": "per hour", "start": 9, "end": 17}]
    path.write_bytes(
        frame_line("It costs per hour.", "temporal_tariff", ["tariff_window_unbound"], [], spans)
    )
    result = run(str(path))
    assert result.returncode == 0, result.stderr
    [line] = residual_lines(result.stdout)
    assert b'"family_id":null' in line
    value = json.loads(line)
    assert list(value) == RESIDUAL_KEYS
    assert value["family_id"] is None
    assert value["residual_kind"] == "contract_gap_unclassified"
    assert value["source_axis"] == "unknown"
    assert value["residual_code"] == "tariff_window_unbound"
    assert "tariff_window_unbound" in value["explanation"]
    assert value["evidence_spans"] == [
        {"text": "per hour", "start": 9, "end": 17, "sentence_index": None}
    ]


def test_non_ascii_is_written_as_utf8(tmp_path):
    path = tmp_path / "dash.jsonl"
    text = "Zoé \u2014 gained."
    spans = [{"text": "\u2014", "start": 4, "end": 5}, {"text": "Zoé", "start": 0, "end": 3}]
    path.write_bytes(frame_line(text, UD, ["changed_object_unbound"], [], spans))
    result = run(str(path))
    assert result.returncode == 0, result.stderr
    [line] = residual_lines(result.stdout)
    assert "\u2014".encode() in line and "Zoé".encode() in line
    value = json.loads(line)
    assert value["residual_id"] == spec_residual_id(
        UD,
        "missing_role",
        "changed_object_unbound",
        [
            {"text": "\u2014", "start": 4, "end": 5, "sentence_index": None},
            {"text": "Zoé", "start": 0, "end": 3, "sentence_index": None},
        ],
    )


def test_crlf_and_blank_lines_are_accepted(tmp_path):
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(EXAMPLES.read_bytes().replace(b"\n", b"\r\n\r\n"))
    result = run(str(path))
    assert result.returncode == 0, result.stderr
    assert_matches_examples(result.stdout)


def _bad_file(tmp_path: Path, bad: bytes, name: str = "bad.jsonl") -> Path:
    """Line 1 good, line 2 blank, line 3 bad, line 4 good (example B)."""
    good = EXAMPLES.read_bytes().splitlines(keepends=True)
    path = tmp_path / name
    path.write_bytes(good[0] + b"\n" + bad + b"\n" + good[1])
    return path


def _assert_stopped_at_line_3(result, path_shown: str, *reason_parts: str) -> None:
    assert result.returncode == 2
    stderr = result.stderr.decode("utf-8")
    assert stderr.startswith(f"{path_shown}:3: "), stderr
    for part in reason_parts:
        assert part in stderr, stderr
    # The run stops at the bad line: line 4 (example B) is never projected.
    assert b"delta_quantity_unbound" not in result.stdout


def test_bad_record_line_exits_2_naming_path_line_and_field(tmp_path):
    bad_value = json.loads(EXAMPLES.read_bytes().splitlines()[0])
    bad_value["contract_assessments"][0]["evidence_spans"][0]["start"] = "4"
    path = _bad_file(tmp_path, json.dumps(bad_value).encode())
    result = run(str(path))
    _assert_stopped_at_line_3(
        result, str(path), "contract_assessments[0].evidence_spans[0].start"
    )


def test_span_text_mismatch_exits_2(tmp_path):
    bad_value = json.loads(EXAMPLES.read_bytes().splitlines()[1])
    bad_value["problem_text"] = "Sam gained pears."
    bad_value["contract_assessments"][0]["evidence_spans"][0]["start"] = 3
    path = _bad_file(tmp_path, json.dumps(bad_value).encode())
    _assert_stopped_at_line_3(
        run(str(path)), str(path), "contract_assessments[0].evidence_spans[0]"
    )


def test_malformed_json_line_exits_2(tmp_path):
    path = _bad_file(tmp_path, b'{"problem_text": "Tom gained 3.", "contract_assessments": [')
    _assert_stopped_at_line_3(run(str(path)), str(path), "JSON")


def test_invalid_utf8_line_exits_2(tmp_path):
    path = _bad_file(tmp_path, b'{"problem_text": "Tom gained \xff3."}')
    _assert_stopped_at_line_3(run(str(path)), str(path), "UTF-8")


def test_bad_line_on_stdin_is_named_stdin(tmp_path):
    path = _bad_file(tmp_path, b"[1, 2, 3]")
    result = run("-", stdin=path.read_bytes())
    _assert_stopped_at_line_3(result, "<stdin>")


@pytest.mark.parametrize("bad", [b"42", b'"frame"', b"null", b'{"problem_text": "x"}'])
def test_json_that_is_no_record_exits_2(tmp_path, bad):
    path = _bad_file(tmp_path, bad)
    _assert_stopped_at_line_3(run(str(path)), str(path))


def test_missing_file_fails_naming_the_path(tmp_path):
    missing = tmp_path / "nope.jsonl"
    result = run(str(missing))
    assert result.returncode != 0
    assert str(missing) in result.stderr.decode("utf-8")
    assert result.stdout == b""


def test_residuals_are_sorted_within_each_line_and_lines_keep_file_order(tmp_path):
    gained = [{"text": "gained", "start": 4, "end": 10}]
    first = frame_line("Tom gained 3.", UD, ["direction_unbound", "action_cue_unbound"], [], gained)
    second = frame_line("Sam gained 3.", UD, ["changed_object_unbound"], [], gained)
    path = tmp_path / "two.jsonl"
    path.write_bytes(first + second + first)
    result = run(str(path))
    assert result.returncode == 0, result.stderr
    spans = [{**gained[0], "sentence_index": None}]
    line_1 = sorted(
        spec_residual_id(UD, "missing_role", code, spans)
        for code in ["direction_unbound", "action_cue_unbound"]
    )
    line_2 = [spec_residual_id(UD, "missing_role", "changed_object_unbound", spans)]
    assert [r["residual_id"] for r in decoded(result.stdout)] == line_1 + line_2 + line_1
