"""Revision 0019 on a store revision 0018 made: `sighting_counts` names each record by its
seq, not its id. Every ledgered row, tree head and other table stays as it was; the counts are
the ones the store held, each record named by its seq; downgrade leaves the file exactly as
revision 0018 had it. Values written out, from the fixture store (tests/data/README.md)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_runs import cli
from raw_reads import dump, indexes, query, trigger_definitions
from store_support import revision_of, url_of

from store.db.schema.guards import expected_sqlite_guards
from store.db.schema.schema_version import downgrade, upgrade
from store.db.verify.derived_record import derived_record_problems, derived_sums

DATA = Path(__file__).resolve().parents[1] / "data"
REV0010_STORE = DATA / "store-rev0010.db"

# The fixture's sighting counts as revision 0010 stored them: (batch, record id, table, record
# seq, sightings), in rowid order.
BY_ID = [
    (1, "5f4231612aefac6da20e8ff3b6f03e71b96900412e76e45ff4d1a610d8a41fa7", "surface_records",
     1, 3),
    (2, "2fc995f3d16d5768e5791be82b397a586ed17c0dee91766cd0d9b5ed2755a89a", "surface_records",
     9, 2),
    (3, "5f4231612aefac6da20e8ff3b6f03e71b96900412e76e45ff4d1a610d8a41fa7", "surface_records",
     1, 5),
    (4, "a784021ab114028f4f15c54120b6e71920aaa1fa2038a94d58b1f48f89331927", "surface_records",
     20, 1),
    (5, "39b60db8dbcc8445553872431a5623d9ef0bb0ef99832fbe61beacaa92b52299", "contract_residuals",
     27, 1),
    (5, "4feedea2794b1c38ca976c5f12ca46c65bb6b67192a7cbaa966f9b25a15bdbe2", "contract_residuals",
     35, 1),
    (5, "54b43aa2d7a9ec73c55f994d92be93d9f3148b28f72ac43c1f99fdf360f5fc42", "contract_residuals",
     25, 1),
    (5, "a2e904d6110b5c5659efaca2632944f833c9c88b52624f087313410db4f74319", "contract_residuals",
     32, 1),
    (5, "be3e33436b53ca065b212fb84907805390aba675d25f1d1b52adcec10743cf7d", "contract_residuals",
     29, 1),
    (5, "f7fe0f0e8f7669a18b1dd05197e39f3c286b315d93b3b1887d13b15b6b573845", "contract_residuals",
     38, 1),
]
# The same counts at revision 0019: (batch, record seq, table, sightings), by batch and seq.
BY_SEQ = [
    (1, 1, "surface_records", 3), (2, 9, "surface_records", 2), (3, 1, "surface_records", 5),
    (4, 20, "surface_records", 1), (5, 25, "contract_residuals", 1),
    (5, 27, "contract_residuals", 1), (5, 29, "contract_residuals", 1),
    (5, 32, "contract_residuals", 1), (5, 35, "contract_residuals", 1),
    (5, 38, "contract_residuals", 1),
]
INDEXES_0018 = {
    "ix_sighting_counts_most_seen": ("sighting_counts", [
        "record_table", "sightings", "record_seq", "batch_id", "record_id"]),
    "ix_sighting_counts_record_id": ("sighting_counts", ["record_id", "batch_id", "sightings"]),
}
INDEXES_0019 = {
    "ix_sighting_counts_most_seen": ("sighting_counts", [
        "record_table", "sightings", "record_seq", "batch_id"]),
    "ix_sighting_counts_record_seq": ("sighting_counts", ["record_seq", "batch_id", "sightings"]),
}
GUARD_0018 = (
    "CREATE TRIGGER sighting_counts_append_only_insert BEFORE INSERT ON sighting_counts WHEN "
    "EXISTS (SELECT 1 FROM sighting_counts WHERE batch_id = NEW.batch_id AND record_id = "
    "NEW.record_id) OR NEW.rowid <> -1 BEGIN SELECT RAISE(ABORT, 'sighting_counts is "
    "append-only: a row with this key exists'); END")
GUARD_0019 = GUARD_0018.replace("record_id = NEW.record_id", "record_seq = NEW.record_seq")


@pytest.fixture
def store_at_0018(tmp_path: Path) -> Path:
    """The revision 0010 fixture store, upgraded to revision 0018 (the previous head)."""
    path = tmp_path / "store.db"
    shutil.copyfile(REV0010_STORE, path)
    upgrade(url_of(path), "0018")
    return path


def _not_the_counts(lines: list[str]) -> list[str]:
    return [line for line in lines if "sighting_counts" not in line
            and "alembic_version" not in line]


def test_upgrade_names_each_record_by_seq_and_keeps_every_other_row(store_at_0018: Path
                                                                   ) -> None:
    assert query(store_at_0018, "SELECT * FROM sighting_counts ORDER BY rowid") == BY_ID
    rows, heads = dump(store_at_0018), query(store_at_0018, "SELECT * FROM tree_heads")
    others = {name: index for name, index in indexes(store_at_0018).items()
              if name not in INDEXES_0018}
    guards = trigger_definitions(store_at_0018)
    assert ("sighting_counts_append_only_insert", "sighting_counts", GUARD_0018) in guards

    upgrade(url_of(store_at_0018), "0019")

    assert revision_of(url_of(store_at_0018)) == "0019"
    assert query(store_at_0018, "SELECT * FROM sighting_counts ORDER BY batch_id, record_seq"
                 ) == BY_SEQ
    assert query(store_at_0018, "SELECT * FROM tree_heads") == heads
    assert _not_the_counts(dump(store_at_0018)) == _not_the_counts(rows)
    assert indexes(store_at_0018) == {**others, **INDEXES_0019}
    assert trigger_definitions(store_at_0018) == (
        guards - {("sighting_counts_append_only_insert", "sighting_counts", GUARD_0018)}
        | {("sighting_counts_append_only_insert", "sighting_counts", GUARD_0019)})
    assert trigger_definitions(store_at_0018) == {
        (g.name, g.table, g.sql) for g in expected_sqlite_guards().values()}
    verified = cli("verify", "--db", store_at_0018)
    assert verified.exit_code == 0, verified.output
    assert verified.stdout.startswith("intact: 41 leaves, root ")


def test_the_guards_refuse_a_second_count_of_a_record_in_a_batch(store_at_0018: Path) -> None:
    upgrade(url_of(store_at_0018), "0019")
    connection = sqlite3.connect(store_at_0018)
    try:
        with pytest.raises(sqlite3.IntegrityError,
                           match="sighting_counts is append-only: a row with this key exists"):
            connection.execute("INSERT OR REPLACE INTO sighting_counts VALUES "
                               "(5, 25, 'contract_residuals', 9)")
        with pytest.raises(sqlite3.IntegrityError, match="UPDATE rejected"):
            connection.execute("UPDATE sighting_counts SET sightings = 9")
    finally:
        connection.close()
    assert query(store_at_0018, "SELECT * FROM sighting_counts ORDER BY batch_id, record_seq"
                 ) == BY_SEQ


def test_downgrade_leaves_revision_0018_s_store(store_at_0018: Path) -> None:
    """The same definitions and rows, each table's rows in their rowid order; only the schema's
    own list differs in order (the table and its indexes now come last in sqlite_master)."""
    before = dump(store_at_0018)
    upgrade(url_of(store_at_0018), "0019")

    downgrade(url_of(store_at_0018), "0018")

    assert revision_of(url_of(store_at_0018)) == "0018"
    after = dump(store_at_0018)
    assert sorted(after) == sorted(before)
    assert [line for line in after if "sighting_counts" not in line] == [
        line for line in before if "sighting_counts" not in line]
    assert query(store_at_0018, "SELECT * FROM sighting_counts ORDER BY rowid") == BY_ID


def test_a_verify_record_summed_before_asks_for_a_full_verify(store_at_0018: Path) -> None:
    """A verify record keeps a sum per column of each derived table: one written before this
    revision summed the record ids' lengths as well (six sums, now five)."""
    from sqlalchemy import create_engine

    upgrade(url_of(store_at_0018), "0019")
    engine = create_engine(url_of(store_at_0018))
    try:
        with engine.connect() as connection:
            # rows; sums of batch_id, record_seq, record_table's lengths, sightings
            now = derived_sums(connection, 5, 41)
            assert now["sighting_counts"] == (10, 40, 217, 4 * 15 + 6 * 18, 17)
            # the same rows as revision 0010 laid them out: record_id (64 characters) second
            older = {**now, "sighting_counts": (10, 40, 10 * 64, 168, 217, 17)}
            assert list(derived_record_problems(connection, now, 5, 41)) == []
            problems = list(derived_record_problems(connection, older, 5, 41))
    finally:
        engine.dispose()
    assert [(p.table, p.reason) for p in problems] == [(
        "sighting_counts", "the verify record sums this table's columns as an earlier revision "
                           "laid them out: run a full verify with --record again")]
