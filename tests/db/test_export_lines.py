"""SQLite builds each exported line itself (export_lines): byte for byte what the CSV and JSONL
writers make of the same rows, on values built to need every kind of quoting and escaping."""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import pytest
from backends import EXAMPLE_FILES
from construction_data import construction_journal
from jsonl_files import write_jsonl

from store.db.audit_store import AuditStore
from store.db.queries.exports import EXPORT_KINDS, export_lines, export_rows
from store.db.queries.filters import ResidualFilter

JOURNAL = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"
TRICKY = ["", " ", "a,b", 'say "hi"', '"', '""', "line\nbreak", "cr\rlf\r\n", ",", "\t tab",
          "\\ back\\slash", "/", "ü é 😀", "\u2028\u2029", "\x7f", "\x01\x1f", "'single'",
          "x" * 300]


def _explanations(count: int) -> list[str]:
    rng = random.Random(20261204)
    alphabet = [chr(c) for c in range(1, 0x80)] + ["é", "😀", "\u2028", "ß"]
    return TRICKY + ["".join(rng.choices(alphabet, k=rng.randint(0, 40))) for _ in range(count)]


def _frames() -> list[dict[str, Any]]:
    frames = []
    for i, text in enumerate(_explanations(150)):
        problem = f"{text} gained {i}"
        start = problem.rindex("gained")
        frames.append({
            "problem_text": problem, "source_ref": text or None,
            "contract_assessments": [{
                "candidate_organ": "unary_delta_transition",
                "missing_bindings": ["changed_object_unbound"],
                "unresolved_hazards": [text] if i % 2 else [],
                "runnable": i % 3 == 0, "explanation": text,
                "evidence_spans": [{"text": "gained", "start": start, "end": start + 6,
                                    "sentence_index": None if i % 2 else 0}]}]})
    return frames


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("export-lines")
    url = f"sqlite:///{folder / 'audit.db'}"
    with AuditStore.open(url) as store:
        for path in (*EXAMPLE_FILES, JOURNAL, write_jsonl(folder / "tricky.jsonl", _frames())):
            store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
        store.ingest(construction_journal(), source="constructions.jsonl")
    return url


def _both(url: str, kind: str, fmt: str, **options: Any) -> tuple[bytes, bytes]:
    import importlib

    command = importlib.import_module("store.cli.export")
    with AuditStore.open(url, read_only=True) as store, store.engine.connect() as connection:
        lines = export_lines(connection, kind, fmt, **options)
        assert lines is not None
        by_sql, by_python = io.BytesIO(), io.BytesIO()
        sql_count = command._write_lines(kind, fmt, lines, by_sql)
        writer = command._write_csv if fmt == "csv" else command._write_jsonl
        python_count = writer(kind, export_rows(connection, kind, **options), by_python)
        assert sql_count == python_count
        return by_sql.getvalue(), by_python.getvalue()


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("kind", sorted(EXPORT_KINDS))
def test_sqlite_lines_are_the_writers_bytes(store_url: str, kind: str, fmt: str) -> None:
    by_sql, by_python = _both(store_url, kind, fmt)
    assert by_sql.count(b"\n") > (100 if kind in ("residuals", "occurrences", "assessments") else 3)
    assert by_sql == by_python


def test_quoted_cells_are_there_to_compare(store_url: str) -> None:
    by_sql, _ = _both(store_url, "assessments", "csv")
    for cell in (b'"a,b"', b'"say ""hi"""', b'"line\nbreak"', b'"cr\rlf\r\n'):
        assert cell in by_sql


def test_filtered_and_as_of_lines_match_too(store_url: str) -> None:
    where = ResidualFilter(organ=["unary_delta_transition"])
    for fmt in ("csv", "jsonl"):
        by_sql, by_python = _both(store_url, "residuals", fmt, where=where)
        assert by_sql == by_python
        by_sql, by_python = _both(store_url, "occurrences", fmt, where=where, as_of=0)
        assert by_sql == by_python


def test_postgres_takes_the_writers_path(tmp_path: Path) -> None:
    """Only SQLite builds lines; elsewhere export_lines declines (a test of the dispatch)."""

    class Dialect:
        name = "postgresql"

    class Connection:
        dialect = Dialect()

    assert export_lines(Connection(), "residuals", "csv") is None  # type: ignore[arg-type]
