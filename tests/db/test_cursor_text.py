"""A page's cursors, written in one pass (cursors_of), are the texts cursor_for writes one
row at a time, and key_in reads each back to its row's key."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from store.db.queries.cursors import cursor_for, cursors_of, key_in
from store.db.queries.keys import MAX_KEY
from store.db.queries.orders import COLUMN_ORDERS, Order

KEY_VALUES = st.one_of(st.integers(min_value=0, max_value=MAX_KEY), st.text(max_size=12),
                       st.booleans())


@given(order=st.sampled_from(list(Order)),
       rows=st.lists(st.lists(KEY_VALUES, min_size=4, max_size=4), max_size=6),
       places=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=3))
def test_a_pages_cursors_are_the_texts_of_each_row(order: Order, rows: list[list[object]],
                                                   places: list[int]) -> None:
    assert cursors_of(order, rows, places) == [
        cursor_for(order, [row[place] for place in places]) for row in rows]


def test_cursor_texts_as_the_module_documents_them() -> None:
    # "`seq:12` (OLDEST_FIRST ...), `newest:12`, `seen:3:12` (MOST_SEEN: 3 sightings, seq 12)"
    rows = [(12, 3), (7, 1)]
    assert cursors_of(Order.OLDEST_FIRST, rows, [0]) == ["c2VxOjEy", "c2VxOjc="]
    assert cursors_of(Order.NEWEST_FIRST, rows, [0]) == ["bmV3ZXN0OjEy", "bmV3ZXN0Ojc="]
    assert cursors_of(Order.MOST_SEEN, rows, [1, 0]) == ["c2VlbjozOjEy", "c2VlbjoxOjc="]
    assert key_in("c2VlbjozOjEy", Order.MOST_SEEN) == (3, 12)
    column_order = COLUMN_ORDERS[0]
    assert cursors_of(column_order, [(0, "a", 5)], [0, 1, 2]) == [
        cursor_for(column_order, [0, "a", 5])]
