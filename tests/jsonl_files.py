"""JSON Lines input files for the tests: UTF-8, non-ASCII characters as they are (no \\u
escapes), so a test's text reaches the store byte for byte as the test wrote it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def write_jsonl(path: Path, records: Iterable[object]) -> Path:
    """One line per record: a str is the raw line (broken JSON too), anything else its JSON."""
    text = "".join(
        (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records
    )
    path.write_bytes(text.encode("utf-8"))
    return path


def gained_frame(problem_text: str, source_ref: str, *, missing_bindings: list[str],
                 unresolved_hazards: list[str], runnable: bool, explanation: str,
                 sentence_index: int | None) -> dict[str, Any]:
    """A CORE frame with one unary_delta_transition assessment whose evidence span is the
    word "gained" of its problem text."""
    start = problem_text.index("gained")
    return {
        "problem_text": problem_text,
        "source_ref": source_ref,
        "contract_assessments": [{
            "candidate_organ": "unary_delta_transition",
            "missing_bindings": missing_bindings,
            "unresolved_hazards": unresolved_hazards,
            "runnable": runnable,
            "explanation": explanation,
            "evidence_spans": [{"text": "gained", "start": start, "end": start + 6,
                                "sentence_index": sentence_index}],
        }],
    }
