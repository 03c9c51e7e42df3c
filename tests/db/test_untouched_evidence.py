"""No command changes a store's bytes before it has decided to write (issue 21): a refused
command leaves the file byte-identical; a command that wrote leaves one self-contained file."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_runs import cli
from store_support import raw_connect

REPO = Path(__file__).resolve().parents[2]
REV0004_STORE = REPO / "tests" / "data" / "store-rev0004.db"
JOURNAL = REPO / "examples" / "workbench_turn_journal.jsonl"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def journal_mode(path: Path) -> str:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return str(connection.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        connection.close()


@pytest.fixture
def behind_head(tmp_path: Path) -> Path:
    """A store at revision 0004 in rollback-journal mode, as `VACUUM INTO` leaves a copy."""
    path = tmp_path / "old.db"
    shutil.copyfile(REV0004_STORE, path)
    assert journal_mode(path) == "delete"
    return path


@pytest.mark.parametrize("command", [
    ("ingest", JOURNAL), ("checkpoint",), ("checkpoint", "--origin", "audit.example.org/core"),
    ("verify",), ("log",), ("export", "residuals", "--format", "jsonl"),
])
def test_a_store_behind_head_is_refused_byte_identical(behind_head: Path,
                                                       command: tuple[str | Path, ...]) -> None:
    before = sha256(behind_head)

    result = cli(*command, "--db", behind_head)

    assert result.exit_code == 1
    assert "behind head 0019" in result.stderr
    assert "Traceback" not in result.stderr
    assert sha256(behind_head) == before
    assert journal_mode(behind_head) == "delete"


@pytest.fixture
def rollback_mode_store(examples_store: Path) -> Path:
    connection = raw_connect(examples_store)
    assert connection.execute("PRAGMA journal_mode=DELETE").fetchone() == ("delete",)
    connection.close()
    return examples_store


def test_a_refused_batch_leaves_the_file_byte_identical(rollback_mode_store: Path,
                                                        tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(JOURNAL.read_bytes() + b"{not json\n")
    before = sha256(rollback_mode_store)

    result = cli("ingest", "--db", rollback_mode_store, bad)

    assert result.exit_code == 2  # a rejected input
    assert f"{bad}:7: " in result.stderr
    assert sha256(rollback_mode_store) == before


def test_a_refused_origin_leaves_the_file_byte_identical(rollback_mode_store: Path) -> None:
    assert cli("checkpoint", "--db", rollback_mode_store, "--origin", "a.example/one"
               ).exit_code == 0
    connection = raw_connect(rollback_mode_store)
    connection.execute("PRAGMA journal_mode=DELETE")
    connection.close()
    before = sha256(rollback_mode_store)

    result = cli("checkpoint", "--db", rollback_mode_store, "--origin", "b.example/two")

    assert result.exit_code == 1
    assert "have origin 'a.example/one', not 'b.example/two'" in result.stderr
    assert sha256(rollback_mode_store) == before


def test_a_store_that_was_written_is_one_self_contained_file_in_wal_mode(
        rollback_mode_store: Path, tmp_path: Path) -> None:
    assert cli("ingest", "--db", rollback_mode_store, JOURNAL).exit_code == 0
    wal = Path(f"{rollback_mode_store}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    assert journal_mode(rollback_mode_store) == "wal"
    alone = tmp_path / "alone" / "audit.db"
    alone.parent.mkdir()
    shutil.copyfile(rollback_mode_store, alone)  # the file only, no -wal beside it

    assert cli("verify", "--db", alone).stdout == cli("verify", "--db", rollback_mode_store).stdout
    assert cli("verify", "--db", alone).stdout.startswith("intact: 37 leaves")  # 24 + 13
