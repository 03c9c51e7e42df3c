"""`core-audit ingest`: the --json summary, and where the store is (--db, CORE_AUDIT_DB)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cli_runs import cli
from store_support import raw_connect, row_counts

from store.db.audit_store import AuditStore
from store.db.schema.schema_version import head_revision

EXAMPLES_COUNTS = {"ingest_batches": 1, "contract_assessments": 5, "contract_residuals": 6,
                   "residual_occurrences": 6, "tree_heads": 1}


def test_json_summary_shape(db_path: Path, examples_path: Path) -> None:
    result = cli("ingest", "--json", "--db", db_path, examples_path)

    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    assert json.loads(result.stdout) == {
        "files": 1,
        "rejected_files": 0,
        "batches": [{
            "source": str(examples_path),
            "batch_id": 1,
            "input_sha256": hashlib.sha256(examples_path.read_bytes()).hexdigest(),
            "lines": 5,
            "records": 5,
            "rejected": False,
            "rejected_lines": 0,
            "already_in": [],
            "same_input": False,
            "tables": {
                "contract_assessments": {"new": 5, "present": 0},
                "contract_residuals": {"new": 6, "present": 0},
                "residual_occurrences": {"new": 6, "present": 0},
                "surface_records": {"new": 0, "present": 0},
                "surface_occurrences": {"new": 0, "present": 0},
                "turns": {"new": 0, "present": 0},
                "turn_constructions": {"new": 0, "present": 0},
                "turn_assessments": {"new": 0, "present": 0},
            },
            "errors": [],
        }],
    }


def test_plain_summary_is_one_line(db_path: Path, examples_path: Path) -> None:
    result = cli("ingest", "--db", db_path, examples_path)
    assert result.exit_code == 0
    assert result.stdout == (
        "1 file(s), 5 line(s): contract_assessments 5 new/0 present, contract_residuals 6 new/0"
        " present, residual_occurrences 6 new/0 present; 0 file(s) rejected\n")


def test_the_summary_says_what_present_counts(db_path: Path) -> None:
    # adr_0052_surfaces.jsonl: 17 lines, 12 distinct surfaces (five lines repeat one) and 16
    # distinct sightings (line 16 repeats line 1's session, turn and prompt).
    surfaces = Path(__file__).resolve().parents[2] / "examples" / "adr_0052_surfaces.jsonl"
    result = cli("ingest", "--db", db_path, surfaces)
    assert result.exit_code == 0
    assert result.stdout == (
        "1 file(s), 17 line(s): surface_records 12 new/5 present, surface_occurrences 16 new/1"
        " present; 0 file(s) rejected; present: rows already stored (by an earlier batch, or"
        " earlier in the same input), kept once and counted\n")


def test_the_batch_row_records_the_input_hash(db_path: Path, examples_path: Path) -> None:
    cli("ingest", "--db", db_path, examples_path)
    connection = raw_connect(db_path)
    row = connection.execute(
        "SELECT source, input_sha256, record_type, lines FROM ingest_batches").fetchone()
    connection.close()
    assert row == (str(examples_path), hashlib.sha256(examples_path.read_bytes()).hexdigest(),
                   "assessments", 5)


def test_db_given_as_a_path(db_path: Path, examples_path: Path) -> None:
    assert cli("ingest", "--db", db_path, examples_path).exit_code == 0
    assert row_counts(db_path) == EXAMPLES_COUNTS


def test_db_given_as_a_relative_path_is_relative_to_the_working_directory(
    tmp_path: Path, examples_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("ingest", "--db", "sub.db", examples_path).exit_code == 0
    assert row_counts(tmp_path / "sub.db") == EXAMPLES_COUNTS


def test_db_given_as_a_url(db_path: Path, examples_path: Path) -> None:
    assert cli("ingest", "--db", f"sqlite:///{db_path}", examples_path).exit_code == 0
    assert row_counts(db_path) == EXAMPLES_COUNTS


def test_core_audit_db_environment_variable_is_the_default(
    tmp_path: Path, examples_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "from-env.db"
    result = cli("ingest", examples_path, env={"CORE_AUDIT_DB": str(target)})
    assert result.exit_code == 0, result.stderr
    assert row_counts(target) == EXAMPLES_COUNTS
    assert not (tmp_path / "core-audit.db").exists()


def test_db_option_overrides_the_environment_variable(
    tmp_path: Path, examples_path: Path
) -> None:
    chosen, ignored = tmp_path / "chosen.db", tmp_path / "ignored.db"
    result = cli("ingest", "--db", chosen, examples_path, env={"CORE_AUDIT_DB": str(ignored)})
    assert result.exit_code == 0
    assert chosen.exists()
    assert not ignored.exists()


def test_without_db_or_environment_the_store_is_core_audit_db_here(
    tmp_path: Path, examples_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CORE_AUDIT_DB", raising=False)
    assert cli("ingest", examples_path).exit_code == 0
    assert row_counts(tmp_path / "core-audit.db") == EXAMPLES_COUNTS


def test_verify_and_checkpoint_read_the_environment_variable_too(
    db_path: Path, examples_path: Path
) -> None:
    env = {"CORE_AUDIT_DB": str(db_path)}
    cli("ingest", examples_path, env=env)
    assert cli("verify", env=env).exit_code == 0
    assert cli("checkpoint", env=env).stdout.splitlines()[1] == "18"  # tree size


def test_a_missing_input_file_is_an_error(db_path: Path, tmp_path: Path) -> None:
    result = cli("ingest", "--db", db_path, tmp_path / "nope.jsonl")
    assert result.exit_code == 1
    assert "nope.jsonl: cannot open" in result.stderr
    assert not db_path.exists()  # a mistake in the command creates no store


def test_db_history_marks_the_stores_revision(db_path: Path, examples_path: Path) -> None:
    assert cli("ingest", "--db", db_path, examples_path).exit_code == 0
    lines = cli("db", "history", "--db", db_path).stdout.splitlines()
    marked = [line for line in lines if line.endswith(" (this store)")]
    assert len(marked) == 1 and marked[0].startswith(f"{head_revision()}: ")
    assert cli("db", "history").stdout.splitlines() == [
        line.removesuffix(" (this store)") for line in lines]


# --- re-ingesting: nothing new is no batch ----------------------------------------------------


def test_ingesting_an_identical_file_again_writes_nothing(db_path: Path, examples_path: Path
                                                          ) -> None:
    assert cli("ingest", "--db", db_path, examples_path).exit_code == 0
    before = hashlib.sha256(db_path.read_bytes()).hexdigest()

    result = cli("ingest", "--db", db_path, examples_path)

    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        f"{examples_path}: already stored, no batch written: the same input is batch 1\n"
        "1 file(s), 5 line(s): contract_assessments 0 new/5 present, contract_residuals 0 new/6"
        " present, residual_occurrences 0 new/6 present; 0 file(s) rejected; present: rows"
        " already stored (by an earlier batch, or earlier in the same input), kept once and"
        " counted\n")
    assert row_counts(db_path) == EXAMPLES_COUNTS  # no batch row, no tree head
    assert hashlib.sha256(db_path.read_bytes()).hexdigest() == before
    assert cli("checkpoint", "--db", db_path).stdout.splitlines()[1] == "18"  # tree size


def test_a_file_whose_rows_other_batches_hold_names_them(db_path: Path, examples_path: Path,
                                                         tmp_path: Path) -> None:
    families = examples_path.parent / "core_frames_families.jsonl"
    assert cli("ingest", "--db", db_path, examples_path, families).exit_code == 0
    # Example B's line and the families' first line: other bytes, every row already stored.
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(examples_path.read_bytes().splitlines(keepends=True)[1]
                      + families.read_bytes().splitlines(keepends=True)[0])

    result = cli("ingest", "--json", "--db", db_path, mixed)

    assert result.exit_code == 0, result.stderr
    [batch] = json.loads(result.stdout)["batches"]
    assert (batch["batch_id"], batch["already_in"], batch["same_input"]) == (None, [1, 2], False)
    assert row_counts(db_path)["ingest_batches"] == 2
    plain = cli("ingest", "--db", db_path, mixed).stdout.splitlines()[0]
    assert plain == f"{mixed}: already stored, no batch written: its rows are in batch(es) 1, 2"


def test_a_journal_ingested_again_unchanged_is_no_batch(db_path: Path, examples_path: Path
                                                        ) -> None:
    journal = examples_path.parent / "workbench_turn_journal.jsonl"
    first = json.loads(cli("ingest", "--json", "--db", db_path, journal).stdout)
    again = json.loads(cli("ingest", "--json", "--db", db_path, journal).stdout)

    assert first["batches"][0]["batch_id"] == 1
    assert again["batches"][0]["tables"]["turns"] == {"new": 0, "present": 6}
    assert (again["batches"][0]["batch_id"], again["batches"][0]["already_in"]) == (None, [1])
    connection = raw_connect(db_path)
    assert connection.execute("SELECT count(*) FROM ingest_batches").fetchone() == (1,)
    connection.close()


def test_the_python_api_returns_no_batch_for_nothing_new(db_path: Path, examples_path: Path
                                                         ) -> None:
    with AuditStore.open(str(db_path)) as store:
        first = store.ingest(examples_path.read_bytes().splitlines(), source="a")
        again = store.ingest(examples_path.read_bytes().splitlines(), source="b")
        head = store.tree_head()
    assert (first.batch_id, first.already_in) == (1, [])
    assert (again.batch_id, again.already_in, again.same_input) == (None, [1], True)
    assert head.size == 18
