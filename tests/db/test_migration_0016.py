"""Revision 0016 on a store revision 0015 wrote: `turn_tallies`, backfilled from the stored
turns and their CORE times (the rows the writer writes from now on), under the append-only
guards; every other row, leaf, tree head and trigger stays as it was; downgrade drops the
table and leaves the file's contents exactly as revision 0015 had them. Values written out."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from raw_reads import dump, query, trigger_definitions
from store_support import HEAD_TRIGGERS, revision_of, store_at, url_of
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.db.audit_store import AuditStore
from store.db.queries.groups import turn_groups
from store.db.schema.schema_version import downgrade, upgrade

# Turn 2 is at 15:00 UTC (20:00+05:00), turns 1 and 3 in the hour of 18:00 UTC.
TIMESTAMPS = {1: "2026-07-30T18:00:00.000000+00:00", 2: "2026-07-30T20:00:00.000000+05:00",
              3: "2026-07-30T18:30:00.000000+00:00"}
# CORE's hours (since 0000-12-31T00:00Z) of 2026-07-30T15:00Z and T18:00Z.
HOUR_15, HOUR_18 = 17755863, 17755866
# batch, ordinal, kind, grounding source, epistemic state, clearance, trace integrity, CORE
# hour, turns: journal_entry's decoded/violated/pipeline_trace turns; the chat outputs have
# no time and no trace (a null first in each column's order).
EXPECTED = [
    (1, 1, "workbench_journal", "none", "decoded", "violated", "pipeline_trace", HOUR_15, 1),
    (1, 2, "workbench_journal", "none", "decoded", "violated", "pipeline_trace", HOUR_18, 2),
    (2, 1, "chat_runtime", "none", None, "cleared", None, None, 1),
    (2, 2, "chat_runtime", "none", "decoded", "cleared", None, None, 1),
]
ROWS = "SELECT * FROM turn_tallies ORDER BY batch_id, ordinal"


def _inputs() -> list[list[bytes]]:
    journal = [journal_line(journal_entry(turn_id, f"prompt {turn_id}", DISCLOSURE, "none",
                                          timestamp=TIMESTAMPS[turn_id])).encode() + b"\n"
               for turn_id in (1, 2, 3)]
    chat = [json.dumps({"prompt": "chat 1", "surface": DISCLOSURE, "grounding_source": "none",
                        "epistemic_state": "decoded", "normative_clearance": "cleared"}),
            json.dumps({"prompt": "chat 2", "surface": DISCLOSURE, "grounding_source": "none",
                        "normative_clearance": "cleared"})]
    return [journal, [line.encode() + b"\n" for line in chat]]


@pytest.fixture
def store_at_0015(db_path: Path) -> Path:
    """A store made by revision 0015 (the previous head): a journal, then chat turns."""
    store_at(url_of(db_path), "0015",
             [(f"input-{number}.jsonl", lines) for number, lines in enumerate(_inputs())])
    return db_path


def _without(lines: list[str], *names: str) -> list[str]:
    return [line for line in lines if not any(name in line for name in names)]


def test_upgrade_backfills_the_tallies_and_keeps_every_row_and_trigger(store_at_0015: Path
                                                                        ) -> None:
    assert revision_of(url_of(store_at_0015)) == "0015"
    before = dump(store_at_0015)
    assert not any("turn_tallies" in line for line in before)

    upgrade(url_of(store_at_0015), "0016")

    assert revision_of(url_of(store_at_0015)) == "0016"
    assert query(store_at_0015, ROWS) == EXPECTED
    assert {name for name, _, _ in trigger_definitions(store_at_0015)} == set(HEAD_TRIGGERS)
    assert {f"turn_tallies_append_only_{op}" for op in ("update", "delete", "insert")} <= {
        name for name, _, _ in trigger_definitions(store_at_0015)}
    after = dump(store_at_0015)
    assert _without(after, "alembic_version", "turn_tallies") == _without(
        before, "alembic_version")


def test_the_backfill_is_what_the_writer_writes(store_at_0015: Path, tmp_path: Path) -> None:
    upgrade(url_of(store_at_0015), "0016")
    written = tmp_path / "written.db"
    with AuditStore.open(str(written)) as store:
        for number, lines in enumerate(_inputs()):
            store.ingest(lines, source=f"input-{number}.jsonl")
    assert query(written, ROWS) == query(store_at_0015, ROWS) == EXPECTED


def test_after_the_upgrade_groups_sum_the_tallies_and_verify_finds_nothing(
        store_at_0015: Path) -> None:
    upgrade(url_of(store_at_0015), "head")  # 0016, then on: a store opens at head
    with AuditStore.open(str(store_at_0015)) as store:
        assert store.verify().problems == []
    db = AuditStore.open(str(store_at_0015), read_only=True)
    try:
        found = db.execute(turn_groups, ["CORE_HOUR"])
    finally:
        db.close()
    assert [(g.values, g.count) for g in found.groups] == [
        (("2026-07-30T18",), 2), ((None,), 2), (("2026-07-30T15",), 1)]


def test_downgrade_drops_the_table_and_leaves_revision_0015_s_store(store_at_0015: Path
                                                                     ) -> None:
    before = dump(store_at_0015)
    upgrade(url_of(store_at_0015), "0016")

    downgrade(url_of(store_at_0015), "0015")

    assert revision_of(url_of(store_at_0015)) == "0015"
    assert dump(store_at_0015) == before
    assert not any(name.startswith("turn_tallies") for name, _, _ in
                   trigger_definitions(store_at_0015))


def test_verify_names_a_tally_row_added_out_of_band(store_at_0015: Path) -> None:
    upgrade(url_of(store_at_0015), "head")  # 0016, then on: a store opens at head
    connection = sqlite3.connect(store_at_0015)
    with connection:  # append-only lets a new key in: verify must find it
        connection.execute("INSERT INTO turn_tallies VALUES (2, 3, 'chat_runtime', 'none', "
                           "'decoded', 'violated', NULL, NULL, 1000)")
    connection.close()
    with AuditStore.open(str(store_at_0015)) as store:
        problems = store.verify().problems
    assert [(p.table, p.key, p.reason) for p in problems] == [
        ("turn_tallies", "batch 2",
         "3 tally rows do not match the 2 the batch's turns add up to")]
