"""A Workbench journal line carrying construction_evidence (core-workbench.md §4) through
`core-audit ingest`, on both backends: its assessments and residuals stored with the ids the
equivalent frame gives (ingested into another store), its status and links as leaves; a
payload that is absent, of another version or malformed stored verbatim, the turn saying why.
Ids are written out (computed once by the recipes of docs/design.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from backends import pg_schema
from cli_runs import cli
from construction_data import (
    REFUSED_ID,
    RESIDUALS,
    RUNNABLE_ID,
    TURN_KEY,
    equivalent_frame,
    recorded_payload,
)
from raw_reads import query, table_rows
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.db.audit_store import AuditStore

LINES = [
    journal_line(journal_entry(1, "Tom gained 3.", DISCLOSURE, "none",
                               construction_evidence=recorded_payload())),
    journal_line(journal_entry(2, "Tom gained 3 degrees.", DISCLOSURE, "none",
                               construction_evidence=recorded_payload(
                                   schema_version="construction_evidence_v2"))),
    journal_line(journal_entry(3, "Tom gained 3.", DISCLOSURE, "none",
                               construction_evidence="not an object")),
    journal_line(journal_entry(4, "What is a pack?", "pack — a ratified lexicon.", "pack")),
    journal_line(journal_entry(5, "Tom gained 3.", DISCLOSURE, "none",
                               construction_evidence=recorded_payload(contract_assessments=[
                                   {"candidate_organ": "unary_delta_transition",
                                    "evidence_spans": [{"start": 4, "end": 10,
                                                        "text": "gains"}]}]))),
]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def ingest(db: Path | str, path: Path) -> dict[str, Any]:
    result = cli("ingest", path, "--db", db, "--json")
    assert result.exit_code == 0, result.output
    [batch] = json.loads(result.stdout)["batches"]
    return dict(batch)


def test_a_journal_with_construction_evidence_stores_its_projection(
        store_db: Path | str, tmp_path: Path) -> None:
    batch = ingest(store_db, write(tmp_path / "turn_journal.jsonl", LINES))
    assert batch["rejected"] is False and batch["lines"] == 5
    # Four payloads (turn 4's is null: no row), one recorded with two assessments.
    assert batch["tables"]["turn_constructions"] == {"new": 4, "present": 0}
    assert batch["tables"]["turn_assessments"] == {"new": 2, "present": 0}
    assert batch["tables"]["contract_assessments"] == {"new": 2, "present": 0}
    assert batch["tables"]["contract_residuals"] == {"new": 3, "present": 0}
    keys = [row[0] for row in query(store_db, "SELECT turn_key FROM turns ORDER BY seq")]
    assert keys[0] == TURN_KEY
    statuses = {r["turn_key"]: (r["status"], r["missing_reason"])
                for r in table_rows(store_db, "turn_constructions")}
    assert statuses == {
        keys[0]: ("recorded", None),
        keys[1]: ("missing_evidence", "construction_evidence_unsupported_schema_version: "
                                      "'construction_evidence_v2'"),
        keys[2]: ("missing_evidence", "construction_evidence_unsupported_shape"),
        keys[4]: ("missing_evidence", "construction_evidence_projection_failed: "
                  "contract_assessments[0].evidence_spans[0]: text 'gains' is not "
                  "problem_text[4:10]"),
    }
    assert [(r["turn_key"], r["ordinal"], r["assessment_id"])
            for r in table_rows(store_db, "turn_assessments")] == [
        (TURN_KEY, 0, REFUSED_ID), (TURN_KEY, 1, RUNNABLE_ID)]
    assessments = {r["assessment_id"]: r for r in table_rows(store_db, "contract_assessments")}
    assert set(assessments) == {REFUSED_ID, RUNNABLE_ID}
    assert {(r["problem_text"], r["source_ref"]) for r in assessments.values()} == {
        ("Tom gained 3.", TURN_KEY)}
    produced = query(store_db, "SELECT ordinal, residual_id FROM residual_occurrences "
                               "WHERE assessment_id = ? ORDER BY ordinal", (REFUSED_ID,))
    assert [rid for _, rid in produced] == [RESIDUALS["changed_object_unbound"],
                                            RESIDUALS["direction_unbound"],
                                            RESIDUALS["action_cue_unbound"]]
    # Every line is stored verbatim, the malformed ones too.
    assert [r[0] for r in query(store_db, "SELECT line FROM turns ORDER BY seq")] == LINES
    verify = cli("verify", "--db", store_db)
    assert verify.exit_code == 0, verify.output
    assert verify.stdout.startswith("intact: ")


def test_the_equivalent_frame_gives_the_same_ids_in_another_store(
        store_db: Path | str, tmp_path: Path) -> None:
    ingest(store_db, write(tmp_path / "turn_journal.jsonl", LINES[:1]))
    with pg_schema() if isinstance(store_db, str) else _sqlite(tmp_path) as other:
        frame = tmp_path / "frame.jsonl"
        frame.write_text(json.dumps(equivalent_frame(TURN_KEY)) + "\n", encoding="utf-8")
        ingest(other, frame)
        for db in (store_db, other):
            assert [r[0] for r in query(db, "SELECT assessment_id FROM contract_assessments "
                                            "ORDER BY seq")] == [REFUSED_ID, RUNNABLE_ID]
            assert {r[0] for r in query(db, "SELECT residual_id FROM contract_residuals")} == (
                set(RESIDUALS.values()))
        # The frame's occurrences are the turn's, row for row.
        occurrences = "SELECT assessment_id, ordinal, residual_id FROM residual_occurrences " \
                      "ORDER BY seq"
        assert query(store_db, occurrences) == query(other, occurrences)


class _sqlite:
    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "other.db"

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *_: object) -> None:
        return None


def test_reingesting_the_journal_stores_nothing_new(store_db: Path | str,
                                                    tmp_path: Path) -> None:
    path = write(tmp_path / "turn_journal.jsonl", LINES)
    ingest(store_db, path)
    again = ingest(store_db, path)
    assert again["batch_id"] is None and again["same_input"] is True
    grown = ingest(store_db, write(tmp_path / "grown.jsonl", [*LINES, journal_line(
        journal_entry(6, "Tom gained 3.", DISCLOSURE, "none",
                      construction_evidence=recorded_payload()))]))
    # Turn 6 repeats turn 1's evidence: its own assessments (source_ref: its key), the
    # same residuals, sighted again; turns 1-5 read as stored.
    assert grown["tables"]["turn_constructions"] == {"new": 1, "present": 4}
    assert grown["tables"]["contract_assessments"] == {"new": 2, "present": 2}
    assert grown["tables"]["contract_residuals"] == {"new": 0, "present": 6}
    assert grown["tables"]["residual_occurrences"] == {"new": 3, "present": 3}


@pytest.mark.parametrize("status", ["missing_evidence", "recorded"])
def test_verify_rederives_the_status_from_the_line(tmp_path: Path, status: str) -> None:
    """A status row that says other than its line (written out of band, with its leaf
    recomputed so the log agrees) is named by verify."""
    import sqlite3
    from contextlib import closing

    db = tmp_path / "audit.db"
    other_version = journal_line(journal_entry(1, "Tom gained 3.", DISCLOSURE, "none",
                                               construction_evidence={"schema_version": 2}))
    ingest(db, write(tmp_path / "turn_journal.jsonl", [other_version]))
    with closing(sqlite3.connect(db)) as connection:
        connection.execute("DROP TRIGGER turn_constructions_append_only_update")
        connection.execute("UPDATE turn_constructions SET status = ?, missing_reason = NULL",
                           (status,))
        connection.commit()
    with AuditStore.open(f"sqlite:///{db}", read_only=True) as store:
        problems = [str(p) for p in store.verify().problems]
    [key] = [r[0] for r in query(db, "SELECT turn_key FROM turns")]
    assert (f"seq 4: turn_constructions {key}: says {status} (None); the line's evidence reads "
            "as missing_evidence (construction_evidence_unsupported_schema_version: 2)"
            ) in problems


def test_export_writes_the_statuses_and_links(store_db: Path | str, tmp_path: Path) -> None:
    ingest(store_db, write(tmp_path / "turn_journal.jsonl", LINES))
    exported = {}
    for kind in ("turn-constructions", "turn-assessments"):
        result = cli("export", kind, "--db", store_db, "--format", "jsonl")
        assert result.exit_code == 0, result.output
        exported[kind] = [json.loads(line) for line in result.stdout.splitlines()]
    statuses = [(r["turn_key"], r["status"]) for r in exported["turn-constructions"]]
    assert len(statuses) == 4 and statuses[0] == (TURN_KEY, "recorded")
    assert [(r["turn_key"], r["ordinal"], r["assessment_id"])
            for r in exported["turn-assessments"]] == [
        (TURN_KEY, 0, REFUSED_ID), (TURN_KEY, 1, RUNNABLE_ID)]
    refused = cli("export", "turn-assessments", "--db", store_db, "--format", "jsonl",
                  "--filter", "{}")
    assert refused.exit_code == 2 and "turn-assessments take no filter" in refused.stderr
