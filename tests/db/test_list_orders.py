"""The query layer's orders and keyset pages: every list in every order it allows, paged
forwards (first/after) and backwards (last/before), on both backends.

The `journal_db` store (tests/conftest.py): the example frames, surfaces and the Workbench journal.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_values import CODES_IN_APPEND_ORDER, CODES_MOST_SEEN, DELTA_QUANTITY_ID

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import Order, ResidualFilter
from store.db.queries.orders import TIME_ORDERS

OLDEST, NEWEST, MOST_SEEN = Order.OLDEST_FIRST, Order.NEWEST_FIRST, Order.MOST_SEEN

# Each list, with the arguments before first/after.
LISTS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "residuals": (queries.list_residuals, (None,)),
    "surfaces": (queries.list_surfaces, (None,)),
    "turns": (queries.list_turns, (None,)),
    "assessments": (queries.list_assessments, (None,)),
    "batches": (queries.list_batches, ()),
    "occurrences": (queries.list_occurrences, (DELTA_QUANTITY_ID,)),
    "surface occurrences": (queries.list_surface_occurrences, ("",)),  # filled in below
}
SIGHTED = ("residuals", "surfaces")  # the lists MOST_SEEN applies to
_LISTINGS = {name: queries.LISTINGS[name].orders
             for name in ("residuals", "surfaces", "turns", "assessments", "batches")}

# Its surfaces (subject, sightings) in append order: the example file's twelve, then the
# journal's four new ones; the journal sees light (3 in all) and memory/verification again,
# which puts the counts in append order. Before the journal (tree size 66) it was not so.
SURFACES_NOW = [("light", 3), ("knowledge", 2), ("memory", 2), ("correction", 2),
                ("knowledge", 2), ("memory", 1), ("knowledge", 1), ("justice", 1),
                ("memory", 1), ("glimmerwort", 1), ("knowledge", 1), ("light", 1),
                ("knowledge", 1), (None, 1), (None, 1), (None, 1)]
SURFACES_MOST_SEEN_AT_66 = [("light", 2), ("knowledge", 2), ("correction", 2), ("knowledge", 2),
                            ("memory", 1), ("memory", 1), ("knowledge", 1), ("justice", 1),
                            ("memory", 1), ("glimmerwort", 1), ("knowledge", 1), ("light", 1)]


def listing(db: AuditStore, name: str) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    query, args = LISTS[name]
    if name == "surface occurrences":  # the light surface's three sightings
        light = db.execute(queries.list_surfaces, None, 1).items[0]
        args = (light.surface_id,)
    return query, args


def seqs(page: queries.Page[Any]) -> list[int]:
    return [item.seq for item in page.items]


def everything(db: AuditStore, name: str, order: Order) -> list[int]:
    query, args = listing(db, name)
    return seqs(db.execute(query, *args, 500, order=order))


def test_residuals_in_each_order(journal_db: AuditStore) -> None:
    def codes(order: Order) -> list[str]:
        page = journal_db.execute(queries.list_residuals, None, 500, order=order)
        return [r.residual.residual_code for r in page.items]

    assert codes(OLDEST) == CODES_IN_APPEND_ORDER
    assert codes(NEWEST) == CODES_IN_APPEND_ORDER[::-1]
    assert codes(MOST_SEEN) == CODES_MOST_SEEN


def test_surfaces_most_seen_first_ties_oldest_first(journal_db: AuditStore) -> None:
    def subjects(order: Order, as_of: int | None = None) -> list[tuple[str | None, int]]:
        page = journal_db.execute(queries.list_surfaces, None, 500, order=order, as_of=as_of)
        return [(s.subject, s.occurrence_count) for s in page.items]

    assert subjects(OLDEST) == subjects(MOST_SEEN) == SURFACES_NOW
    assert subjects(MOST_SEEN, as_of=66) == SURFACES_MOST_SEEN_AT_66


def test_newest_first_reverses_append_order(journal_db: AuditStore) -> None:
    for name in LISTS:
        assert everything(journal_db, name, NEWEST) == everything(journal_db, name, OLDEST)[::-1]
    assert len(everything(journal_db, "turns", OLDEST)) == 6
    assert len(everything(journal_db, "surface occurrences", OLDEST)) == 3


def walk(db: AuditStore, name: str, order: Order, size: int, backwards: bool
         ) -> list[queries.Page[Any]]:
    """Every page of a list, in the order they were read."""
    query, args = listing(db, name)
    pages: list[queries.Page[Any]] = []
    cursor = None
    while True:
        if backwards:
            page = db.execute(query, *args, last=size, before=cursor, order=order)
        else:
            page = db.execute(query, *args, size, cursor, order=order)
        pages.append(page)
        more = page.has_previous_page if backwards else page.has_next_page
        if not more:
            return pages
        cursor = page.start_cursor if backwards else page.end_cursor


# Each list in the orders it declares (MOST_SEEN with sightings, TIME_* with CORE's time,
# a column's orders where the list shows that column); RANK orders a search's matches
# (tests/api/test_search.py pages it).
ORDERED_LISTS = [(name, order) for name in LISTS for order in Order
                 if (order is not MOST_SEEN or name in SIGHTED)
                 and (order not in TIME_ORDERS or name == "turns")
                 and order is not Order.RANK
                 and (order.column is None or order in _LISTINGS.get(name, ()))]


def test_a_descending_column_pages_backwards_across_its_nulls(journal_db: AuditStore) -> None:
    # Surfaces by corpus, descending: cognition_chains_v2 (seq 52), cognition_chains_v1 (69,
    # 50, 42, 40, 38, ties newest first), then the surfaces with no corpus. Read backwards a
    # row at a time, the nulls' part comes first: the merged parts once took its blank key's
    # direction (ascending) and read v2 before v1, losing seq 69 (found by the property test
    # below in CI).
    expected = [52, 69, 50, 42, 40, 38, 80, 77, 74, 61, 59, 57, 55, 48, 46, 44]
    assert everything(journal_db, "surfaces", Order.CORPUS_DESC) == expected
    for size in (1, 2, 3):
        pages = walk(journal_db, "surfaces", Order.CORPUS_DESC, size, backwards=True)
        assert [seq for page in reversed(pages) for seq in seqs(page)] == expected


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(ORDERED_LISTS), size=st.integers(1, 17), backwards=st.booleans())
def test_paging_through_a_list_gives_the_whole_list_once(
    journal_db: AuditStore, case: tuple[str, Order], size: int, backwards: bool
) -> None:
    name, order = case
    expected = everything(journal_db, name, order)
    pages = walk(journal_db, name, order, size, backwards)
    if backwards:
        pages.reverse()
    assert [seq for page in pages for seq in seqs(page)] == expected
    assert len(pages) == max(1, -(-len(expected) // size))
    for index, page in enumerate(pages):
        assert page.has_previous_page == (index > 0)
        assert page.has_next_page == (index < len(pages) - 1)
        assert len(page.items) == len(page.cursors) <= size


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from([c for c in ORDERED_LISTS if c[0] in SIGHTED]), data=st.data())
def test_a_window_between_two_cursors(journal_db: AuditStore, case: tuple[str, Order],
                                      data: st.DataObject) -> None:
    """after and before together: the rows strictly between, from either end."""
    name, order = case
    query, args = listing(journal_db, name)
    whole = journal_db.execute(query, *args, 500, order=order)
    start = data.draw(st.integers(0, len(whole.items) - 2))
    end = data.draw(st.integers(start + 1, len(whole.items) - 1))
    size = data.draw(st.integers(1, 17))
    after, before = whole.cursors[start], whole.cursors[end]
    between = [item.seq for item in whole.items[start + 1:end]]
    forwards = journal_db.execute(query, *args, size, after, before=before, order=order)
    backwards = journal_db.execute(query, *args, last=size, after=after, before=before,
                                order=order)
    assert seqs(forwards) == between[:size]
    assert seqs(backwards) == between[max(0, len(between) - size):]
    for page in (forwards, backwards):
        assert page.has_previous_page and page.has_next_page  # the cursors' own rows


def test_page_info_of_the_first_and_last_pages(journal_db: AuditStore) -> None:
    first = journal_db.execute(queries.list_residuals, None, 5, order=NEWEST)
    assert [r.residual.residual_code for r in first.items] == CODES_IN_APPEND_ORDER[:-6:-1]
    assert (first.has_previous_page, first.has_next_page) == (False, True)
    assert first.start_cursor == first.cursors[0] and first.end_cursor == first.cursors[-1]
    last = journal_db.execute(queries.list_residuals, None, last=5, order=NEWEST)
    assert [r.residual.residual_code for r in last.items] == CODES_IN_APPEND_ORDER[4::-1]
    assert (last.has_previous_page, last.has_next_page) == (True, False)
    empty = journal_db.execute(queries.list_residuals, None, last=0)
    assert (empty.items, empty.start_cursor, empty.has_previous_page) == ([], None, True)


def test_a_cursor_outside_the_filtered_list(journal_db: AuditStore) -> None:
    """A cursor whose row the filter excludes still says whether rows lie before it."""
    all_rows = journal_db.execute(queries.list_residuals, None, 500)
    delta = all_rows.cursors[CODES_IN_APPEND_ORDER.index("delta_quantity_unbound")]
    page = journal_db.execute(queries.list_residuals, ResidualFilter(organ=["fraction_decrease"]),
                           10, delta)
    assert [r.residual.residual_code for r in page.items] == [
        "base_quantity_unbound", "state_entity_unbound"]
    assert not page.has_previous_page  # no fraction_decrease residual comes before it
    unary = ResidualFilter(organ=["unary_delta_transition"])
    page = journal_db.execute(queries.list_residuals, unary, last=10, before=delta)
    assert [r.residual.residual_code for r in page.items] == CODES_IN_APPEND_ORDER[:3]
    assert page.has_next_page and not page.has_previous_page


def _cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


def test_a_cursor_pages_only_the_order_it_came_from(journal_db: AuditStore) -> None:
    newest = journal_db.execute(queries.list_residuals, None, 2, order=NEWEST).end_cursor
    with pytest.raises(queries.CursorError,
                       match="after: this cursor pages the NEWEST_FIRST order, not OLDEST_FIRST"):
        journal_db.execute(queries.list_residuals, None, 2, newest)
    oldest = journal_db.execute(queries.list_residuals, None, 2).end_cursor
    with pytest.raises(queries.CursorError,
                       match="before: this cursor pages the OLDEST_FIRST order, not MOST_SEEN"):
        journal_db.execute(queries.list_residuals, None, last=2, before=oldest, order=MOST_SEEN)
    most = journal_db.execute(queries.list_surfaces, None, 2, order=MOST_SEEN).end_cursor
    with pytest.raises(queries.CursorError, match="MOST_SEEN order, not NEWEST_FIRST"):
        journal_db.execute(queries.list_surfaces, None, 2, most, order=NEWEST)


@pytest.mark.parametrize("text", [
    "seen:3", "seen:3:4:5", "seen:x:4", "newest:", "newest:-1", f"seq:{2**63}",
    f"seen:{2**63}:1", "seq:" + "9" * 5000, "oldest:4",
])
def test_malformed_cursors_of_each_order(journal_db: AuditStore, text: str) -> None:
    for order in queries.LISTINGS["residuals"].orders:
        if order is Order.RANK:
            continue  # a search's order: its cursors in tests/api/test_search.py
        with pytest.raises(queries.CursorError, match="before: malformed cursor"):
            journal_db.execute(queries.list_residuals, None, last=1, before=_cursor(text),
                            order=order)


def test_the_largest_key_is_a_cursor_only_where_the_log_reaches(journal_db: AuditStore) -> None:
    # A seq past the newest row is no cursor this store handed out: refused, not an empty page.
    with pytest.raises(queries.QueryError, match=r"after: the cursor points at seq "
                                                 r"9223372036854775807, past the log's newest"):
        journal_db.execute(queries.list_residuals, None, 5, _cursor(f"seq:{2**63 - 1}"))
    page = journal_db.execute(queries.list_residuals, None, 5, _cursor(f"seen:{2**63 - 1}:0"),
                           order=MOST_SEEN)
    assert [r.residual.residual_code for r in page.items] == CODES_MOST_SEEN[:5]
    assert not page.has_previous_page


@pytest.mark.parametrize("name", ["turns", "assessments", "batches", "occurrences",
                                  "surface occurrences"])
def test_most_seen_is_refused_where_rows_have_no_sightings(journal_db: AuditStore,
                                                           name: str) -> None:
    query, args = listing(journal_db, name)
    with pytest.raises(queries.QueryError, match=rf"order: MOST_SEEN .* which {name} do not"):
        journal_db.execute(query, *args, 5, order=MOST_SEEN)


def test_first_and_last_together_are_refused(journal_db: AuditStore) -> None:
    with pytest.raises(queries.PageSizeError, match="first and last: give one of them"):
        journal_db.execute(queries.list_residuals, None, 5, last=5)


@pytest.mark.parametrize("last", [-1, 501])
def test_last_has_the_page_size_cap(journal_db: AuditStore, last: int) -> None:
    with pytest.raises(queries.PageSizeError, match=f"last: must be between 0 and 500, got {last}"):
        journal_db.execute(queries.list_residuals, None, last=last)
    assert len(journal_db.execute(queries.list_residuals, None, last=500).items) == 12
