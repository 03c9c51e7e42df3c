"""Revision 0013 on a store of the previous head (0012): tests/data/store-rev0010-construction.db
(tests/data/README.md) upgraded to 0012, then to 0013. Every stored record gains its search
text, the FTS5 indexes find it, every row, leaf and tree head is kept, every trigger is there
as the head defines it; downgrade leaves the 0012 store exactly as it was. Values written out
from the fixture's inputs (the ADR-0225 frames, then six Workbench journal turns)."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from cli_runs import cli
from raw_reads import dump, query, table_dump, trigger_definitions
from store_support import (
    FTS_TABLES,
    RECORD_TALLY_TABLES,
    TEXT_TABLES,
    TRIGGERS_AT_0014,
    TURN_TALLY_TABLES,
)

from store.db.schema.guards import expected_sqlite_guards

STORE = Path(__file__).resolve().parents[1] / "data" / "store-rev0010-construction.db"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """The fixture at revision 0012, the head before this revision."""
    copy = tmp_path / "store.db"
    shutil.copyfile(STORE, copy)
    run("db", "upgrade", "0012", "--db", copy)
    assert query(copy, "SELECT version_num FROM alembic_version") == [("0012",)]
    return copy


def run(*args: str | Path) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def fts(db: Path, table: str, search: str) -> list[int]:
    return [row[0] for row in query(
        db, f"SELECT rowid FROM {table}_fts WHERE {table}_fts MATCH ? ORDER BY rowid",
        (search,))]


def test_upgrade_indexes_every_record_and_changes_no_row(store: Path) -> None:
    tables = [name for (name,) in query(store, "SELECT name FROM sqlite_master WHERE type = "
                                               "'table' AND name <> 'alembic_version'")]
    before = {table: table_dump(store, table) for table in tables}
    run("db", "upgrade", "0013", "--db", store)
    assert query(store, "SELECT version_num FROM alembic_version") == [("0013",)]
    for table, rows in before.items():
        assert table_dump(store, table) == rows, table
    # One document per record: the frames' residuals, the journal's six turns.
    counts = {t: query(store, f"SELECT count(*) FROM {t}")[0][0] for t in TEXT_TABLES}
    residuals, turns = (query(store, f"SELECT count(*) FROM {t}")[0][0]
                        for t in ("contract_residuals", "turns"))
    assert counts["residual_texts"] == residuals
    assert counts["turn_texts"] == turns == 6
    # "Tom gained 3." leaves three roles unbound: each residual's text is that problem and
    # its explanation.
    assert query(store, "SELECT problem_text, explanation FROM residual_texts "
                        "WHERE record_seq IN (2, 4, 6) ORDER BY record_seq") == [
        ("Tom gained 3.", "The action cue role is unbound."),
        ("Tom gained 3.", "The direction role is unbound."),
        ("Tom gained 3.", "The changed object role is unbound."),
    ]
    assert fts(store, "residual_texts", '"gained 3" AND direction') == [4]
    assert fts(store, "residual_texts", "passive*") == [
        seq for (seq,) in query(store, "SELECT record_seq FROM residual_texts WHERE "
                                       "problem_text = '3 apples were gained by Tom.'")]
    # Every trigger is kept, each as the head revision defines it; the text tables' too.
    assert {name for name, _, _ in trigger_definitions(store)} == TRIGGERS_AT_0014
    later = {*RECORD_TALLY_TABLES, *TURN_TALLY_TABLES}  # revisions 0015 and 0016
    rekeyed = "sighting_counts_append_only_insert"  # revision 0019 keys it by record_seq
    assert {t for t in trigger_definitions(store) if t[0] != rekeyed} == {
        (g.name, g.table, g.sql) for g in expected_sqlite_guards().values()
        if g.table not in later and g.name != rekeyed}
    assert {t for t in FTS_TABLES} <= {name for (name,) in query(
        store, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    # verify reads a store at head (0014: an index; 0015, 0016: the record and turn tallies)
    run("db", "upgrade", "--db", store)
    assert run("verify", "--db", store).startswith("intact: ")


def test_the_text_tables_are_append_only(store: Path) -> None:
    run("db", "upgrade", "--db", store)
    with closing(sqlite3.connect(store)) as connection:
        for statement in ("UPDATE residual_texts SET explanation = 'x' WHERE record_seq = 2",
                          "DELETE FROM turn_texts",
                          "INSERT INTO surface_texts (record_seq, batch_id, surface) "
                          "SELECT record_seq, batch_id, 'x' FROM surface_texts LIMIT 1",
                          "INSERT OR REPLACE INTO residual_texts (record_seq, batch_id) "
                          "VALUES (2, 1)"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                connection.execute(statement)


def test_an_index_changed_out_of_band_is_named_by_verify(store: Path) -> None:
    run("db", "upgrade", "--db", store)
    problem, explanation = query(store, "SELECT problem_text, explanation FROM residual_texts "
                                        "WHERE record_seq = 4")[0]
    with closing(sqlite3.connect(store)) as connection:
        connection.execute("INSERT INTO residual_texts_fts (residual_texts_fts, rowid, "
                           "problem_text, explanation) VALUES ('delete', 4, ?, ?)",
                           (problem, explanation))
        connection.commit()
    result = cli("verify", "--db", store)
    assert result.exit_code != 0
    assert "residual_texts_fts: indexes" in result.output
    assert "residual_texts_fts term 'direction': indexed otherwise than residual_texts's " \
           "rows give it" in result.output


def test_downgrade_leaves_the_previous_head_as_it_was(store: Path) -> None:
    original = sorted(dump(store))
    run("db", "upgrade", "0013", "--db", store)
    run("db", "downgrade", "0012", "--db", store)
    assert query(store, "SELECT version_num FROM alembic_version") == [("0012",)]
    assert sorted(dump(store)) == original
    run("db", "upgrade", "--db", store)  # and up again: the same documents
    assert fts(store, "residual_texts", '"gained 3" AND direction') == [4]


def test_ingest_after_the_upgrade_indexes_the_new_records(store: Path, tmp_path: Path) -> None:
    run("db", "upgrade", "--db", store)
    frame = tmp_path / "frame.jsonl"
    frame.write_text('{"problem_text": "Zoe lost 7 marbles.", "source_ref": "t", '
                     '"contract_assessments": [{"candidate_organ": "unary_delta_transition", '
                     '"missing_bindings": ["direction_unbound"], "unresolved_hazards": [], '
                     '"runnable": false, "explanation": "direction is unbound", '
                     '"evidence_spans": []}]}\n', encoding="utf-8")
    run("ingest", frame, "--db", store)
    [new] = query(store, "SELECT record_seq FROM residual_texts WHERE "
                         "problem_text = 'Zoe lost 7 marbles.'")
    assert fts(store, "residual_texts", "zoe marbl*") == [new[0]]
    assert run("verify", "--db", store).startswith("intact: ")
