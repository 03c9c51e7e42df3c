"""sighting_counts (revision 0010): per batch, each record it sighted with the record's count by
the end of that batch; MOST_SEEN pages read it, by its index or by a filter's own.

The `journal_db` store (tests/conftest.py), on both backends: batch 1 the ADR-0225 frames,
batch 2 the family frames (delta_quantity_unbound sighted again), batch 3 the surfaces file,
batch 4 the Workbench journal (light and memory sighted again, four new surfaces).
"""

from __future__ import annotations

from typing import Any

import pytest
from backends import EXAMPLE_FILES
from sqlalchemy import text

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import Order, ResidualFilter, SurfaceFilter, sightings
from store.db.write import sighting_counts
from store.model.surface_records import GroundingSource
from store.model.taxonomy import ResidualKind

MOST_SEEN = Order.MOST_SEEN
JOURNAL = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"  # batch 4 of journal_db

# (batch, the record's code or subject, its sightings by the end of that batch), in batch
# then append order: only the records a batch sighted have a row for it.
ROWS = [
    (1, "action_cue_unbound", 1), (1, "direction_unbound", 1), (1, "changed_object_unbound", 1),
    (1, "delta_quantity_unbound", 1), (1, "passive_voice_unsupported", 1),
    (1, "unit_object_conflict", 1),
    (2, "delta_quantity_unbound", 2), (2, "entity_unbound", 1), (2, "base_quantity_unbound", 1),
    (2, "state_entity_unbound", 1), (2, "original_whole_unbound", 1),
    (2, "inverse_topology_unlicensed", 1), (2, "unbound_base_quantity", 1),
    (3, "light", 2), (3, "knowledge", 2), (3, "memory", 1), (3, "correction", 2),
    (3, "knowledge", 2), (3, "memory", 1), (3, "knowledge", 1), (3, "justice", 1),
    (3, "memory", 1), (3, "glimmerwort", 1), (3, "knowledge", 1), (3, "light", 1),
    (4, "light", 3), (4, "memory", 2), (4, "knowledge", 1), (4, None, 1), (4, None, 1),
    (4, None, 1),
]
# A row names its record by the record's seq (its leaf; revision 0019), in the table it says.
_READ_ROWS = """
SELECT c.batch_id, coalesce(r.residual_code, s.subject), c.sightings,
       coalesce(r.seq, s.seq) IS NOT NULL,
       c.record_table = CASE WHEN r.seq IS NULL THEN 'surface_records'
                             ELSE 'contract_residuals' END
FROM sighting_counts c
LEFT JOIN contract_residuals r ON r.seq = c.record_seq
LEFT JOIN surface_records s ON s.seq = c.record_seq
ORDER BY c.batch_id, c.record_seq
"""


def test_each_batch_keeps_the_running_count_of_every_record_it_sighted(
        journal_db: AuditStore) -> None:
    rows = journal_db.execute(lambda c: c.execute(text(_READ_ROWS)).all())
    assert [tuple(row[:3]) for row in rows] == ROWS
    assert all(row[3] and row[4] for row in rows)


# The writer counts a large batch by walking each sightings index whole, a small one from its
# own sightings: forced each way, every batch, the same rows.
@pytest.mark.parametrize("share", [0, 10**9], ids=["own-sightings", "whole-index"])
def test_both_ways_of_counting_give_the_same_rows(
        backend_url: str, share: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sighting_counts, "WHOLE_INDEX_SHARE", share)
    with AuditStore.open(backend_url) as store:
        for path in (*EXAMPLE_FILES, JOURNAL):
            store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
        rows = store.execute(lambda c: c.execute(text(_READ_ROWS)).all())
    assert [tuple(row[:3]) for row in rows] == ROWS
    assert all(row[3] and row[4] for row in rows)


# Missing-role residuals most seen first: delta_quantity_unbound twice, the rest in append
# order (spec_values.CODES_IN_APPEND_ORDER).
MISSING_ROLE_MOST_SEEN = [
    "delta_quantity_unbound", "action_cue_unbound", "direction_unbound",
    "changed_object_unbound", "entity_unbound", "base_quantity_unbound",
    "state_entity_unbound", "original_whole_unbound"]


def _codes(page: queries.Page[Any]) -> list[tuple[str, int]]:
    return [(r.residual.residual_code, r.occurrence_count) for r in page.items]


def _every_page(db: AuditStore, query: Any, where: Any, size: int, backwards: bool,
                as_of: int | None = None) -> list[queries.Page[Any]]:
    pages: list[queries.Page[Any]] = []
    cursor = None
    while True:
        if backwards:
            page = db.execute(query, where, last=size, before=cursor, order=MOST_SEEN,
                              as_of=as_of)
        else:
            page = db.execute(query, where, size, cursor, order=MOST_SEEN, as_of=as_of)
        pages.append(page)
        if not (page.has_previous_page if backwards else page.has_next_page):
            return pages[::-1] if backwards else pages
        cursor = page.start_cursor if backwards else page.end_cursor


def _read_both_ways(db: AuditStore, query: Any, where: Any, as_of: int | None = None
                    ) -> list[tuple[list[Any], list[str], bool, bool]]:
    """Every page of 3, forwards and backwards: items, cursors and both page flags."""
    return [(page.items, page.cursors, page.has_previous_page, page.has_next_page)
            for backwards in (False, True)
            for page in _every_page(db, query, where, 3, backwards, as_of)]


@pytest.mark.parametrize("few_rows", [0, 10**9], ids=["index walk", "filter's own index"])
def test_a_filtered_most_seen_list_is_the_same_whichever_index_reads_it(
        journal_db: AuditStore, monkeypatch: pytest.MonkeyPatch, few_rows: int) -> None:
    missing_role = ResidualFilter(kind=[ResidualKind.MISSING_ROLE])
    unfiltered = journal_db.execute(queries.list_residuals, missing_role, 500,
                                    order=MOST_SEEN)  # the default threshold
    monkeypatch.setattr(sightings, "FEW_ROWS", few_rows)
    page = journal_db.execute(queries.list_residuals, missing_role, 500, order=MOST_SEEN)
    assert _codes(page) == [("delta_quantity_unbound", 2),
                            *((code, 1) for code in MISSING_ROLE_MOST_SEEN[1:])]
    assert (page.items, page.cursors) == (unfiltered.items, unfiltered.cursors)


def test_filtered_pages_by_cursor_agree_between_the_two_indexes(
        journal_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:
    teaching = SurfaceFilter(grounding_source=[GroundingSource.TEACHING])
    missing_role = ResidualFilter(kind=[ResidualKind.MISSING_ROLE])
    cases = [(queries.list_residuals, missing_role, None), (queries.list_surfaces, teaching, None),
             (queries.list_surfaces, teaching, 66)]  # as of batch 3's head
    read: dict[int, list[Any]] = {}
    for few_rows in (0, 10**9):
        monkeypatch.setattr(sightings, "FEW_ROWS", few_rows)
        read[few_rows] = [_read_both_ways(journal_db, *case) for case in cases]
    assert read[0] == read[10**9]
    forwards = [item for items, *_ in read[0][0][:3] for item in items]
    assert [r.residual.residual_code for r in forwards] == MISSING_ROLE_MOST_SEEN


def test_as_of_a_head_a_record_counts_its_sightings_up_to_that_batch(
        journal_db: AuditStore) -> None:
    def light(as_of: int | None) -> list[int]:
        page = journal_db.execute(queries.list_surfaces, SurfaceFilter(subject=["light"]), 5,
                                  order=MOST_SEEN, as_of=as_of)
        return [s.occurrence_count for s in page.items]

    assert light(None) == [3, 1]  # the journal (batch 4) sighted the first once more
    assert light(66) == [2, 1]
    assert light(37) == []  # before the surfaces file


# Every list reads a record's count from its newest sighting_counts row: in each order, as of
# each head, that is the number of its sightings stored by then, counted here row by row.
_SIGHTINGS_BY = {
    "residuals": "SELECT count(*) FROM residual_occurrences"
                 " WHERE residual_id = :id AND seq <= :size",
    "surfaces": "SELECT count(*) FROM surface_occurrences WHERE surface_id = :id AND seq <= :size",
}


# Every order either list takes but RANK (a search's: it needs one); each list in those it takes.
@pytest.mark.parametrize("order", [o for o in Order if o is not Order.RANK and (
    o in queries.LISTINGS["residuals"].orders or o in queries.LISTINGS["surfaces"].orders)],
    ids=lambda o: o.name)
def test_every_listed_count_is_the_sightings_stored_by_its_head(
        journal_db: AuditStore, order: Order) -> None:
    sizes = journal_db.execute(
        lambda c: [s for (s,) in c.execute(text("SELECT tree_size FROM tree_heads"))])
    seen: set[int] = set()
    for size in [*sizes, None]:
        for kind, listed in (("residuals", queries.list_residuals),
                             ("surfaces", queries.list_surfaces)):
            if order not in queries.LISTINGS[kind].orders:
                continue
            page = journal_db.execute(listed, None, 100, order=order, as_of=size)
            for record in page.items:
                key = (record.residual.residual_id if kind == "residuals"
                       else record.surface_id)
                counted = journal_db.execute(lambda c, key=key, kind=kind, size=size: c.execute(
                    text(_SIGHTINGS_BY[kind]), {"id": key, "size": size or 2**62}).scalar_one())
                assert record.occurrence_count == counted, (kind, key, size)
                seen.add(counted)
    # ROWS: light (a surface) is sighted three times by batch 4; a residual at most twice.
    surfaces_listed = order in queries.LISTINGS["surfaces"].orders
    assert seen == ({1, 2, 3} if surfaces_listed else {1, 2})


# The MOST_SEEN walk reads each count's record by its seq (revision 0019). SQLite's planner
# had read a range of the filter's (kind, seq) index instead, bounded by the asOf head or, by
# transitivity, the cursor's seq, for every count the walk passed (7 ms -> 4 s at 1M).
@pytest.mark.parametrize("as_of", [None, 37], ids=["now", "as of batch 2"])
def test_the_most_seen_walk_finds_each_record_by_one_lookup_of_its_seq(
        journal_db: AuditStore, monkeypatch: pytest.MonkeyPatch, as_of: int | None) -> None:
    if journal_db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's query plan")
    from sent_sql import sent_statements, sqlite_plan

    monkeypatch.setattr(sightings, "FEW_ROWS", 0)  # the walk, whatever the filter
    missing_role = ResidualFilter(kind=[ResidualKind.MISSING_ROLE])
    first = journal_db.execute(queries.list_residuals, missing_role, 3, order=MOST_SEEN,
                               as_of=as_of)
    with sent_statements(journal_db) as statements:
        page = journal_db.execute(queries.list_residuals, missing_role, 3, first.end_cursor,
                                  order=MOST_SEEN, as_of=as_of)
    assert _codes(page) == [(code, 1) for code in MISSING_ROLE_MOST_SEEN[3:6]]
    walks = [sql for sql, _ in statements if "JOIN sighting_counts" in sql]
    assert walks, statements
    steps = [step for sql, params in statements if "JOIN sighting_counts" in sql
             for step in sqlite_plan(journal_db, sql, params)
             if step.startswith("SEARCH contract_residuals")]
    assert steps and all(step.endswith("seq=?)") for step in steps), steps
