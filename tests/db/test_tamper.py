"""Tampering out of band is found by `core-audit verify`, which names seq, table and key
(or, for a change only the tree sees, the batch whose tree head its rows no longer make).

The examples file (ADR-0225 examples A-D and a runnable frame) is appended in this order,
one seq each: A's assessment (1), then per code its residual and occurrence —
action_cue_unbound (2, 3), direction_unbound (4, 5), changed_object_unbound (6, 7) —
B (8, 9, 10), C (11, 12, 13), D (14, 15, 16), the runnable assessment (17), the batch (18).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_runs import cli
from jsonl_files import write_jsonl
from store_support import (
    first_problem,
    gained_frame,
    raw_connect,
    spec_residual_id,
    triggers_bypassed,
    verify_both_ways,
)

from store.db.audit_store import AuditStore
from store.db.verify import leaf_checks

# Example A's third residual: changed_object_unbound over "gained" 4-10, sentence_index null.
CHANGED_OBJECT_UNBOUND = spec_residual_id(
    "unary_delta_transition", "missing_role", "changed_object_unbound",
    [{"text": "gained", "start": 4, "end": 10, "sentence_index": None}],
)


@pytest.fixture(autouse=True, params=[None, 4], ids=["window", "4-leaf windows"])
def leaf_window(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each tampering also read 4 leaves at a time (in-process): the 18-leaf store then
    spans windows read whole, a window with the tampered row read row by row, and the
    windows after it, so each problem is named the same wherever its window starts."""
    if request.param is not None:
        monkeypatch.setattr(leaf_checks, "LEAF_WINDOW", request.param)


def _verify(path: Path, *extra: str):  # type: ignore[no-untyped-def]
    return verify_both_ways(path, *extra)


def test_the_examples_store_verifies_intact_with_18_leaves(examples_store: Path) -> None:
    result = _verify(examples_store)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("intact: 18 leaves, root ")


def test_the_spec_vector_residual_was_appended_at_seq_6(examples_store: Path) -> None:
    connection = raw_connect(examples_store)
    assert connection.execute(
        "SELECT seq FROM contract_residuals WHERE residual_id = ?", (CHANGED_OBJECT_UNBOUND,)
    ).fetchone() == (6,)
    connection.close()


@pytest.mark.parametrize("operation", ["update", "delete", "insert"])
def test_a_dropped_trigger_fails_verify_naming_it(examples_store: Path, operation: str) -> None:
    connection = raw_connect(examples_store)
    connection.execute(f"DROP TRIGGER contract_residuals_append_only_{operation}")
    connection.close()

    result = _verify(examples_store)

    assert result.exit_code == 1
    assert first_problem(result.stderr) == (
        f"contract_residuals: append-only trigger contract_residuals_append_only_{operation}"
        " is missing")


def test_an_edited_row_fails_verify_naming_seq_table_and_key(examples_store: Path) -> None:
    with triggers_bypassed(examples_store) as connection:
        connection.execute(
            "UPDATE contract_residuals SET explanation = 'nothing to see' WHERE residual_id = ?",
            (CHANGED_OBJECT_UNBOUND,))

    result = _verify(examples_store)

    assert result.exit_code == 1
    # The explanation is not part of residual_id: the tree names the batch the row is in.
    assert first_problem(result.stderr) == (
        "seq 18: ingest_batches 1: seq 1..18 do not make this batch's tree head (a row among "
        "them was changed out of band, or the head was)")


def test_a_deleted_row_fails_verify_naming_seq_table_and_key(examples_store: Path) -> None:
    with triggers_bypassed(examples_store) as connection:
        connection.execute("DELETE FROM contract_residuals WHERE residual_id = ?",
                           (CHANGED_OBJECT_UNBOUND,))

    result = _verify(examples_store)

    assert result.exit_code == 1
    assert first_problem(result.stderr) == (
        "seq 6: log leaf 5: leaves 5..5 have no row (deleted out of band)")


def test_a_row_inserted_out_of_band_fails_verify_naming_seq_table_and_key(
    examples_store: Path,
) -> None:
    """No trigger has to go for this one: appends are allowed, but not past the tree head."""
    forged = "f" * 64
    connection = raw_connect(examples_store)
    connection.execute(
        "INSERT INTO contract_residuals SELECT ?, 19, batch_id, candidate_organ, family_id,"
        " residual_kind, residual_code, source_axis, evidence_spans, explanation"
        " FROM contract_residuals WHERE residual_id = ?", (forged, CHANGED_OBJECT_UNBOUND))
    connection.close()

    result = _verify(examples_store)

    assert result.exit_code == 1
    assert first_problem(result.stderr) == (
        f"seq 19: contract_residuals {forged}: row is beyond the newest tree head "
        "(added out of band)")


def test_an_edited_tree_head_fails_verify_naming_its_batch(examples_store: Path) -> None:
    with triggers_bypassed(examples_store) as connection:
        connection.execute("UPDATE tree_heads SET root_hash = ? WHERE batch_id = 1", ("0" * 64,))

    result = _verify(examples_store)

    assert result.exit_code == 1
    assert first_problem(result.stderr) == (
        "seq 18: ingest_batches 1: seq 1..18 do not make this batch's tree head (a row among "
        "them was changed out of band, or the head was)")


def test_each_tampering_is_found_on_its_own_copy(examples_store: Path, tmp_path: Path) -> None:
    """The same pristine store, copied three times: each copy fails for its own reason."""
    copies = {}
    for name in ("edit", "delete", "insert"):
        copies[name] = tmp_path / f"{name}.db"
        shutil.copy(examples_store, copies[name])
    with triggers_bypassed(copies["edit"]) as connection:
        connection.execute("UPDATE contract_assessments SET problem_text = 'x' WHERE seq = 8")
    with triggers_bypassed(copies["delete"]) as connection:
        connection.execute("DELETE FROM residual_occurrences WHERE seq = 10")
    connection = raw_connect(copies["insert"])
    connection.execute(
        "INSERT INTO ingest_batches SELECT 2, 19, source, input_sha256, record_type, lines,"
        " new_rows, present_rows, rejected_lines, ingested_at, store_version"
        " FROM ingest_batches")
    connection.close()

    problems = {name: first_problem(_verify(path).stderr) for name, path in copies.items()}

    # problem_text is part of assessment_id: the content check names the row itself.
    assert problems["edit"].startswith("seq 8: contract_assessments ")
    assert problems["edit"].endswith(": assessment_id is not the hash of its content")
    assert problems["delete"] == "seq 10: log leaf 9: leaves 9..9 have no row (deleted out of band)"
    assert problems["insert"] == (
        "seq 19: ingest_batches 2: row is beyond the newest tree head (added out of band)")
    assert _verify(examples_store).exit_code == 0


def _checkpoint(path: Path) -> Path:
    """A C2SP checkpoint of the store's newest tree head, kept in a file beside it."""
    result = cli("checkpoint", "--db", path)
    assert result.exit_code == 0, result.stderr
    kept = path.with_name(f"{path.name}.checkpoint-{result.stdout.splitlines()[1]}")
    kept.write_text(result.stdout, encoding="utf-8")
    return kept


def _remove_last_batch(path: Path) -> None:
    """Rewrite history consistently: drop the last batch's rows, tallies, sighting counts
    and tree head."""
    with triggers_bypassed(path) as connection:
        (batch,) = connection.execute("SELECT max(batch_id) FROM ingest_batches").fetchone()
        (first_seq,) = connection.execute(
            "SELECT min(seq) FROM (SELECT seq FROM contract_assessments WHERE batch_id = :b"
            " UNION ALL SELECT seq FROM contract_residuals WHERE batch_id = :b"
            " UNION ALL SELECT seq FROM residual_occurrences WHERE batch_id = :b"
            " UNION ALL SELECT seq FROM ingest_batches WHERE batch_id = :b)", {"b": batch}
        ).fetchone()
        for table in ("residual_occurrences", "contract_residuals", "contract_assessments",
                      "residual_tallies", "sighting_counts", "residual_record_tallies",
                      "tree_heads", "ingest_batches"):
            connection.execute(f"DELETE FROM {table} WHERE batch_id = ?", (batch,))
        connection.execute("DELETE FROM log_subtrees WHERE start + (1 << level) >= ?",
                           (first_seq,))


def test_verify_against_a_fresh_checkpoint_passes(examples_store: Path) -> None:
    checkpoint = _checkpoint(examples_store)
    assert checkpoint.read_text().splitlines()[1] == "18"
    result = _verify(examples_store, "--checkpoint", checkpoint)
    assert result.exit_code == 0, result.stderr


def test_a_checkpoint_still_holds_after_more_appends(examples_store: Path, tmp_path: Path) -> None:
    checkpoint = _checkpoint(examples_store)
    more = write_jsonl(tmp_path / "more.jsonl",
                       [gained_frame("Sam gained 5.", "direction_unbound")])
    assert cli("ingest", "--db", examples_store, more).exit_code == 0
    assert _verify(examples_store, "--checkpoint", checkpoint).exit_code == 0


def test_removing_the_last_batch_consistently_passes_verify_but_not_the_checkpoint(
    examples_store: Path, tmp_path: Path
) -> None:
    more = write_jsonl(tmp_path / "more.jsonl",
                       [gained_frame("Sam gained 5.", "direction_unbound")])
    assert cli("ingest", "--db", examples_store, more).exit_code == 0
    # 19-21: assessment, occurrence, batch; the residual is example A's direction_unbound.
    checkpoint = _checkpoint(examples_store)

    _remove_last_batch(examples_store)

    assert _verify(examples_store).exit_code == 0  # the rewritten tree is self-consistent
    result = _verify(examples_store, "--checkpoint", checkpoint)
    assert result.exit_code == 1
    assert checkpoint.read_text().splitlines()[1] == "21"
    assert first_problem(result.stderr) == (
        "log checkpoint 21: the checkpoint's tree has 21 leaves, the store 18 "
        "(rows were removed)")


def test_rewritten_and_regrown_history_fails_the_checkpoint(
    examples_store: Path, tmp_path: Path
) -> None:
    honest = write_jsonl(tmp_path / "honest.jsonl",
                         [gained_frame("Sam gained 5.", "direction_unbound")])
    forged = write_jsonl(tmp_path / "forged.jsonl",
                         [gained_frame("Sam gained 6.", "direction_unbound")])
    assert cli("ingest", "--db", examples_store, honest).exit_code == 0
    checkpoint = _checkpoint(examples_store)

    _remove_last_batch(examples_store)
    assert cli("ingest", "--db", examples_store, forged).exit_code == 0

    assert _verify(examples_store).exit_code == 0
    result = _verify(examples_store, "--checkpoint", checkpoint)
    assert result.exit_code == 1
    assert first_problem(result.stderr) == (
        "log checkpoint 21: the store does not extend the checkpoint's tree "
        "(history was rewritten)")


def test_an_edited_tally_fails_verify_naming_its_batch(examples_store: Path) -> None:
    with triggers_bypassed(examples_store) as connection:
        connection.execute(
            "UPDATE residual_tallies SET occurrences = occurrences + 1 WHERE ordinal = 1")
    result = _verify(examples_store)
    assert result.exit_code == 1
    assert first_problem(result.stderr).startswith("residual_tallies batch 1: ")


def test_a_tally_added_out_of_band_fails_verify(examples_store: Path) -> None:
    connection = raw_connect(examples_store)  # the insert guard only refuses existing keys
    connection.execute(
        "INSERT INTO residual_tallies SELECT batch_id, 999, residual_kind, source_axis,"
        " candidate_organ, family_id, residual_code, 1, 1 FROM residual_tallies"
        " WHERE ordinal = 1")
    connection.close()
    result = _verify(examples_store)
    assert result.exit_code == 1
    assert first_problem(result.stderr).startswith("residual_tallies batch 1: ")


@pytest.mark.parametrize("table", ["residual_occurrences", "residual_tallies", "tree_heads"])
def test_a_dropped_table_fails_verify_naming_it(examples_store: Path, table: str) -> None:
    connection = raw_connect(examples_store)
    connection.execute(f"DROP TABLE {table}")  # its triggers go with it
    connection.close()
    result = _verify(examples_store)
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert first_problem(result.stderr) == f"{table}: table is missing (dropped out of band)"


def test_a_dropped_column_fails_verify_naming_it(examples_store: Path) -> None:
    connection = raw_connect(examples_store)
    connection.execute("ALTER TABLE contract_residuals DROP COLUMN explanation")
    connection.close()
    result = _verify(examples_store)
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), result.exception
    assert first_problem(result.stderr) == (
        "contract_residuals: columns are missing: explanation")


def test_an_empty_stores_checkpoint_still_holds_after_appends(
        db_path: Path, examples_path: Path) -> None:
    AuditStore.open(str(db_path)).close()  # a new store, no rows yet
    empty = _checkpoint(db_path)
    assert empty.read_text().splitlines()[1:3] == [
        "0", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="]  # base64 of SHA-256("")
    assert cli("ingest", "--db", db_path, examples_path).exit_code == 0
    result = _verify(db_path, "--checkpoint", empty)
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize(("body", "reason"), [
    ("core-audit/x\n18\n" + "ab" * 32 + "\n\n", "root"),  # 64 hex digits, not base64
    ("core-audit/x\n" + "9" * 23 + "\nyb4KjRngMihPJkumtxYcSeKB02h7NUmjfRoFiyHFNF8=\n\n", "size"),
    ("core-audit/x\n18\nyb4KjRngMihPJkumtxYcSeKB02h7NUmjfRoFiyHFNF8=\n", "blank line"),
])
def test_a_malformed_checkpoint_is_a_clean_error(examples_store: Path, tmp_path: Path,
                                                 body: str, reason: str) -> None:
    kept = tmp_path / "bad-checkpoint.txt"
    kept.write_text(body, encoding="utf-8")
    result = _verify(examples_store, "--checkpoint", kept)
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert str(kept) in result.stderr and reason in result.stderr


def test_verify_and_checkpoint_speak_json_when_asked(examples_store: Path) -> None:
    kept = cli("checkpoint", "--db", examples_store, "--json")
    assert kept.exit_code == 0, kept.stderr
    head = json.loads(kept.stdout)
    assert head["tree_size"] == 18
    assert head["note"].splitlines()[:2] == [head["origin"], "18"]
    intact = cli("verify", "--db", examples_store, "--json")
    assert intact.exit_code == 0, intact.stderr
    assert json.loads(intact.stdout) == {
        "intact": True, "tree_size": 18, "root_hash": head["root_hash"], "recomputed": True,
        "extends_checkpoint": None}
    connection = raw_connect(examples_store)
    connection.execute("DROP TRIGGER contract_residuals_append_only_update")
    connection.close()
    broken = cli("verify", "--db", examples_store, "--json")
    assert broken.exit_code == 1
    assert json.loads(broken.stdout) == {"intact": False, "problems": [
        "contract_residuals: append-only trigger contract_residuals_append_only_update is "
        "missing"]}


# The examples store's sighting_counts: batch 1 sighted each of its six residuals once; a row
# names its record by seq (revision 0019): changed_object_unbound's is 6.
@pytest.mark.parametrize(("sql", "record_seq", "said"), [
    ("UPDATE sighting_counts SET sightings = 5 WHERE record_seq = ?", 6,
     "row says contract_residuals, 5 sightings; the sightings say contract_residuals, 1"),
    ("DELETE FROM sighting_counts WHERE record_seq = ?", 6,
     "row is missing (the contract_residuals record at seq 6 has 1 sightings by this batch)"),
    ("INSERT INTO sighting_counts VALUES (1, ?, 'contract_residuals', 1)", 999,
     "row names no record this batch sighted (added out of band)"),
], ids=["forged", "missing", "extra"])
def test_a_sighting_count_changed_out_of_band_fails_verify_naming_its_row(
        examples_store: Path, sql: str, record_seq: int, said: str) -> None:
    with triggers_bypassed(examples_store) as connection:
        connection.execute(sql, (record_seq,))
    result = _verify(examples_store)
    assert result.exit_code == 1
    assert first_problem(result.stderr) == f"sighting_counts batch 1 seq {record_seq}: {said}"
