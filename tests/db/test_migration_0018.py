"""Revision 0018 on a store revision 0017 wrote: `ix_turns_facets`, the index the turn facets
read instead of every turn's row. Every row, leaf, tree head and trigger stays as it was;
downgrade drops it and leaves the file exactly as revision 0017 had it. Values written out."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from raw_reads import dump, indexes, query, trigger_definitions
from sqlalchemy import event
from store_support import HEAD_TRIGGERS, revision_of, store_at, three_turn_journal, url_of

from store.db.audit_store import AuditStore
from store.db.queries.listing_declarations import TURNS
from store.db.schema.schema_version import downgrade, upgrade

INDEX = ("ix_turns_facets", ("turns", ["grounding_source", "epistemic_state",
                                       "normative_clearance", "kind", "trace_integrity",
                                       "surface_id", "seq"]))


@pytest.fixture
def store_at_0017(db_path: Path) -> Path:
    """A store made by revision 0017 (the previous head): a three-turn journal."""
    store_at(url_of(db_path), "0017", [three_turn_journal()])
    return db_path


def test_upgrade_adds_the_index_and_keeps_every_row_and_trigger(store_at_0017: Path) -> None:
    before, rows = indexes(store_at_0017), dump(store_at_0017)
    triggers = trigger_definitions(store_at_0017)
    heads = query(store_at_0017, "SELECT batch_id, tree_size, root_hash FROM tree_heads")

    upgrade(url_of(store_at_0017), "0018")

    assert revision_of(url_of(store_at_0017)) == "0018"
    assert indexes(store_at_0017) == {**before, INDEX[0]: INDEX[1]}
    assert trigger_definitions(store_at_0017) == triggers
    assert {name for name, _, _ in triggers} == set(HEAD_TRIGGERS)
    assert query(store_at_0017, "SELECT batch_id, tree_size, root_hash FROM tree_heads") == heads
    created = ("CREATE INDEX ix_turns_facets ON turns (grounding_source, epistemic_state, "
               "normative_clearance, kind, trace_integrity, surface_id, seq);")
    after = dump(store_at_0017)
    assert created in after
    assert [line for line in after if "alembic_version" not in line and line != created] == [
        line for line in rows if "alembic_version" not in line]


def test_the_turn_facets_read_the_index_not_the_turns(store_at_0017: Path) -> None:
    upgrade(url_of(store_at_0017), "head")
    db = AuditStore.open(str(store_at_0017), read_only=True)
    statements: list[tuple[str, object]] = []
    event.listen(db.engine, "before_cursor_execute",
                 lambda _c, _cur, sql, params, _ctx, _many: statements.append((sql, params)))
    try:
        with db.engine.connect() as connection:
            facets = TURNS.facet_counts(connection)
    finally:
        db.close()
    assert facets.total == 3
    assert [(f.value, f.count) for f in facets.by_grounding_source] == [("none", 3)]
    assert [(f.value, f.count) for f in facets.by_epistemic_state] == [("decoded", 3)]
    with closing(sqlite3.connect(store_at_0017)) as connection:
        plans = [str(step[3]) for sql, params in statements
                 for step in connection.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
    reads = [step for step in plans if step.split(" ")[:2] == ["SCAN", "turns"]]
    assert reads == ["SCAN turns USING COVERING INDEX ix_turns_facets"], plans


def test_downgrade_drops_the_index_and_leaves_revision_0017_s_store(store_at_0017: Path
                                                                    ) -> None:
    before = dump(store_at_0017)
    upgrade(url_of(store_at_0017), "0018")

    downgrade(url_of(store_at_0017), "0017")

    assert revision_of(url_of(store_at_0017)) == "0017"
    assert dump(store_at_0017) == before
    assert "ix_turns_facets" not in indexes(store_at_0017)
