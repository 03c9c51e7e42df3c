"""Turn facets and groups filtered by turn_fields alone (a journal, CORE time) read the turns
by seq from turn_fields' index (`turns.seq IN (SELECT turn_seq ...)`), not by an outer join
on turn_key: they count the same turns the list shows, on both backends, and a journal list
with a null keeps the outer join (a turn missing its fields row counts as of no journal).

The journal is examples/workbench_turn_journal.jsonl (batch 4 of `journal_db`): six turns,
turn_id 1 to 6; their grounding_source, in turn order, as the lines write it: teaching,
teaching, teaching, pack, none, teaching.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from sent_sql import only_journal, sent_statements, sqlite_plan

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import TurnFilter
from store.db.queries.groups import TURN_GROUPS
from store.db.queries.search import searched
from store.db.queries.turns import fields_semi_join

TURNS = queries.LISTINGS["turns"]


def listed(db: AuditStore, where: Any) -> list[Any]:
    page = db.execute(TURNS.list, where, 100)
    assert not page.has_next_page
    return list(page.items)


def filters(journal: str) -> list[Any]:
    early, late = (datetime(2000, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC))
    return [
        TurnFilter(journal=[journal]),
        TurnFilter(journal=[journal, None]),
        TurnFilter(journal=[None]),
        TurnFilter(journal=["0" * 64]),
        TurnFilter(journal=[journal], grounding_source=["teaching"]),  # type: ignore[list-item]
        TurnFilter(time_from=early, time_to=late),
        TurnFilter(journal=[journal], time_to=early),
        # A search within the journal: "exist" is in turns 1, 5 and 6's prompts.
        searched(TurnFilter(journal=[journal]), "exist", TURNS.table),
    ]


def test_the_journals_grounding_as_the_spec_example_writes_it(journal_db: AuditStore) -> None:
    where = TurnFilter(journal=[only_journal(journal_db)])
    facets = journal_db.execute(TURNS.facet_counts, where)
    assert facets.total == 6
    assert [(f.value, f.count) for f in facets.by_grounding_source] == [
        ("teaching", 4), ("none", 1), ("pack", 1)]
    groups = journal_db.execute(TURN_GROUPS.groups, ["GROUNDING_SOURCE"], where)
    assert (groups.total, [(g.values, g.count) for g in groups.groups]) == (
        6, [(("teaching",), 4), (("none",), 1), (("pack",), 1)])


def test_facets_and_groups_count_the_turns_the_list_shows(journal_db: AuditStore) -> None:
    cases = filters(only_journal(journal_db))
    assert [turn.turn_id for turn in listed(journal_db, cases[-1])] == [1, 5, 6]
    for where in cases:
        turns = listed(journal_db, where)
        facets = journal_db.execute(TURNS.facet_counts, where)
        assert facets.total == len(turns), where
        assert Counter({f.value: f.count for f in facets.by_grounding_source}) == Counter(
            str(t.grounding_source) for t in turns), where
        assert Counter({f.value: f.count for f in facets.by_trace_integrity}) == Counter(
            t.trace_integrity for t in turns), where
        for by, value_of in (("TRACE_INTEGRITY", lambda t: t.trace_integrity),
                             ("VERIFICATION", lambda t: t.surface.verification)):
            groups = journal_db.execute(TURN_GROUPS.groups, [by], where)
            assert groups.total == len(turns), (where, by)
            assert {g.values[0]: g.count for g in groups.groups} == dict(
                Counter(value_of(t) for t in turns)), (where, by)


def test_only_a_journal_list_without_a_null_reads_through_the_fields_index(
        journal_db: AuditStore) -> None:
    journal = only_journal(journal_db)
    for where, semi in ((TurnFilter(journal=[journal]), True),
                        (TurnFilter(journal=[journal, None]), False),
                        (TurnFilter(grounding_source=["teaching"]), False),  # type: ignore[list-item]
                        (None, False)):
        conditions = where.conditions() if where is not None else []
        assert (fields_semi_join(where, conditions) is not None) is semi, where


@pytest.mark.parametrize("read", ["facets", "groups"])
def test_a_journals_facets_look_no_turn_up_by_its_key(journal_db: AuditStore,
                                                      read: str) -> None:
    if journal_db.engine.dialect.name != "sqlite":
        return  # the plan is SQLite's EXPLAIN QUERY PLAN; the counts above hold on both
    where = TurnFilter(journal=[only_journal(journal_db)])
    with sent_statements(journal_db) as statements:
        if read == "facets":
            journal_db.execute(TURNS.facet_counts, where)
        else:
            journal_db.execute(TURN_GROUPS.groups, ["TRACE_INTEGRITY"], where)
    (sql, params), = [s for s in statements if "turn_fields" in s[0]]
    plan = sqlite_plan(journal_db, sql, params)
    # The turns by seq (ix_turns_seq), the journal's seqs from a covering index of
    # turn_fields; never turns' primary key (turn_key) searched once a turn.
    assert any("turns USING INDEX ix_turns_seq" in step for step in plan), plan
    assert not any("turn_key=?" in step for step in plan), plan
