"""Opaque page cursors: the order they page and the sort key of one row, base64url-encoded.

`seq:12` (OLDEST_FIRST, the only order before orders existed, so old cursors still work),
`newest:12`, `seen:3:12` (MOST_SEEN: 3 sightings, seq 12), `time:T:12` and `timedesc:T:12`
(TIME_ASC, TIME_DESC: CORE time T as turn_fields.core_time counts it, seq 12), `rank:R:12`
(RANK: the match's score R, seq 12). A column
order's key holds the column's value, text or a number (a boolean: 0 or 1):
`["code_asc",0,"entity_unbound",12]`
(JSON: the order, 0 or 1 for a null, the value or a blank, the seq).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any

from store.db.queries.errors import CursorError
from store.db.queries.keys import MAX_KEY
from store.db.queries.orders import COLUMN_ORDERS, Order

_TAGS = {Order.OLDEST_FIRST: "seq", Order.NEWEST_FIRST: "newest", Order.MOST_SEEN: "seen",
         Order.TIME_ASC: "time", Order.TIME_DESC: "timedesc", Order.RANK: "rank"}
_ORDERS = {tag: order for order, tag in _TAGS.items()}
_COLUMN_ORDERS = {order.value: order for order in COLUMN_ORDERS}
_KEYS = {Order.OLDEST_FIRST: 1, Order.NEWEST_FIRST: 1, Order.MOST_SEEN: 2, Order.TIME_ASC: 2,
         Order.TIME_DESC: 2, Order.RANK: 2}
_HINT = {"after": "an endCursor or cursor value", "before": "a startCursor or cursor value"}


def cursor_for(order: Order, key: Sequence[int | str]) -> str:
    tag = _TAGS.get(order)
    if tag is None:  # a column order
        # A boolean column's value as 0 or 1 (false before true), as every other number.
        values = [int(value) if isinstance(value, bool) else value for value in key]
        text = json.dumps([order.value, *values], ensure_ascii=False, separators=(",", ":"))
    else:
        text = ":".join([tag, *map(str, key)])
    return _url_safe(text)


_URL_SAFE = bytes.maketrans(b"+/", b"-_")


def _url_safe(text: str) -> str:
    """base64url, as base64.urlsafe_b64encode writes it, without its two extra calls: a page
    makes a cursor per row."""
    return binascii.b2a_base64(text.encode("utf-8"), newline=False).translate(
        _URL_SAFE).decode("ascii")


def cursors_of(order: Order, rows: Sequence[Sequence[Any]], places: Sequence[int]
               ) -> list[str]:
    """`cursor_for(order, [row[place] for place in places])` of each row, the same text,
    written in one pass: a page makes one per row, and a call per row cost half the page's
    Python (an f-string formats a key's int or text as str() does)."""
    tag = _TAGS.get(order)
    if tag is None or len(places) not in (1, 2):
        return [cursor_for(order, [row[place] for place in places]) for row in rows]
    if len(places) == 1:
        (place,) = places
        return [_url_safe(f"{tag}:{row[place]}") for row in rows]
    one, two = places
    return [_url_safe(f"{tag}:{row[one]}:{row[two]}") for row in rows]


def malformed(argument: str) -> CursorError:
    return CursorError(f"{argument}: malformed cursor (use {_HINT.get(argument, 'a cursor')})")


def _integer(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_KEY


def _column_key(raw: bytes, order: Order, argument: str) -> tuple[int | str, ...]:
    """The key inside a column order's cursor: (0 or 1, a text or a number, a seq)."""
    try:
        tag, null, value, seq = json.loads(raw.decode("utf-8"))
    except (UnicodeError, ValueError, TypeError):
        raise malformed(argument) from None
    found = _COLUMN_ORDERS.get(tag) if isinstance(tag, str) else None
    if (found is None or null not in (0, 1) or type(null) is not int or not _integer(seq)
            or not (isinstance(value, str) or (type(value) is int and abs(value) <= MAX_KEY))):
        raise malformed(argument)
    if found is not order:
        raise CursorError(f"{argument}: this cursor pages the {found.name} order, not "
                          f"{order.name}: use a cursor from a page in the same order")
    return null, value, seq


def key_in(cursor: str, order: Order, argument: str = "after") -> tuple[int | str, ...]:
    """The sort key inside a cursor of `order`; CursorError for anything this API did not
    hand out for that order, naming `argument`."""
    try:
        raw = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True)
    except (binascii.Error, UnicodeError, ValueError):
        raise malformed(argument) from None
    if raw.startswith(b"["):
        return _column_key(raw, order, argument)
    try:
        tag, *values = raw.decode("ascii").split(":")
    except (UnicodeError, ValueError):
        raise malformed(argument) from None
    found = _ORDERS.get(tag)
    if found is None or len(values) != _KEYS[found]:
        raise malformed(argument)
    if not all(v.isascii() and v.isdigit() and len(v) <= 19 and int(v) <= MAX_KEY
               for v in values):
        raise malformed(argument)
    if found is not order:
        raise CursorError(f"{argument}: this cursor pages the {found.name} order, not "
                          f"{order.name}: use a cursor from a page in the same order")
    return tuple(int(value) for value in values)


def encode_cursor(seq: int) -> str:
    """An OLDEST_FIRST cursor."""
    return cursor_for(Order.OLDEST_FIRST, (seq,))


def decode_cursor(cursor: str) -> int:
    """The seq inside an OLDEST_FIRST cursor; CursorError for anything else."""
    seq = key_in(cursor, Order.OLDEST_FIRST)[0]
    assert isinstance(seq, int)
    return seq
