"""Revision 0015 on a store revision 0014 wrote: the residual record tallies (per residual and
per batch that stored or sighted it, its facet columns, whether the batch stored it, the
sightings it recorded), built from the ledgered rows as the writer builds them. No row, leaf
or tree head of an earlier table changes; every trigger stays, and the new table has its
three guards; downgrade drops it and leaves the file's contents exactly as 0014 had them.

The store: the ADR-0225 frames (batch 1) and the family frames (batch 2, sighting
delta_quantity_unbound again). Values written out (test_residual_record_tallies.ROWS)."""

from __future__ import annotations

from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from raw_reads import dump, query, trigger_definitions
from store_support import HEAD_TRIGGERS, append_only_triggers, revision_of, url_of

from store.db.schema.engine import create_store_engine
from store.db.schema.schema_version import downgrade, upgrade
from store.db.write.writer import append_batch

TABLE = "residual_record_tallies"
# (record_seq, batch, code, residuals, occurrences)
ROWS = [
    (2, 1, "action_cue_unbound", 1, 1), (4, 1, "direction_unbound", 1, 1),
    (6, 1, "changed_object_unbound", 1, 1), (9, 1, "delta_quantity_unbound", 1, 1),
    (9, 2, "delta_quantity_unbound", 0, 1), (12, 1, "passive_voice_unsupported", 1, 1),
    (15, 1, "unit_object_conflict", 1, 1), (22, 2, "entity_unbound", 1, 1),
    (25, 2, "base_quantity_unbound", 1, 1), (27, 2, "state_entity_unbound", 1, 1),
    (30, 2, "original_whole_unbound", 1, 1), (32, 2, "inverse_topology_unlicensed", 1, 1),
    (35, 2, "unbound_base_quantity", 1, 1),
]
_READ = (f"SELECT record_seq, batch_id, residual_code, residuals, occurrences FROM {TABLE} "
         "ORDER BY record_seq, batch_id")


def _ingest(db: Path) -> None:
    engine = create_store_engine(url_of(db), write=True)
    try:
        for path in EXAMPLE_FILES[:2]:
            append_batch(engine, path.read_bytes().splitlines(keepends=True), path.name)
    finally:
        engine.dispose()


@pytest.fixture
def store_at_0014(db_path: Path) -> Path:
    """A store made by revision 0014 (the previous head) holding two batches of frames."""
    upgrade(url_of(db_path), "0014")
    _ingest(db_path)
    return db_path


def _without(lines: list[str], *names: str) -> list[str]:
    return [line for line in lines if not any(name in line for name in names)]


def test_upgrade_builds_the_rows_the_writer_writes_and_keeps_every_other(
        store_at_0014: Path, tmp_path: Path) -> None:
    rows, triggers = dump(store_at_0014), trigger_definitions(store_at_0014)
    heads = query(store_at_0014, "SELECT batch_id, tree_size, root_hash FROM tree_heads")

    upgrade(url_of(store_at_0014), "0015")

    assert revision_of(url_of(store_at_0014)) == "0015"
    assert query(store_at_0014, _READ) == ROWS
    assert query(store_at_0014, "SELECT batch_id, tree_size, root_hash FROM tree_heads") == heads
    # Every trigger there was, and the new table's three guards, in sqlite_master.
    after = trigger_definitions(store_at_0014)
    assert set(triggers) <= set(after)
    assert {name for name, _, _ in after} == set(HEAD_TRIGGERS)
    assert {name for name, _, _ in after} - {name for name, _, _ in triggers} == set(
        append_only_triggers(TABLE))
    assert _without(dump(store_at_0014), TABLE, "alembic_version") == _without(
        rows, "alembic_version")
    # The same rows as a store made at 0015 holds, its writer having written them.
    made_at_head = tmp_path / "head.db"
    upgrade(url_of(made_at_head), "head")
    _ingest(made_at_head)
    assert query(made_at_head, f"SELECT * FROM {TABLE} ORDER BY record_seq, batch_id") == \
        query(store_at_0014, f"SELECT * FROM {TABLE} ORDER BY record_seq, batch_id")


def test_the_upgraded_table_refuses_changes(store_at_0014: Path) -> None:
    import sqlite3
    from contextlib import closing

    upgrade(url_of(store_at_0014), "0015")
    with closing(sqlite3.connect(store_at_0014)) as connection:
        for statement in (f"UPDATE {TABLE} SET occurrences = 5",
                          f"DELETE FROM {TABLE}",
                          f"INSERT INTO {TABLE} SELECT * FROM {TABLE} WHERE record_seq = 2"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                connection.execute(statement)


def test_downgrade_drops_the_table_and_leaves_revision_0014_s_store(store_at_0014: Path
                                                                      ) -> None:
    before, triggers = dump(store_at_0014), trigger_definitions(store_at_0014)
    upgrade(url_of(store_at_0014), "0015")

    downgrade(url_of(store_at_0014), "0014")

    assert revision_of(url_of(store_at_0014)) == "0014"
    assert dump(store_at_0014) == before
    assert trigger_definitions(store_at_0014) == triggers
    assert query(store_at_0014, "SELECT name FROM sqlite_master WHERE name LIKE "
                                f"'{TABLE}%'") == []
