"""Journals are append-only in the store too (issue 21): a journal re-ingested with turn k
rewritten (its digest recomputed) is refused, naming the line and the batch holding the
original; a key given twice in a line and a timestamp that is not ISO 8601 are refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli
from store_support import row_counts

JOURNAL = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"


def _with_digest(entry: dict[str, object]) -> str:
    """The line CORE would write for `entry` (core-interop.md §5: canonical JSON, digest of
    the entry without journal_digest)."""
    entry = {k: v for k, v in entry.items() if k != "journal_digest"}
    canonical = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    return json.dumps({**entry, "journal_digest": digest}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False)


def _journal(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def lines() -> list[str]:
    return JOURNAL.read_text(encoding="utf-8").splitlines()


@pytest.fixture
def stored(db_path: Path) -> Path:
    assert cli("ingest", "--db", db_path, JOURNAL).exit_code == 0  # batch 1
    return db_path


def test_a_journal_with_turn_3_rewritten_is_refused_naming_line_and_batch(
        stored: Path, lines: list[str], tmp_path: Path) -> None:
    entry = json.loads(lines[2])
    assert entry["turn_id"] == 3
    entry["prompt"] = "Something CORE was never asked?"
    forged = _journal(tmp_path, "forged.jsonl", [*lines[:2], _with_digest(entry), *lines[3:]])
    before = row_counts(stored)

    result = cli("ingest", "--db", stored, forged)

    assert result.exit_code == 2
    assert (f"{forged}:3: turn 3 rewrites the stored journal's turn 3 (batch 1, seq "
            in result.stderr), result.stderr
    assert "which differs: a journal is append-only" in result.stderr
    assert row_counts(stored) == before


def test_the_same_journal_grown_by_a_turn_is_accepted(stored: Path, lines: list[str],
                                                      tmp_path: Path) -> None:
    entry = json.loads(lines[-1])
    entry["turn_id"] += 1
    entry["prompt"] = "And one more question?"
    grown = _journal(tmp_path, "grown.jsonl", [*lines, _with_digest(entry)])
    result = cli("ingest", "--db", stored, grown)
    assert result.exit_code == 0, result.stderr
    assert "turns 1 new/6 present" in result.stdout


def test_a_key_given_twice_is_refused_with_its_line(db_path: Path, lines: list[str],
                                                    tmp_path: Path) -> None:
    doubled = _journal(tmp_path, "doubled.jsonl",
                       [lines[0], '{"turn_id":99,' + lines[1][1:], *lines[2:]])
    result = cli("ingest", "--db", db_path, doubled)
    assert result.exit_code == 2
    assert f"{doubled}:2: turn_id: the key appears twice in one object" in result.stderr


def test_a_timestamp_that_is_not_iso_8601_is_refused_with_its_line(
        db_path: Path, lines: list[str], tmp_path: Path) -> None:
    entry = json.loads(lines[3])
    entry["timestamp"] = "not a time"
    bad = _journal(tmp_path, "bad.jsonl", [*lines[:3], _with_digest(entry), *lines[4:]])
    result = cli("ingest", "--db", db_path, bad)
    assert result.exit_code == 2
    assert (f"{bad}:4: timestamp: 'not a time' is not an ISO 8601 date and time"
            in result.stderr), result.stderr
