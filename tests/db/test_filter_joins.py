"""A filter joins only the tables its conditions read: a turn filter whose fields are all null
(a Workbench document's unset variables: TurnsByGrounding with none given) counts and lists
the turns as no filter does, from turns alone, not through the surface and fields joins (100,000
turns: 212 -> ~5 ms for the count on SQLite). A field that reads another table joins it.

`journal_db`'s turns are the Workbench journal's six (examples/workbench_turn_journal.jsonl;
the other examples store sightings, not turns); the surfaces turns 1-3 emitted are verified,
4 and 5 not checked (pack, none), 6 of another form.
"""

from __future__ import annotations

from typing import Any

from sent_sql import only_journal, sent_statements

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import TurnFilter
from store.db.queries.search import searched
from store.model.surface_records import SurfaceVerification

TURNS = queries.LISTINGS["turns"]


def counted(db: AuditStore, where: Any) -> tuple[int, list[str]]:
    """The count of `where`'s turns and the statements sent for it."""
    with sent_statements(db) as statements:
        count = db.execute(TURNS.count, where)
    return count, [sql for sql, _ in statements]


def test_a_filter_of_nulls_counts_every_turn_from_turns_alone(journal_db: AuditStore) -> None:
    for where in (None, TurnFilter()):
        count, statements = counted(journal_db, where)
        assert count == 6, where
        (sql,) = [s for s in statements if "count" in s.lower()]
        assert "JOIN" not in sql.upper(), sql
    page = journal_db.execute(TURNS.list, TurnFilter(), 100)
    assert [turn.turn_id for turn in page.items] == [1, 2, 3, 4, 5, 6]


def test_a_field_on_another_table_joins_it(journal_db: AuditStore) -> None:
    journal = only_journal(journal_db)
    count, statements = counted(journal_db, TurnFilter(journal=[journal]))
    (sql,) = [s for s in statements if "count" in s.lower()]
    assert count == 6 and "turn_fields" in sql and "surface_records" not in sql, sql
    verified = TurnFilter(verification=[SurfaceVerification.VERIFIED])
    count, statements = counted(journal_db, verified)
    (sql,) = [s for s in statements if "count" in s.lower()]
    listed = journal_db.execute(TURNS.list, verified, 100).items
    assert "surface_records" in sql and "turn_fields" not in sql, sql
    assert count == 3 and [turn.turn_id for turn in listed] == [1, 2, 3]


def test_a_journals_turns_are_counted_from_turn_fields_alone(journal_db: AuditStore) -> None:
    # One fields row per turn, in the turn's batch: a journal's count reads turn_fields'
    # own index, not every turn by key. The same statement shape answers another journal's
    # values; as of tree head 66 (spec_values.HEADS[3], before the journal's batch 4) the
    # journal has no turn yet; a list with a null counts through turns, as listed.
    journal = only_journal(journal_db)
    for where, expected in ((TurnFilter(journal=[journal]), 6),
                            (TurnFilter(journal=["0" * 64]), 0),
                            (TurnFilter(journal=[journal, "0" * 64]), 6)):
        count, statements = counted(journal_db, where)
        (sql,) = [s for s in statements if "count" in s.lower()]
        assert count == expected and "turns" not in sql.replace("turn_fields", ""), sql
    assert journal_db.execute(TURNS.count, TurnFilter(journal=[journal]), 66) == 0
    assert journal_db.execute(TURNS.count, TurnFilter(journal=[journal]), 83) == 6
    count, statements = counted(journal_db, TurnFilter(journal=[journal, None]))
    (sql,) = [s for s in statements if "count" in s.lower()]
    assert count == 6 and "FROM turns" in sql, sql


def test_a_search_within_a_journal_is_counted_by_seq(journal_db: AuditStore) -> None:
    # "exist" is in turns 1, 5 and 6's prompts ("Why does light exist?", "Why does zorp
    # exist?", "Why does light exist, and why does it matter?"): counted from turns by seq,
    # the journal's seqs read from turn_fields' index, no join; with a kind beside it too.
    journal = only_journal(journal_db)
    for base in (TurnFilter(journal=[journal]),
                 TurnFilter(journal=[journal], verification=[SurfaceVerification.VERIFIED])):
        count, statements = counted(journal_db, searched(base, "exist", TURNS.table))
        (sql,) = [s for s in statements if "count" in s.lower()]
        assert "turn_fields" in sql and "JOIN turn_fields" not in sql.replace("\n", " "), sql
        assert count == (3 if base.verification is None else 1), sql
    count, _ = counted(journal_db, searched(TurnFilter(journal=[journal, None]), "exist",
                                            TURNS.table))
    assert count == 3
