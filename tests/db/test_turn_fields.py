"""turn_fields (revision 0011): per turn, CORE's own time, its journal and the typed journal
fields, derived from its verbatim line; written per batch, proven by value before COMMIT,
backfilled by the revision on a store made at 0010, derived again by `verify`."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from backends import raw_query
from cli_runs import cli
from raw_reads import dump, query
from store_support import (
    CONSTRUCTION_TABLES,
    EXPECTED_TRIGGERS,
    HEAD_TABLES,
    RECORD_TALLY_TABLES,
    TEXT_TABLES,
    TURN_TALLY_TABLES,
    append_only_triggers,
    first_problem,
    raw_connect,
    refused_verify,
    triggers_bypassed,
    url_of,
    verify_both_ways,
)

from store.db.schema.schema_version import downgrade, upgrade

DATA = Path(__file__).resolve().parents[1] / "data"
REV0010_STORE = DATA / "store-rev0010.db"
sys.path.insert(0, str(DATA))
from store_rev0010_inputs import RUNTIME_LINE, main  # noqa: E402

# tests/data/README.md: the fixture's head, unchanged by any later revision.
REV0010_HEAD = (41, "01a28c9f5c66e6ad42d172e093ab31736b144afe2aa1d45feed3d76a0b0301f2")
DISCLOSURE = "I don't know — insufficient grounding for that yet."
DAY_US = 86_400_000_000
# 2026-07-30T18:01:01.123456+00:00 in µs since 0000-12-31T00:00Z: days from 0001-01-01 to
# 2026-07-30 are 739_826 (proleptic Gregorian), plus the one day before 0001-01-01.
T_2026_07_30 = (739_826 + 1) * DAY_US
FIELDS = ("turn_id", "core_time", "articulation_surface", "walk_surface",
          "verdict_identity_detail", "verdict_safety_detail", "verdict_ethics_detail",
          "proposal_candidates", "turn_cost_ms", "checkpoint_emitted")

# The tables revision 0011 leaves (revision 0012's construction tables and 0013's search
# texts, 0015 and 0016's tallies come after it).
TABLES_AT_0011 = tuple(t for t in HEAD_TABLES
                       if t not in (*CONSTRUCTION_TABLES, *TEXT_TABLES, *RECORD_TALLY_TABLES,
                                     *TURN_TALLY_TABLES))


def _at(hour: int, minute: int, second: int, micro: int) -> int:
    return T_2026_07_30 + ((hour * 60 + minute) * 60 + second) * 1_000_000 + micro


# What store_rev0010_inputs.py's lines say, written out: journal-a's five turns, journal-b's
# two, the ChatRuntime line (no journal, no typed fields, its offsetless time not a time).
PLAIN = (DISCLOSURE, DISCLOSURE, None, "", "acknowledge_uncertainty", "[]", 12, False)
EXPECTED_A = [
    (1, _at(18, 1, 1, 123456), None, "walked", "tone,warmth", "", "",
     '[{"candidate_id":"cand-1","source_kind":"discovery"}]', 7, True),
    (2, _at(18, 1, 2, 1), *PLAIN),  # 20:01:02.000001+02:00 is 18:01:02.000001 UTC
    (3, _at(18, 1, 3, 123456), *PLAIN),
    (4, _at(24, 0, 0, 0), *PLAIN),
    (5, _at(18, 1, 5, 123456), *PLAIN),
]
AUG_1 = T_2026_07_30 + 2 * DAY_US
EXPECTED_B = [(1, AUG_1 + 9 * 3600 * 1_000_000, *PLAIN),
              (2, AUG_1 + (9 * 3600 + 5) * 1_000_000, *PLAIN)]


def _fields(db: Path | str) -> list[tuple[Any, ...]]:
    """Per turn in seq order: its batch, its journal's turn 1 seq, and FIELDS."""
    return [tuple(row) for row in raw_query(
        db if isinstance(db, str) else url_of(db),
        "SELECT f.batch_id, (SELECT t.seq FROM turns t WHERE t.turn_key = f.journal_id), "
        + ", ".join(f"f.{name}" for name in FIELDS)
        + " FROM turn_fields f ORDER BY f.turn_seq")]


def _normal(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    # SQLite reads a Boolean back as 0/1.
    return [tuple(bool(v) if i == len(row) - 1 and v is not None else v
                  for i, v in enumerate(row)) for row in rows]


def _expected() -> list[tuple[Any, ...]]:
    """Batches 1-4 of the fixture: journal-a (3 turns), journal-b, journal-a grown, runtime."""
    a_first = 3  # journal-a's turn 1 is seq 3 (after its surface record and sighting)
    b_first = 11
    return [*((1, a_first, *row) for row in EXPECTED_A[:3]),
            *((2, b_first, *row) for row in EXPECTED_B),
            *((3, a_first, *row) for row in EXPECTED_A[3:]),
            (4, None, None, None, *[None] * 8)]


def _rows(db: Path) -> list[str]:
    """Every row of the tables revision 0010 has, as SQL (alembic's own aside)."""
    return [line for line in dump(db) if line.startswith("INSERT INTO ")
            and not line.startswith(('INSERT INTO "alembic_version"', 'INSERT INTO "turn_fields"'))]


def _head(db: Path) -> tuple[int, str]:
    (row,) = query(db, "SELECT tree_size, root_hash FROM tree_heads "
                       "ORDER BY tree_size DESC LIMIT 1")
    return (row[0], row[1])


def _triggers(db: Path) -> set[str]:
    return {name for (name,) in query(db, "SELECT name FROM sqlite_master "
                                          "WHERE type = 'trigger'")}


@pytest.fixture
def rev0010_store(tmp_path: Path) -> Path:
    path = tmp_path / "rev0010.db"
    shutil.copyfile(REV0010_STORE, path)
    return path


def test_the_revision_gives_every_stored_turn_its_fields_and_changes_no_row(
        rev0010_store: Path) -> None:
    before = _rows(rev0010_store)
    assert _head(rev0010_store) == REV0010_HEAD
    upgrade(url_of(rev0010_store), "0011")
    assert _normal(_fields(rev0010_store)) == _expected()
    # Every row of the 0010 tables reads as before: ids, leaves and heads are theirs.
    assert _rows(rev0010_store) == before
    assert _head(rev0010_store) == REV0010_HEAD
    # Batch mode drops triggers: every table still has its three, turn_fields too.
    assert _triggers(rev0010_store) == set(append_only_triggers(*TABLES_AT_0011))
    assert _triggers(rev0010_store) >= EXPECTED_TRIGGERS
    upgrade(url_of(rev0010_store), "head")  # verify reads a store at head (0012 adds nothing
    assert _head(rev0010_store) == REV0010_HEAD  # here: no line carries construction evidence)
    result = verify_both_ways(rev0010_store)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"intact: {REV0010_HEAD[0]} leaves, root {REV0010_HEAD[1]}")


def test_down_and_up_again_gives_the_same_rows(rev0010_store: Path) -> None:
    upgrade(url_of(rev0010_store), "head")
    written = _fields(rev0010_store)
    downgrade(url_of(rev0010_store), "0010")
    assert "turn_fields" not in {n for (n,) in query(
        rev0010_store, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert _triggers(rev0010_store) == set(append_only_triggers(*TABLES_AT_0011[:-1]))
    assert _head(rev0010_store) == REV0010_HEAD
    upgrade(url_of(rev0010_store), "head")
    assert _fields(rev0010_store) == written


def test_the_writer_writes_what_the_revision_derives(tmp_path: Path, store_db: Path | str
                                                     ) -> None:
    """The same inputs ingested at head (the offsetless line now refused, so left out)."""
    main(tmp_path)
    for name in ("journal-a.jsonl", "journal-b.jsonl", "journal-a-grown.jsonl"):
        assert cli("ingest", "--db", store_db, tmp_path / name).exit_code == 0
    url = store_db if isinstance(store_db, str) else url_of(store_db)
    written = _normal(_fields(url))
    assert written == _expected()[:-1]
    downgrade(url, "0010")
    upgrade(url, "head")
    assert _normal(_fields(url)) == written
    assert verify_both_ways(store_db).exit_code == 0


def test_a_timestamp_without_an_offset_is_refused_naming_the_line(tmp_path: Path) -> None:
    main(tmp_path)
    db = tmp_path / "audit.db"
    result = cli("ingest", "--db", db, tmp_path / "runtime.jsonl")
    assert result.exit_code == 2  # a rejected file
    assert (f"runtime.jsonl:1: timestamp: {RUNTIME_LINE['timestamp']!r} has no UTC offset"
            in result.stderr), result.stderr
    assert not db.exists() or query(db, "SELECT count(*) FROM turns") == [(0,)]


@pytest.fixture
def journal_store(tmp_path: Path) -> Path:
    main(tmp_path)
    db = tmp_path / "audit.db"
    for name in ("journal-a.jsonl", "journal-b.jsonl"):
        assert cli("ingest", "--db", db, tmp_path / name).exit_code == 0
    return db


def test_verify_finds_a_field_that_differs_from_its_line(journal_store: Path) -> None:
    with triggers_bypassed(journal_store) as connection:
        connection.execute("UPDATE turn_fields SET turn_cost_ms = 99 WHERE turn_id = 2 "
                           "AND batch_id = 1")
    (key,) = query(journal_store, "SELECT turn_key FROM turn_fields WHERE turn_id = 2 "
                                  "AND batch_id = 1")[0]
    (seq,) = query(journal_store, "SELECT seq FROM turns WHERE turn_key = ?", (key,))[0]
    result = refused_verify(journal_store)
    assert first_problem(result.stderr) == (
        f"seq {seq}: turn_fields turn {key}: turn_cost_ms differ from what its line says")


def test_verify_finds_a_turn_moved_to_another_journal(journal_store: Path) -> None:
    (other,) = query(journal_store, "SELECT journal_id FROM turn_fields WHERE batch_id = 2 "
                                    "AND turn_id = 1")[0]
    with triggers_bypassed(journal_store) as connection:
        connection.execute("UPDATE turn_fields SET journal_id = ? WHERE turn_id = 2 "
                           "AND batch_id = 1", (other,))
    result = refused_verify(journal_store)
    assert "its batch holds journal" in result.stderr and other in result.stderr


def test_verify_finds_a_row_added_for_no_turn(journal_store: Path) -> None:
    connection = raw_connect(journal_store)
    connection.execute("INSERT INTO turn_fields (turn_key, batch_id, turn_seq) "
                       "VALUES (?, 1, 1)", ("f" * 64,))
    connection.close()
    result = refused_verify(journal_store)
    assert (f"turn_fields turn {'f' * 64}: row names no stored turn (added out of band)"
            in result.stderr)


def test_a_row_dropped_on_insert_fails_the_batch_naming_turn_fields(journal_store: Path,
                                                                    tmp_path: Path) -> None:
    connection = raw_connect(journal_store)
    connection.execute("CREATE TRIGGER evil BEFORE INSERT ON turn_fields "
                       "BEGIN SELECT RAISE(IGNORE); END")
    connection.close()
    before = dump(journal_store)
    result = cli("ingest", "--db", journal_store, tmp_path / "journal-a-grown.jsonl")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: turn_fields: the batch did not read back as "
                                    "written (2 rows were inserted, 0 read back)"), result.stderr
    assert dump(journal_store) == before


def test_postgresql_a_trigger_altering_a_value_fails_the_batch(tmp_path: Path, pg_url: str
                                                              ) -> None:
    main(tmp_path)
    assert cli("ingest", "--db", pg_url, tmp_path / "journal-a.jsonl").exit_code == 0
    import psycopg
    from backends import libpq_url

    with psycopg.connect(libpq_url(pg_url), autocommit=True) as connection:
        connection.execute("CREATE FUNCTION evil() RETURNS trigger LANGUAGE plpgsql AS "
                           "$$ BEGIN NEW.turn_cost_ms := NEW.turn_cost_ms * 10; RETURN NEW; "
                           "END $$")
        connection.execute("CREATE TRIGGER evil BEFORE INSERT ON turn_fields FOR EACH ROW "
                           "EXECUTE FUNCTION evil()")
    result = cli("ingest", "--db", pg_url, tmp_path / "journal-a-grown.jsonl")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: turn_fields: the batch did not read back as "
                                    "written (2 rows were inserted and 2 read back, but their "
                                    "values differ)"), result.stderr
    assert raw_query(pg_url, "SELECT count(*) FROM turns") == [(3,)]


def test_export_filters_turns_by_core_time(journal_store: Path) -> None:
    found = cli("export", "turns", "--db", journal_store, "--format", "jsonl", "--filter",
                '{"timeFrom": "2026-07-30T20:01:02+02:00", "kind": ["WORKBENCH_JOURNAL"]}')
    assert found.exit_code == 0, found.stderr
    # journal-a's turns 2 (18:01:02.000001Z) and 3, journal-b's two (2026-08-01).
    assert [json.loads(line)["turn_id"] for line in found.stdout.splitlines()] == [2, 3, 1, 2]
    refused = cli("export", "turns", "--db", journal_store, "--format", "jsonl", "--filter",
                  '{"timeTo": "2026-07-30T18:00:00"}')
    assert refused.exit_code == 2 and refused.stdout == ""
    assert ("Invalid value for '--filter': timeTo: '2026-07-30T18:00:00' has no UTC offset"
            in refused.stderr)
