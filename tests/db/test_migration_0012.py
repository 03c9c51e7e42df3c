"""Revision 0012 on a store revision 0010 wrote (tests/data/store-rev0010-construction.db,
tests/data/README.md): its journal lines carrying construction_evidence gain their
projection as one batch appended after the newest, every existing row, leaf and tree head
kept; downgrade takes that batch back out, the store exactly as it was. Values written out."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
import sqlalchemy as sa
from backends import raw_query
from cli_runs import cli
from raw_reads import dump, query, table_dump, tables, trigger_definitions
from sqlalchemy import Boolean
from store_support import (
    HEAD_TABLES,
    HEAD_TRIGGERS,
    RECORD_TALLY_TABLES,
    TEXT_TABLES,
    TURN_TALLY_TABLES,
)
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.db.schema.engine import create_store_engine
from store.db.schema.guards import expected_sqlite_guards
from store.db.schema.tables import metadata

DATA = Path(__file__).resolve().parents[1] / "data"
STORE = DATA / "store-rev0010-construction.db"
JOURNAL = DATA / "journal-rev0010-construction.jsonl"  # the journal batch 2 stored

# At revision 0010: the ADR-0225 frames (batch 1), the journal (batch 2).
REV0010_HEADS = [
    (1, 18, "afa256f026435920483fc8cf53bb61046e3194cbc31f97e017af308c70ab90f3"),
    (2, 33, "a4c82e88b3f8dfa9032e4887ed9a3ca82488e8335e26d873a743ac9010c4a489"),
]
REV0010_TABLES = set(HEAD_TABLES) - {"turn_fields", "turn_constructions", "turn_assessments",
                                     *TEXT_TABLES, *RECORD_TALLY_TABLES, *TURN_TALLY_TABLES}
# The journal's turns 1, 2, 3, 5 and 6 carry a payload (turn 4's is null).
TURN_1 = "c62a6382c9a8a00945ddfc0f1f7ca1ae691538b77850ebf52542e69679aa8eb3"
TURN_2 = "f49e33a2125eab22dda6298af88e5b9150fd20d41f624c2fcf6255f2076c0f00"
TURN_3 = "0eb167fb19ed5d0dc0457d97221ead7366acace470155fffd03659375c82a41c"
TURN_5 = "87564d301111e177686c378ffb5254469a3ec7097ac104aca96f2702efdb5863"
TURN_6 = "00af1dd98c4da41f9206319ca63d0ca2968259f68e0e99a97596899c9139fc9c"
CONSTRUCTIONS = [  # (turn_key, seq, batch_id, status, missing_reason), in seq order
    (TURN_1, 34, 3, "recorded", None),
    (TURN_2, 42, 3, "missing_evidence",
     "construction_evidence_unsupported_schema_version: 'construction_evidence_v2'"),
    (TURN_3, 43, 3, "recorded", None),
    (TURN_5, 47, 3, "missing_evidence", "problem_frame_unavailable"),
    (TURN_6, 48, 3, "missing_evidence", "construction_evidence_projection_failed: "
     "contract_assessments[0].evidence_spans[0]: text 'gains' is not problem_text[4:10]"),
]
LINKS = [  # (turn_key, ordinal, assessment_id, seq, batch_id)
    (TURN_1, 0, "85c05fbe7133f2e905ce85b69659c62227230f3f8fec586522b8a7e64d073e22", 40, 3),
    (TURN_1, 1, "53270f582bf6eae709ef12b83be91797ae8bb8eabddc36c61dd63c0f307c6807", 41, 3),
    (TURN_3, 0, "914f7ef746b257ad5ffb80147c6cf89f9f1afa534c7c4436cd9556a2d1dccd4d", 46, 3),
]
# The fixture's sighting counts (revision 0010 named each record by id; 0019 by seq):
# (batch_id, record_seq, record_table, sightings), by batch and seq.
SIGHTING_COUNTS_0010 = [
    (1, 2, "contract_residuals", 1), (1, 4, "contract_residuals", 1),
    (1, 6, "contract_residuals", 1), (1, 9, "contract_residuals", 1),
    (1, 12, "contract_residuals", 1), (1, 15, "contract_residuals", 1),
    (2, 19, "surface_records", 5), (2, 26, "surface_records", 1),
]
# The residuals they project to were stored by batch 1 (the ADR-0225 frames: the same spans,
# sentence_index null): only the turns' sightings are new.
# 33 leaves + 16: 5 statuses, 3 links, 3 assessments, 4 sightings, 0 residuals, the batch row
# (its root varies: the batch row holds the time of the upgrade).
LEAVES_AFTER = 49


@pytest.fixture
def store(tmp_path: Path) -> Path:
    copy = tmp_path / "store.db"
    shutil.copyfile(STORE, copy)
    return copy


def run(*args: str | Path) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def heads(db: Path) -> list[tuple[object, ...]]:
    return query(db, "SELECT batch_id, tree_size, root_hash FROM tree_heads ORDER BY batch_id")


def test_the_fixture_is_the_store_the_readme_describes(store: Path) -> None:
    assert query(store, "SELECT version_num FROM alembic_version") == [("0010",)]
    assert tables(store) == {*REV0010_TABLES, "alembic_version"}
    assert heads(store) == REV0010_HEADS
    assert [r[0] for r in query(store, "SELECT line FROM turns ORDER BY seq")] == (
        JOURNAL.read_text(encoding="utf-8").splitlines())


def test_upgrade_projects_the_stored_turns_as_one_batch(store: Path) -> None:
    before = {table: table_dump(store, table) for table in REV0010_TABLES}
    old_heads = heads(store)
    run("db", "upgrade", "--db", store)  # to head: 0012, then 0013's search texts, 0014-0018
    assert query(store, "SELECT version_num FROM alembic_version") == [("0019",)]
    # Every row stored before is still there, unchanged, in its place; so are the heads.
    for table, rows in before.items():
        if table != "sighting_counts":  # revision 0019 counts them afresh, by record seq
            assert table_dump(store, table)[:len(rows)] == rows, table
    counts = query(store, "SELECT * FROM sighting_counts ORDER BY batch_id, record_seq")
    assert counts[:8] == SIGHTING_COUNTS_0010
    assert counts[8:] == query(  # batch 3's: each residual its turns sighted, counted here
        store, "SELECT 3, r.seq, 'contract_residuals', count(*) FROM residual_occurrences o "
               "JOIN contract_residuals r ON r.residual_id = o.residual_id WHERE o.residual_id "
               "IN (SELECT residual_id FROM residual_occurrences WHERE batch_id = 3) "
               "GROUP BY r.seq ORDER BY r.seq")
    assert len(counts) > 8
    assert heads(store)[:2] == old_heads == REV0010_HEADS
    [batch] = query(store, "SELECT batch_id, source, record_type, lines, new_rows, "
                           "present_rows, rejected_lines FROM ingest_batches WHERE batch_id = 3")
    assert batch == (3, "alembic revision 0012: construction evidence of stored journal turns",
                     "turn_constructions", 5, 15, 9, 0)
    assert query(store, "SELECT * FROM turn_constructions ORDER BY seq") == CONSTRUCTIONS
    assert query(store, "SELECT * FROM turn_assessments ORDER BY seq") == LINKS
    assert query(store, "SELECT count(*) FROM contract_residuals WHERE batch_id = 3") == [(0,)]
    assert query(store, "SELECT count(*) FROM residual_occurrences WHERE batch_id = 3") == [
        (4,)]
    verify = run("verify", "--db", store)
    assert verify.startswith(f"intact: {LEAVES_AFTER} leaves, root ")
    # Every trigger is kept, each as the head revision defines it.
    assert {name for name, _, _ in trigger_definitions(store)} == HEAD_TRIGGERS
    assert trigger_definitions(store) == {(g.name, g.table, g.sql)
                                          for g in expected_sqlite_guards().values()}


def test_the_backfill_gives_what_ingest_gives(store: Path, tmp_path: Path) -> None:
    """The same journal ingested into a store at head: the same rows, ids and links."""
    run("db", "upgrade", "--db", store)
    fresh = tmp_path / "fresh.db"
    run("ingest", JOURNAL, "--db", fresh)
    linked = "assessment_id IN (SELECT assessment_id FROM turn_assessments)"
    statements = [
        "SELECT turn_key, status, missing_reason FROM turn_constructions ORDER BY turn_key",
        "SELECT turn_key, ordinal, assessment_id FROM turn_assessments ORDER BY turn_key, ordinal",
        "SELECT assessment_id, problem_text, source_ref, candidate_organ, explanation, "
        f"evidence_spans FROM contract_assessments WHERE {linked} ORDER BY assessment_id",
        f"SELECT assessment_id, ordinal, residual_id FROM residual_occurrences WHERE {linked} "
        "ORDER BY assessment_id, ordinal",
    ]
    for statement in statements:
        assert query(fresh, statement) == query(store, statement), statement
    assert sorted(r[2] for r in query(store, statements[1])) == sorted(r[2] for r in LINKS)


def test_downgrade_takes_the_batch_back_out(store: Path) -> None:
    original = sorted(dump(store))
    run("db", "upgrade", "--db", store)
    run("db", "downgrade", "0010", "--db", store)
    # The store as it was, row for row (SQLite lists the recreated triggers later).
    assert sorted(dump(store)) == original
    run("db", "upgrade", "--db", store)  # and up again: the same batch, the same head
    assert query(store, "SELECT * FROM turn_constructions ORDER BY seq") == CONSTRUCTIONS
    verify = run("verify", "--db", store)
    assert verify.startswith(f"intact: {LEAVES_AFTER} leaves, root ")


def test_downgrade_refuses_to_drop_rows_an_ingest_wrote(store: Path, tmp_path: Path) -> None:
    run("db", "upgrade", "--db", store)
    other = tmp_path / "other_journal.jsonl"  # another journal: its turn 1 has a payload
    other.write_text(journal_line(journal_entry(
        1, "Sam gained 3.", DISCLOSURE, "none",
        construction_evidence={"schema_version": "construction_evidence_v2"})) + "\n",
        encoding="utf-8")
    run("ingest", other, "--db", store)
    before = dump(store)
    refused = cli("db", "downgrade", "0010", "--db", store)
    assert refused.exit_code == 1
    assert ("cannot downgrade below 0012: would drop 1 turn_constructions rows, leaves of the "
            "log") in refused.output
    assert dump(store) == before


def _copy_to_postgresql(url: str) -> None:
    """The 0010 fixture's rows in a PostgreSQL store at revision 0010, each table's columns as
    the fixture has them (0019 names a sighting count's record by seq, 0010 by id; SQLite's 0/1
    read as the Boolean they are)."""
    run("db", "upgrade", "0010", "--db", url)
    engine = create_store_engine(url, write=True)
    try:
        with closing(sqlite3.connect(STORE)) as source, engine.begin() as target:
            source.row_factory = sqlite3.Row
            for name in sorted(REV0010_TABLES):
                head = metadata.tables[name]
                rows = [{k: bool(v) if k in head.c and isinstance(head.c[k].type, Boolean)
                         and v is not None else v for k, v in dict(row).items()}
                        for row in source.execute(f"SELECT * FROM {name}")]
                if rows:
                    target.execute(sa.table(name, *map(sa.column, rows[0])).insert(), rows)
    finally:
        engine.dispose()


def test_upgrade_and_downgrade_on_postgresql(pg_url: str) -> None:
    _copy_to_postgresql(pg_url)
    before = {name: sorted(map(tuple, raw_query(pg_url, f"SELECT * FROM {name}")))
              for name in REV0010_TABLES}
    run("db", "upgrade", "--db", pg_url)
    assert [tuple(r) for r in raw_query(
        pg_url, "SELECT * FROM turn_constructions ORDER BY seq")] == CONSTRUCTIONS
    assert [tuple(r) for r in raw_query(
        pg_url, "SELECT * FROM turn_assessments ORDER BY seq")] == LINKS
    assert run("verify", "--db", pg_url).startswith(f"intact: {LEAVES_AFTER} leaves, root ")
    run("db", "downgrade", "0010", "--db", pg_url)
    after = {name: sorted(map(tuple, raw_query(pg_url, f"SELECT * FROM {name}")))
             for name in REV0010_TABLES}
    assert after == before
    # The delete guards are back, enabled: a DELETE is still refused.
    with pytest.raises(Exception, match="append-only"):
        raw_query(pg_url, "DELETE FROM ingest_batches")
