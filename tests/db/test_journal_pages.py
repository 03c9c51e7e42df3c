"""A journal's turns in seq order (OLDEST_FIRST, NEWEST_FIRST: the Trace route's timeline in
journal order) are read through turn_fields' (journal_id, turn_seq) index, a page at a time,
not by sorting every turn of the journal: the same pages, cursors included, on both backends.

The journal is examples/workbench_turn_journal.jsonl (batch 4 of `journal_db`): six turns,
turn_id 1 to 6 in the order of its lines.
"""

from __future__ import annotations

import pytest
from sent_sql import only_journal, sent_statements, sqlite_plan

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import Order, TurnFilter
from store.db.queries import journals as journal_queries
from store.db.queries.search import searched
from store.model.turns import TurnKind

TURNS = queries.LISTINGS["turns"]


def walk(db: AuditStore, where: TurnFilter, order: Order, size: int,
         backwards: bool = False) -> list[list[int | None]]:
    """Every page of `where` in `order`, `size` turns a page, by each page's far cursor."""
    pages: list[list[int | None]] = []
    cursor = None
    while True:
        if backwards:
            page = db.execute(TURNS.list, where, last=size, before=cursor, order=order)
        else:
            page = db.execute(TURNS.list, where, size, cursor, order=order)
        pages.append([turn.turn_id for turn in page.items])
        more = page.has_previous_page if backwards else page.has_next_page
        if not more:
            return pages
        cursor = page.cursors[0] if backwards else page.cursors[-1]


def test_a_journals_turns_page_by_page_in_journal_order(journal_db: AuditStore) -> None:
    where = TurnFilter(journal=[only_journal(journal_db)])
    assert walk(journal_db, where, Order.OLDEST_FIRST, 4) == [[1, 2, 3, 4], [5, 6]]
    assert walk(journal_db, where, Order.NEWEST_FIRST, 4) == [[6, 5, 4, 3], [2, 1]]
    assert walk(journal_db, where, Order.OLDEST_FIRST, 4, backwards=True) == [
        [3, 4, 5, 6], [1, 2]]
    assert walk(journal_db, where, Order.OLDEST_FIRST, 6) == [[1, 2, 3, 4, 5, 6]]
    # With the Workbench's kind filter beside it (TraceTimeline), and with an unknown journal.
    with_kind = TurnFilter(journal=[only_journal(journal_db)],
                           kind=[TurnKind.WORKBENCH_JOURNAL])
    assert walk(journal_db, with_kind, Order.OLDEST_FIRST, 5) == [[1, 2, 3, 4, 5], [6]]
    assert walk(journal_db, TurnFilter(journal=["0" * 64]), Order.OLDEST_FIRST, 5) == [[]]


def test_a_search_within_a_journal_pages_in_journal_order(journal_db: AuditStore) -> None:
    # The journal's prompts (turn_id: prompt): 1 "Why does light exist?", 2 "Why does
    # knowledge require evidence?", 3 "Does memory require recall?", 4 "What is
    # knowledge?", 5 "Why does zorp exist?", 6 "Why does light exist, and why does it
    # matter?". "exist" is in 1, 5 and 6.
    base = TurnFilter(journal=[only_journal(journal_db)])
    where = searched(base, "exist", TURNS.table)
    assert walk(journal_db, where, Order.OLDEST_FIRST, 2) == [[1, 5], [6]]
    assert walk(journal_db, where, Order.NEWEST_FIRST, 2) == [[6, 5], [1]]
    assert walk(journal_db, where, Order.NEWEST_FIRST, 2, backwards=True) == [[5, 1], [6]]


def test_a_journal_list_with_a_null_reads_the_turns_own_order(journal_db: AuditStore) -> None:
    # A null selects turns outside any journal too (the example store's runtime outputs and
    # turn events): they have no journal's turn_seq to walk, and are read by their own seq.
    everything = [turn.turn_id for turn in journal_db.execute(TURNS.list, None, 100).items]
    where = TurnFilter(journal=[only_journal(journal_db), None])
    (listed,) = walk(journal_db, where, Order.OLDEST_FIRST, 100)
    assert listed == everything
    assert listed[-6:] == [1, 2, 3, 4, 5, 6]  # the journal is the last batch


@pytest.mark.parametrize("search", [None, "exist"])
def test_a_journal_page_walks_the_index_and_sorts_nothing(journal_db: AuditStore,
                                                          search: str | None) -> None:
    if journal_db.engine.dialect.name != "sqlite":
        return  # the plan is SQLite's EXPLAIN QUERY PLAN; the pages above hold on both
    where = searched(TurnFilter(journal=[only_journal(journal_db)]), search, TURNS.table)
    with sent_statements(journal_db) as statements:
        journal_db.execute(TURNS.list, where, 2, order=Order.NEWEST_FIRST)
    (cut,) = [(sql, params) for sql, params in statements if "page_sort_0" in sql]
    plan = sqlite_plan(journal_db, *cut)
    if search is None:
        assert any("ix_turn_fields_journal_id_turn_seq" in step for step in plan), plan
    else:
        # A search reads the turns by seq, from the sorted seqs of its matches and of the
        # journal's turns (turns.seq IN (...) twice), not by a walk of the journal's index
        # checking every turn: a rare word within a long journal found no sooner than its
        # end (55-95 -> 11-13 ms at 25,000 turns).
        assert any("turns USING INDEX ix_turns_seq (seq=?)" in step for step in plan), plan
        assert not any("turn_fields USING INDEX ix_turn_fields_journal_id_turn_seq "
                       "(journal_id=?)" in step for step in plan), plan
    assert not any("TEMP B-TREE" in step for step in plan), plan


def test_the_journal_list_walks_the_turns_numbered_1(journal_db: AuditStore) -> None:
    # The Runs route: journals in the order their turn 1 was stored. Read from turns'
    # (turn_id, seq) index, the turns numbered 1, not by a scan of every turn (4 journals of
    # 100,000 turns: 318 -> 0.3 ms); the journal and its count as the example writes them.
    journal = only_journal(journal_db)
    page = journal_db.execute(journal_queries.list_journals)
    assert [j.journal_id for j in page.items] == [journal]
    assert journal_db.execute(journal_queries.count_journals) == 1
    if journal_db.engine.dialect.name != "sqlite":
        return
    with sent_statements(journal_db) as statements:
        journal_db.execute(journal_queries.list_journals)
        journal_db.execute(journal_queries.count_journals)
    read = [(sql, params) for sql, params in statements if "turn_fields" in sql]
    assert len(read) == 2, statements
    for sql, params in read:
        plan = sqlite_plan(journal_db, sql, params)
        assert any("ix_turns_turn_id_seq (turn_id=?" in step for step in plan), plan
        assert not any(step.startswith("SCAN turns") for step in plan), plan
