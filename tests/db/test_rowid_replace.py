"""REPLACE aimed at a stored row's rowid, under a new key, must not swap that row.

A table whose key is not an INTEGER PRIMARY KEY keeps a hidden rowid; `INSERT OR REPLACE
INTO t (rowid, ...)` with a stored rowid and a fresh key meets no key conflict, only the
rowid one, and REPLACE deletes the stored row without firing delete triggers.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli
from construction_data import recorded_payload
from jsonl_files import write_jsonl
from raw_reads import dump
from sqlalchemy.dialects import sqlite
from store_support import distinct_frames, raw_connect
from turn_data import journal_entry, journal_line

from store.db.audit_store import AuditStore
from store.db.schema.record_kinds import APPEND_ONLY_TABLES
from store.db.schema.tables import metadata
from store.model.checkpoint import COSIGNATURE_V1, SignerKey
from store.model.cosignature import cosign


@pytest.fixture
def every_table_store(db_path: Path, tmp_path: Path) -> Path:
    journal = tmp_path / "turn_journal.jsonl"
    # A turn with construction evidence: its construction row, links and turn fields too.
    journal.write_text(journal_line(journal_entry(
        1, "What is a pack?", "pack — a lexicon.", "pack",
        construction_evidence=recorded_payload())) + "\n", encoding="utf-8")
    # Over 256 leaves, so the log stores a subtree; a checkpoint chooses the log's origin.
    frames = write_jsonl(tmp_path / "frames.jsonl", list(distinct_frames(40, "rowid")))
    for path in (*EXAMPLE_FILES, journal, frames):
        result = cli("ingest", "--db", db_path, path)
        assert result.exit_code == 0, result.stderr
    assert cli("checkpoint", "--db", db_path, "--origin", "audit.example.org/core").exit_code == 0
    # a kept checkpoint and a witness's cosignature of it
    log, witness = SignerKey("log", b"\x01" * 32), SignerKey("w", b"\x02" * 32, COSIGNATURE_V1)
    with AuditStore.open(str(db_path)) as store:
        kept = store.keep_checkpoint([log], "audit.example.org/core")
        store.add_cosignatures(kept.checkpoint_id, [cosign(
            store.checkpoint().body(), witness, 1)], [witness.verifier])
    return db_path


def _has_hidden_rowid(table: str) -> bool:
    """False when the key is a single column declared INTEGER on SQLite: then it is the
    rowid itself (a log position is BIGINT elsewhere, INTEGER there)."""
    key = list(metadata.tables[table].primary_key.columns)
    return not (len(key) == 1
                and key[0].type.compile(dialect=sqlite.dialect()) == "INTEGER")


HIDDEN_ROWID_TABLES = [t for t in APPEND_ONLY_TABLES if _has_hidden_rowid(t)]


def test_the_tables_with_a_hidden_rowid() -> None:
    assert set(HIDDEN_ROWID_TABLES) == {
        "contract_assessments", "contract_residuals", "residual_occurrences",
        "surface_records", "surface_occurrences", "residual_tallies", "turns", "log_subtrees",
        "log_origin", "checkpoint_cosignatures", "sighting_counts", "turn_fields",
        "turn_constructions", "turn_assessments", "residual_record_tallies", "turn_tallies"}


def _fresh(value: object) -> object:
    # Another key value of the same type, not stored anywhere.
    return "f" * 64 if isinstance(value, str) else 10**9


@pytest.mark.parametrize("table", HIDDEN_ROWID_TABLES)
@pytest.mark.parametrize("verb", ["INSERT OR REPLACE", "REPLACE"])
def test_replace_onto_a_stored_rowid_is_refused(every_table_store: Path, table: str,
                                                verb: str) -> None:
    before = dump(every_table_store)
    with closing(raw_connect(every_table_store)) as connection:
        connection.row_factory = sqlite3.Row
        stored = connection.execute(f"SELECT rowid AS rid, * FROM {table} LIMIT 1").fetchone()
        assert stored is not None, f"the fixture has no {table} row"
        row = {name: stored[name] for name in stored.keys() if name != "rid"}  # noqa: SIM118 (a Row iterates values)
        keys = [r[1] for r in connection.execute(f"PRAGMA table_info({table})") if r[5]]
        row.update({key: _fresh(row[key]) for key in keys})
        names = ", ".join(["rowid", *row])
        marks = ", ".join("?" for _ in range(len(row) + 1))
        with pytest.raises(sqlite3.IntegrityError, match=f"{table} is append-only"):
            connection.execute(f"{verb} INTO {table} ({names}) VALUES ({marks})",
                               [stored["rid"], *row.values()])
    assert dump(every_table_store) == before
