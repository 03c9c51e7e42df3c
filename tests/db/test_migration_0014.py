"""Revision 0014 on a store revision 0013 wrote: an index on turn_fields (journal_id,
core_time, turn_seq), so one journal's turns in CORE-time order are one index range. Every
row, leaf, tree head and trigger stays as it was; downgrade drops the index and leaves the
file's contents exactly as revision 0013 had them. Values written out."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from raw_reads import dump, query, trigger_definitions
from sqlalchemy import event
from store_support import TRIGGERS_AT_0014, revision_of, store_at, url_of
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import journals
from store.db.queries.filters import RecordId
from store.db.schema.schema_version import downgrade, upgrade

INDEX = "ix_turn_fields_journal_id_core_time_turn_seq"
# Turn 2 is the earliest in CORE's time (its offset puts it before turn 1), turn 3 the latest.
TIMESTAMPS = {1: "2026-07-30T18:00:00.000000+00:00", 2: "2026-07-30T20:00:00.000000+05:00",
              3: "2026-07-30T18:30:00.000000+00:00"}


def _journal() -> list[str]:
    return [journal_line(journal_entry(turn_id, f"prompt {turn_id}", DISCLOSURE, "none",
                                       timestamp=TIMESTAMPS[turn_id])) + "\n"
            for turn_id in (1, 2, 3)]


@pytest.fixture
def store_at_0013(db_path: Path) -> Path:
    """A store made by revision 0013 (the previous head) holding a three-turn journal."""
    store_at(url_of(db_path), "0013", [("journal.jsonl", [line.encode() for line in _journal()])])
    return db_path


def _indexes(db: Path) -> dict[str, list[str]]:
    with closing(sqlite3.connect(db)) as connection:
        names = [name for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'turn_fields' "
            "AND sql IS NOT NULL ORDER BY name")]
        return {name: [column for _, _, column in connection.execute(
            f"PRAGMA index_info('{name}')")] for name in names}


def _without_revision(lines: list[str]) -> list[str]:
    return [line for line in lines if "alembic_version" not in line]


def test_upgrade_adds_the_index_and_keeps_every_row_and_trigger(store_at_0013: Path) -> None:
    assert revision_of(url_of(store_at_0013)) == "0013"
    assert INDEX not in _indexes(store_at_0013)
    rows, triggers = dump(store_at_0013), trigger_definitions(store_at_0013)
    heads = query(store_at_0013, "SELECT batch_id, tree_size, root_hash FROM tree_heads")

    upgrade(url_of(store_at_0013), "0014")

    assert revision_of(url_of(store_at_0013)) == "0014"
    assert _indexes(store_at_0013)[INDEX] == ["journal_id", "core_time", "turn_seq"]
    assert trigger_definitions(store_at_0013) == triggers
    assert {name for name, _, _ in triggers} == set(TRIGGERS_AT_0014)
    assert query(store_at_0013, "SELECT batch_id, tree_size, root_hash FROM tree_heads") == heads
    after = _without_revision(dump(store_at_0013))
    assert set(after) - set(_without_revision(rows)) == {
        f"CREATE INDEX {INDEX} ON turn_fields (journal_id, core_time, turn_seq);"}
    assert set(_without_revision(rows)) <= set(after)


def test_a_journal_s_turns_in_core_time_read_the_index(store_at_0013: Path) -> None:
    upgrade(url_of(store_at_0013), "head")  # 0014, 0015 and 0016's tables: a store opens at head
    db = AuditStore.open(str(store_at_0013), read_only=True)
    statements: list[tuple[str, object]] = []
    event.listen(db.engine, "before_cursor_execute",
                 lambda _c, _cur, sql, params, _ctx, _many: statements.append((sql, params)))
    try:
        (journal,) = db.execute(journals.list_journals).items
        where = queries.TurnFilter(journal=[RecordId(journal.journal_id)])
        first = db.execute(queries.list_turns, where, 2, order=queries.Order.TIME_ASC)
        rest = db.execute(queries.list_turns, where, 2, first.end_cursor,
                          order=queries.Order.TIME_ASC)
    finally:
        db.close()
    assert [t.turn_id for t in first.items] == [2, 1]
    assert [t.turn_id for t in rest.items] == [3]
    assert (first.has_next_page, rest.has_next_page) == (True, False)
    with closing(sqlite3.connect(store_at_0013)) as connection:
        plans = [" ".join(str(step[3]) for step in connection.execute(
                     f"EXPLAIN QUERY PLAN {sql}", params))
                 for sql, params in statements if "ORDER BY turn_fields.core_time" in sql]
    assert plans and all(f"USING INDEX {INDEX} (journal_id=? AND core_time" in plan
                         for plan in plans), plans


def test_downgrade_drops_the_index_and_leaves_revision_0013_s_store(store_at_0013: Path
                                                                      ) -> None:
    before = dump(store_at_0013)
    upgrade(url_of(store_at_0013), "0014")

    downgrade(url_of(store_at_0013), "0013")

    assert revision_of(url_of(store_at_0013)) == "0013"
    assert INDEX not in _indexes(store_at_0013)
    assert dump(store_at_0013) == before
    assert {name for name, _, _ in trigger_definitions(store_at_0013)} == set(TRIGGERS_AT_0014)
