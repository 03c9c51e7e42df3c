"""Revision 0017 on a store revision 0016 wrote: the indexes issue 33's column orders read a
page along, (column, seq); on PostgreSQL the texts' built COLLATE "C" (byte order), and byte
order indexes beside the earlier text orders' own. Every row, leaf, tree head and trigger
stays as it was; downgrade drops them and leaves the file exactly as revision 0016 had it.
Values written out."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from backends import raw_query
from raw_reads import dump, indexes, query, trigger_definitions
from sqlalchemy import event
from store_support import HEAD_TRIGGERS, revision_of, store_at, three_turn_journal, url_of

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.schema.schema_version import downgrade, upgrade

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "adr_0225_frames.jsonl"
NEW_INDEXES = {
    "ix_contract_assessments_candidate_organ_seq": ("contract_assessments",
                                                    ["candidate_organ", "seq"]),
    "ix_contract_assessments_runnable_seq": ("contract_assessments", ["runnable", "seq"]),
    "ix_contract_assessments_problem_text_seq": ("contract_assessments",
                                                 ["problem_text", "seq"]),
    "ix_surface_records_surface_seq": ("surface_records", ["surface", "seq"]),
    "ix_turns_prompt_seq": ("turns", ["prompt", "seq"]),
}


def _at_0016(url: str) -> None:
    """A store made by revision 0016 (the previous head): the example frames (ten
    assessments) and a three-turn journal."""
    store_at(url, "0016", [(EXAMPLES.name, EXAMPLES.read_bytes().splitlines(keepends=True)),
                           three_turn_journal()])


@pytest.fixture
def store_at_0016(db_path: Path) -> Path:
    _at_0016(url_of(db_path))
    return db_path


def _without_revision(lines: list[str]) -> list[str]:
    return [line for line in lines if "alembic_version" not in line]


def test_upgrade_adds_the_indexes_and_keeps_every_row_and_trigger(store_at_0016: Path) -> None:
    before = indexes(store_at_0016)
    assert not set(NEW_INDEXES) & set(before)
    rows, triggers = dump(store_at_0016), trigger_definitions(store_at_0016)
    heads = query(store_at_0016, "SELECT batch_id, tree_size, root_hash FROM tree_heads")

    upgrade(url_of(store_at_0016), "0017")

    assert revision_of(url_of(store_at_0016)) == "0017"
    assert indexes(store_at_0016) == {**before, **NEW_INDEXES}
    assert trigger_definitions(store_at_0016) == triggers
    assert {name for name, _, _ in triggers} == set(HEAD_TRIGGERS)
    assert query(store_at_0016, "SELECT batch_id, tree_size, root_hash FROM tree_heads") == heads
    assert set(_without_revision(rows)) <= set(_without_revision(dump(store_at_0016)))


def test_a_page_by_problem_text_reads_its_index(store_at_0016: Path) -> None:
    upgrade(url_of(store_at_0016), "head")  # 0017, then on: a store opens at head
    db = AuditStore.open(str(store_at_0016), read_only=True)
    statements: list[tuple[str, object]] = []
    event.listen(db.engine, "before_cursor_execute",
                 lambda _c, _cur, sql, params, _ctx, _many: statements.append((sql, params)))
    try:
        first = db.execute(queries.list_assessments, None, 2,
                           order=queries.Order.PROBLEM_TEXT_ASC)
        db.execute(queries.list_assessments, None, 2, first.end_cursor,
                   order=queries.Order.PROBLEM_TEXT_ASC)
    finally:
        db.close()
    # The example frames' problem texts, in byte order: "3 apples were gained by Tom." first.
    assert [a.problem_text for a in first.items] == ["3 apples were gained by Tom.",
                                                     "Tom gained 3 apples."]
    with closing(sqlite3.connect(store_at_0016)) as connection:
        plans = [[str(step[3]) for step in connection.execute(f"EXPLAIN QUERY PLAN {sql}",
                                                               params)]
                 for sql, params in statements
                 if "ORDER BY contract_assessments.problem_text" in sql]
    # Every read of the table is along the index (the page after a cursor merges its arms'
    # few rows in a temporary b-tree; never the table's).
    reads = [step for plan in plans for step in plan if "contract_assessments" in step]
    assert len(plans) == 2 and reads and all(
        "USING INDEX ix_contract_assessments_problem_text_seq" in step for step in reads), plans


def test_downgrade_drops_the_indexes_and_leaves_revision_0016_s_store(store_at_0016: Path
                                                                      ) -> None:
    before = dump(store_at_0016)
    upgrade(url_of(store_at_0016), "0017")

    downgrade(url_of(store_at_0016), "0016")

    assert revision_of(url_of(store_at_0016)) == "0016"
    assert dump(store_at_0016) == before
    assert {name for name, _, _ in trigger_definitions(store_at_0016)} == set(HEAD_TRIGGERS)


def _pg_indexes(url: str) -> dict[str, str]:
    return {str(name): str(definition).partition(" USING btree ")[2] for name, definition in
            raw_query(url, "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = "
                           "current_schema() AND left(indexname, 3) = 'ix_'")}


def test_postgresql_builds_the_text_indexes_in_byte_order(pg_url: str) -> None:
    _at_0016(pg_url)
    before = _pg_indexes(pg_url)

    upgrade(pg_url, "0017")

    added = {name: definition for name, definition in _pg_indexes(pg_url).items()
             if name not in before}
    assert added == {
        "ix_contract_assessments_candidate_organ_seq": '(candidate_organ COLLATE "C", seq)',
        "ix_contract_assessments_runnable_seq": "(runnable, seq)",
        "ix_contract_assessments_problem_text_seq": '(problem_text COLLATE "C", seq)',
        "ix_surface_records_surface_seq": '(surface COLLATE "C", seq)',
        "ix_turns_prompt_seq": '(prompt COLLATE "C", seq)',
        "ix_contract_residuals_residual_kind_byte_order": '(residual_kind COLLATE "C", seq)',
        "ix_contract_residuals_source_axis_byte_order": '(source_axis COLLATE "C", seq)',
        "ix_contract_residuals_candidate_organ_byte_order":
            '(candidate_organ COLLATE "C", seq)',
        "ix_contract_residuals_residual_code_byte_order": '(residual_code COLLATE "C", seq)',
        "ix_surface_records_grounding_source_byte_order":
            '(grounding_source COLLATE "C", seq)',
        "ix_surface_records_verification_byte_order": '(verification COLLATE "C", seq)',
        "ix_surface_records_corpus_id_byte_order": '(corpus_id COLLATE "C", seq)',
        "ix_turns_grounding_source_byte_order": '(grounding_source COLLATE "C", seq)',
        "ix_turns_epistemic_state_byte_order": '(epistemic_state COLLATE "C", seq)',
        "ix_turns_normative_clearance_byte_order": '(normative_clearance COLLATE "C", seq)',
    }
    downgrade(pg_url, "0016")
    assert _pg_indexes(pg_url) == before
