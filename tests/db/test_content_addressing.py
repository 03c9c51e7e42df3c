"""Rows are content-addressed: a second sighting is counted, not written; a clash writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import cli
from jsonl_files import write_jsonl
from log_leaves import history
from raw_reads import dump, query
from store_support import gained_frame, raw_connect, residual_ids, row_counts, spec_residual_id

import store.model.projection as projection
from store import BatchRejected
from store.db.audit_store import AuditStore

GAINED = [{"text": "gained", "start": 4, "end": 10, "sentence_index": None}]


def test_the_test_recipe_reproduces_the_design_vector() -> None:
    assert spec_residual_id(
        "unary_delta_transition", "missing_role", "changed_object_unbound",
        [{"text": "gained", "start": 4, "end": 10, "sentence_index": 0}],
    ) == "e56fa420ce0acc64071fc5ef819d740d54f1ab17f1a268728a0ef490784ffe32"


def _ingest_json(path: Path, *files: Path):  # type: ignore[no-untyped-def]
    result = cli("ingest", "--json", "--db", path, *files)
    return result, json.loads(result.stdout)


def test_ingesting_the_same_file_twice_adds_nothing_the_second_time(
    store_db: Path | str, examples_path: Path
) -> None:
    _, first = _ingest_json(store_db, examples_path)
    ids, counts = residual_ids(store_db), row_counts(store_db)

    result, second = _ingest_json(store_db, examples_path)

    assert result.exit_code == 0
    assert first["batches"][0]["tables"] == {
        "contract_assessments": {"new": 5, "present": 0},
        "contract_residuals": {"new": 6, "present": 0},
        "residual_occurrences": {"new": 6, "present": 0},
        "surface_records": {"new": 0, "present": 0},
        "surface_occurrences": {"new": 0, "present": 0},
        "turns": {"new": 0, "present": 0},
        "turn_constructions": {"new": 0, "present": 0},
        "turn_assessments": {"new": 0, "present": 0},
    }
    assert second["batches"][0]["tables"] == {
        "contract_assessments": {"new": 0, "present": 5},
        "contract_residuals": {"new": 0, "present": 6},
        "residual_occurrences": {"new": 0, "present": 6},
        "surface_records": {"new": 0, "present": 0},
        "surface_occurrences": {"new": 0, "present": 0},
        "turns": {"new": 0, "present": 0},
        "turn_constructions": {"new": 0, "present": 0},
        "turn_assessments": {"new": 0, "present": 0},
    }
    assert residual_ids(store_db) == ids
    # Nothing new, so no batch: no batch row, no tree head; the summary names the first.
    assert row_counts(store_db) == counts
    assert (second["batches"][0]["batch_id"], second["batches"][0]["already_in"],
            second["batches"][0]["same_input"]) == (None, [1], True)


def test_the_second_batch_records_what_was_already_present(
    db_path: Path, examples_path: Path, tmp_path: Path
) -> None:
    cli("ingest", "--db", db_path, examples_path)
    # The examples again, and one new problem sharing example B's residual.
    again = tmp_path / "again.jsonl"
    again.write_bytes(examples_path.read_bytes() + json.dumps(
        gained_frame("Ann gained figs.", "delta_quantity_unbound")).encode() + b"\n")
    cli("ingest", "--db", db_path, again)
    connection = raw_connect(db_path)
    rows = connection.execute(
        "SELECT batch_id, lines, new_rows, present_rows, rejected_lines FROM ingest_batches"
        " ORDER BY batch_id").fetchall()
    connection.close()
    # New: its assessment and its occurrence; present: the 17 rows and the shared residual.
    assert rows == [(1, 5, 17, 0, 0), (2, 6, 2, 18, 0)]


def test_two_problems_with_the_same_spans_share_one_residual(
    store_db: Path | str, tmp_path: Path
) -> None:
    frames = write_jsonl(tmp_path / "two.jsonl", [
        gained_frame("Tom gained apples.", "delta_quantity_unbound", ref="t1"),
        gained_frame("Sam gained pears.", "delta_quantity_unbound", ref="t2"),
    ])
    expected = spec_residual_id("unary_delta_transition", "missing_role",
                                "delta_quantity_unbound", GAINED)

    result, summary = _ingest_json(store_db, frames)

    assert result.exit_code == 0
    assert summary["batches"][0]["tables"] == {
        "contract_assessments": {"new": 2, "present": 0},
        "contract_residuals": {"new": 1, "present": 1},
        "residual_occurrences": {"new": 2, "present": 0},
        "surface_records": {"new": 0, "present": 0},
        "surface_occurrences": {"new": 0, "present": 0},
        "turns": {"new": 0, "present": 0},
        "turn_constructions": {"new": 0, "present": 0},
        "turn_assessments": {"new": 0, "present": 0},
    }
    assert list(residual_ids(store_db)) == [expected]
    occurrences = query(
        store_db, "SELECT a.problem_text, o.ordinal, o.residual_id FROM residual_occurrences o"
                  " JOIN contract_assessments a USING (assessment_id) ORDER BY o.seq")
    assert occurrences == [("Tom gained apples.", 0, expected),
                           ("Sam gained pears.", 0, expected)]


def test_the_same_residual_in_a_later_file_is_present_not_new(
    store_db: Path | str, tmp_path: Path
) -> None:
    first = write_jsonl(tmp_path / "1.jsonl",
                        [gained_frame("Tom gained apples.", "delta_quantity_unbound")])
    second = write_jsonl(tmp_path / "2.jsonl",
                         [gained_frame("Sam gained pears.", "delta_quantity_unbound")])
    _ingest_json(store_db, first)
    ids = residual_ids(store_db)

    _, summary = _ingest_json(store_db, second)

    assert summary["batches"][0]["tables"]["contract_residuals"] == {"new": 0, "present": 1}
    assert summary["batches"][0]["tables"]["residual_occurrences"] == {"new": 1, "present": 0}
    assert residual_ids(store_db) == ids


def _reword_explanations(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if a later version worded the (unhashed) explanation differently: same key, new
    content."""
    monkeypatch.setattr(projection, "explain", lambda label: f"Reworded: {label}.")


def test_the_same_key_with_different_content_rejects_the_file_and_writes_nothing(
    db_path: Path, tmp_path: Path, examples_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("ingest", "--db", db_path, examples_path).exit_code == 0
    before = dump(db_path)
    clash = write_jsonl(tmp_path / "clash.jsonl", [
        gained_frame("Ann gained 4.", "quantity_unbound"),       # new residual, fine
        gained_frame("Sam gained pears.", "delta_quantity_unbound"),  # example B's residual
    ])
    _reword_explanations(monkeypatch)

    result = cli("ingest", "--db", db_path, clash)

    expected = spec_residual_id("unary_delta_transition", "missing_role",
                                "delta_quantity_unbound", GAINED)
    assert result.exit_code == 2
    assert (f"{clash}:2: contract_residuals {expected} is already stored with different"
            " content") in result.stderr
    assert dump(db_path) == before


def test_a_clash_rejects_only_its_own_file(
    store_db: Path | str, tmp_path: Path, examples_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("ingest", "--db", store_db, examples_path).exit_code == 0
    clash = write_jsonl(tmp_path / "clash.jsonl",
                        [gained_frame("Sam gained pears.", "delta_quantity_unbound")])
    fine = write_jsonl(tmp_path / "fine.jsonl",
                       [gained_frame("Ann gained 4 pears.", "pronoun_antecedent_unresolved")])
    counts = row_counts(store_db)
    _reword_explanations(monkeypatch)

    result = cli("ingest", "--db", store_db, clash, fine)

    assert result.exit_code == 2
    assert row_counts(store_db) == {
        "ingest_batches": counts["ingest_batches"] + 1,
        "contract_assessments": counts["contract_assessments"] + 1,
        "contract_residuals": counts["contract_residuals"] + 1,
        "residual_occurrences": counts["residual_occurrences"] + 1,
        "tree_heads": counts["tree_heads"] + 1,
    }


def test_a_clash_raises_batch_rejected_through_the_api(
    store_db: Path | str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = json.dumps(gained_frame("Tom gained apples.", "delta_quantity_unbound"))
    with AuditStore.open(str(store_db)) as store:
        store.ingest([line], source="first")
        ledger = history(store_db)
        _reword_explanations(monkeypatch)
        with pytest.raises(BatchRejected) as rejected:
            store.ingest([json.dumps(gained_frame("Sam gained pears.",
                                                  "delta_quantity_unbound"))], source="second")
    assert rejected.value.summary.failure_count == 1
    assert history(store_db) == ledger
