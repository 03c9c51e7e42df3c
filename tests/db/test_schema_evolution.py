"""The users' scenario: a store written at revision 0001 meets a newer core-audit (head 0003).

tests/data/store-rev0001.db was written by an earlier commit (tests/data/README.md) and is
never regenerated. Every test works on a copy of it.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest
from cli_runs import cli
from jsonl_files import write_jsonl
from log_leaves import history, leaf_entries
from raw_reads import dump, query, table_dump, tables, triggers
from rfc9162_reference import leaf, mth
from store_support import (
    FTS_TABLES,
    HEAD_TABLES,
    HEAD_TRIGGERS,
    REV0001_TABLES,
    append_only_triggers,
)
from teaching_data import LIGHT_SURFACE, MEMORY_SURFACE

from store import StoreError
from store.db.audit_store import AuditStore

DATA = Path(__file__).resolve().parents[1] / "data" / "store-rev0001.db"

# tests/data/README.md: the head checkpoint of the revision-0001 store.
REV0001_HEAD = "133 6f7afdc54f2cfb5f3f815f3bc21d55a3ffa989b606a181cc8da2e3d9fe038161"
REV0001_CHECKPOINT = REV0001_HEAD.replace(" ", ":")

REV0001_TRIGGERS = append_only_triggers(*REV0001_TABLES)
# 0003 tallies, 0004 the rowid guard, 0005 turns, 0006 the log, 0007 BIGINT (PG), 0008 guards v3,
# 0009 kept checkpoints, 0010 sighting counts, 0011 turn fields, 0012 construction evidence,
# 0013 full-text search, 0014 turn lookup index, 0015 residual record tallies, 0016 turn tallies,
# 0017 column order indexes, 0018 the turn facets' index
HEAD = "0019"

SURFACE_LINES = [
    {"grounding_source": "teaching", "surface": LIGHT_SURFACE, "subject": "light",
     "intent": "cause", "session_id": "s1", "turn_id": "t1"},
    {"grounding_source": "teaching", "surface": MEMORY_SURFACE, "subject": "memory",
     "intent": "verification", "session_id": "s1", "turn_id": "t2"},
    {"grounding_source": "none", "subject": "light", "intent": "definition",
     "session_id": "s1", "turn_id": "t3"},
]


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    copy = tmp_path / "store.db"
    shutil.copyfile(DATA, copy)
    return copy


def revision(db: Path) -> str:
    [(value,)] = query(db, "SELECT version_num FROM alembic_version")
    return value


def dumps_of(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """The residual store's rows (the ledger itself is replaced by the log at 0006)."""
    return {table: table_dump(db, table) for table in REV0001_TABLES[:-1]}


def root_of(checkpoint_note: str) -> str:
    """The root hash (hex) of a C2SP checkpoint: origin, size, base64 root, blank line."""
    return base64.b64decode(checkpoint_note.split("\n")[2]).hex()


def keep_checkpoint(db: Path, path: Path) -> Path:
    result = cli("checkpoint", "--db", db)
    assert result.exit_code == 0, result.output
    path.write_text(result.stdout, encoding="utf-8")
    return path


def upgraded(db: Path) -> None:
    result = cli("db", "upgrade", "--db", db)
    assert result.exit_code == 0, result.output


def ingest_surfaces(db: Path, tmp_path: Path) -> None:
    result = cli("ingest", write_jsonl(tmp_path / "surfaces.jsonl", SURFACE_LINES), "--db", db)
    assert result.exit_code == 0, result.output


def test_the_fixture_is_the_store_the_readme_describes(old_store: Path) -> None:
    assert revision(old_store) == "0001"
    assert tables(old_store) == {*REV0001_TABLES, "alembic_version"}
    assert triggers(old_store) == REV0001_TRIGGERS
    assert query(old_store, "SELECT seq, chain_hash FROM ledger ORDER BY seq DESC LIMIT 1") == [
        (133, REV0001_HEAD.split()[1])]
    assert query(old_store, "SELECT COUNT(*) FROM ingest_batches") == [(2,)]


@pytest.mark.parametrize("read_only", [False, True])
def test_opening_a_store_behind_head_is_refused(old_store: Path, read_only: bool) -> None:
    before = dump(old_store)
    with pytest.raises(StoreError, match=r"core-audit db upgrade"):
        AuditStore.open(str(old_store), read_only=read_only)
    assert revision(old_store) == "0001"  # not migrated silently
    assert dump(old_store) == before


@pytest.mark.parametrize("command", [["verify"], ["checkpoint"], ["ingest", "-"]])
def test_commands_on_a_store_behind_head_name_the_upgrade(old_store: Path,
                                                          command: list[str]) -> None:
    result = cli(*command, "--db", old_store)
    assert result.exit_code == 1
    assert "core-audit db upgrade" in result.stderr
    assert revision(old_store) == "0001"


def test_upgrade_keeps_every_row_id_and_ledger_hash(old_store: Path) -> None:
    before, chain = dumps_of(old_store), history(old_store)
    assert len(chain) == 133
    upgraded(old_store)
    assert revision(old_store) == HEAD
    assert dumps_of(old_store) == before
    # Leaf order is the old seq; each leaf's entry hashes to the old ledger's row_hash.
    assert history(old_store) == chain
    current = cli("db", "current", "--db", old_store)
    assert current.stdout.strip() == f"{HEAD} (at head)"
    root = mth([leaf(e) for e in leaf_entries(old_store)]).hex()
    verify = cli("verify", "--db", old_store)
    assert verify.exit_code == 0, verify.output
    assert verify.stdout.strip() == f"intact: 133 leaves, root {root}"
    checkpoint = cli("checkpoint", "--db", old_store)
    assert checkpoint.stdout.split("\n")[1] == "133"
    assert root_of(checkpoint.stdout) == root


def test_upgrade_leaves_the_triggers_of_both_revisions(old_store: Path) -> None:
    upgraded(old_store)
    assert triggers(old_store) == HEAD_TRIGGERS
    assert tables(old_store) == {*HEAD_TABLES, *FTS_TABLES, "alembic_version"}


# Per batch and combination, straight from the revision-0001 rows (no tallies involved).
DIRECT_TALLIES = """
SELECT batch_id, residual_kind, source_axis, candidate_organ, family_id, residual_code,
       SUM(residuals), SUM(occurrences) FROM (
  SELECT batch_id, residual_kind, source_axis, candidate_organ, family_id, residual_code,
         1 AS residuals, 0 AS occurrences FROM contract_residuals
  UNION ALL
  SELECT o.batch_id, r.residual_kind, r.source_axis, r.candidate_organ, r.family_id,
         r.residual_code, 0, 1
  FROM residual_occurrences o JOIN contract_residuals r USING (residual_id))
GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5 NULLS FIRST, 6"""


def test_upgrade_backfills_the_tallies_of_the_batches_already_stored(old_store: Path) -> None:
    expected = query(old_store, DIRECT_TALLIES)
    upgraded(old_store)
    stored = query(old_store, (
        "SELECT batch_id, residual_kind, source_axis, candidate_organ, family_id, "
        "residual_code, residuals, occurrences FROM residual_tallies "
        "ORDER BY batch_id, ordinal"))
    assert stored == expected
    assert {row[0] for row in stored} == {1, 2}  # both stored batches hold residuals
    [(residuals, occurrences)] = query(
        old_store, "SELECT SUM(residuals), SUM(occurrences) FROM residual_tallies")
    assert (residuals, occurrences) == tuple(query(old_store, (
        "SELECT (SELECT COUNT(*) FROM contract_residuals),"
        " (SELECT COUNT(*) FROM residual_occurrences)"))[0])


def test_upgrade_is_idempotent_at_head(old_store: Path) -> None:
    upgraded(old_store)
    after_first = dump(old_store)
    upgraded(old_store)
    assert dump(old_store) == after_first


def test_an_upgraded_store_takes_surface_records(old_store: Path, tmp_path: Path) -> None:
    before = dumps_of(old_store)
    upgraded(old_store)
    kept = keep_checkpoint(old_store, tmp_path / "checkpoint.txt")
    ingest_surfaces(old_store, tmp_path)
    assert query(old_store, "SELECT verification FROM surface_records ORDER BY seq") == [
        ("verified",), ("verified",), ("not_checked",)]
    assert query(old_store, "SELECT COUNT(*) FROM surface_occurrences") == [(3,)]
    # The new rows extend the old tree: leaves 134.., batch 3, and the old head still holds.
    assert query(old_store, "SELECT MIN(seq) FROM surface_records") == [(134,)]
    assert query(old_store, "SELECT MAX(batch_id) FROM ingest_batches") == [(3,)]
    after = dumps_of(old_store)
    for table in REV0001_TABLES[:-1]:
        assert after[table][: len(before[table])] == before[table], table
    verify = cli("verify", "--db", old_store, "--checkpoint", kept)
    assert verify.exit_code == 0, verify.output
    assert verify.stdout.strip().endswith("extends the checkpoint of size 133")


def test_downgrade_without_surface_rows_restores_revision_0001(old_store: Path,
                                                               tmp_path: Path) -> None:
    pristine = tmp_path / "pristine.db"
    shutil.copyfile(DATA, pristine)
    upgraded(old_store)
    result = cli("db", "downgrade", "0001", "--db", old_store)
    assert result.exit_code == 0, result.output
    assert revision(old_store) == "0001"
    assert tables(old_store) == {*REV0001_TABLES, "alembic_version"}
    assert triggers(old_store) == REV0001_TRIGGERS
    # Only the added tables, their indexes and triggers went: the rest is the same SQL text
    # (in another order: 0004's downgrade recreates the insert guards it had replaced).
    assert sorted(dump(old_store)) == sorted(dump(pristine))
    assert not query(old_store, "SELECT name FROM sqlite_master WHERE name LIKE '%surface%'")


def test_downgrade_with_surface_rows_is_refused(old_store: Path, tmp_path: Path) -> None:
    upgraded(old_store)
    ingest_surfaces(old_store, tmp_path)
    kept = keep_checkpoint(old_store, tmp_path / "checkpoint.txt")
    before = dump(old_store)
    result = cli("db", "downgrade", "0001", "--db", old_store)
    assert result.exit_code != 0
    assert revision(old_store) == HEAD
    assert dump(old_store) == before
    assert triggers(old_store) == HEAD_TRIGGERS
    verify = cli("verify", "--db", old_store, "--checkpoint", kept)
    assert verify.exit_code == 0, verify.output


def test_downgrade_refusal_is_a_clean_cli_error(old_store: Path, tmp_path: Path) -> None:
    """An expected refusal is a message and exit status 1, not a traceback."""
    upgraded(old_store)
    ingest_surfaces(old_store, tmp_path)
    result = cli("db", "downgrade", "0001", "--db", old_store)
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.stderr.startswith("Error: ")
    # Revision 0005 refuses first: the new surface records hold its verification columns.
    assert "would drop the verification columns of 2 ledgered surface records" in result.stderr


def test_an_unknown_revision_is_a_clean_cli_error(old_store: Path) -> None:
    upgraded(old_store)
    before = dump(old_store)
    result = cli("db", "downgrade", "9999", "--db", old_store)
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), result.exception
    assert "9999" in result.stderr
    assert dump(old_store) == before


# tests/data/README.md: the store written at revision 0004, with 12 surface records.
REV0004_DATA = Path(__file__).resolve().parents[1] / "data" / "store-rev0004.db"
REV0004_HEAD = "66 341f7bedf45e59ddccc762674162296aaed4b6b328e1dbb9aa1b738c8ab458dc"


def test_a_store_at_revision_0004_upgrades_keeping_its_surface_records(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    shutil.copyfile(REV0004_DATA, store)
    surface_columns = ("surface_id, seq, batch_id, grounding_source, surface, subject, intent, "
                       "corpus_id, chain_id, pack_id, verification, expected_surface")
    before = query(store, f"SELECT {surface_columns} FROM surface_records ORDER BY seq")
    sightings = table_dump(store, "surface_occurrences")
    chain = history(store)
    assert len(before) == 12
    assert cli("verify", "--db", store).exit_code == 1  # behind head: refused, not migrated
    result = cli("db", "upgrade", "--db", store)
    assert result.exit_code == 0, result.output
    assert revision(store) == HEAD
    assert query(store, f"SELECT {surface_columns} FROM surface_records ORDER BY seq") == before
    # The added columns hold nothing for old rows; their sightings gain a null turn_key.
    assert query(store, "SELECT count(*) FROM surface_records WHERE surface_form IS NOT NULL "
                        "OR hops IS NOT NULL OR checked_against IS NOT NULL") == [(0,)]
    assert [row[:-1] for row in table_dump(store, "surface_occurrences")] == sightings
    assert history(store) == chain
    assert triggers(store) == HEAD_TRIGGERS
    verified = cli("verify", "--db", store)
    assert verified.exit_code == 0, verified.output
    checkpoint = cli("checkpoint", "--db", store).stdout
    assert checkpoint.split("\n")[1] == REV0004_HEAD.split()[0]
    assert root_of(checkpoint) == mth([leaf(e) for e in leaf_entries(store)]).hex()
