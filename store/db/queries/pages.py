"""Keyset pages over `seq` (append order), their cursors, and counts."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Label,
    Select,
    Table,
    func,
    select,
)

from store.db.queries.errors import CursorError, PageSizeError
from store.db.queries.records import Page, SeqT

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
_CURSOR_PREFIX = "seq:"
# seq is an Integer column, 32 bits on PostgreSQL: no stored seq is larger, none larger binds
_MAX_SEQ = 2**31 - 1


def encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{seq}".encode("ascii")).decode("ascii")


def decode_cursor(cursor: str) -> int:
    """The seq inside a cursor; CursorError for anything this API did not produce."""
    try:
        raw = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True)
        text = raw.decode("ascii")
    except (binascii.Error, UnicodeError, ValueError):
        raise CursorError("after: malformed cursor (use an endCursor or cursor value)") from None
    digits = text.removeprefix(_CURSOR_PREFIX)
    if (not text.startswith(_CURSOR_PREFIX) or not digits.isascii() or not digits.isdigit()
            or len(digits) > len(str(_MAX_SEQ)) or int(digits) > _MAX_SEQ):
        raise CursorError("after: malformed cursor (use an endCursor or cursor value)")
    return int(digits)


def page_size(first: int | None) -> int:
    if first is None:
        return DEFAULT_PAGE_SIZE
    if first < 0 or first > MAX_PAGE_SIZE:
        raise PageSizeError(f"first: must be between 0 and {MAX_PAGE_SIZE}, got {first}")
    return first


def page_of(
    connection: Connection,
    statement: Select[Any],
    seq: ColumnElement[int],
    first: int | None,
    after: str | None,
    build: Callable[[Any], SeqT],
) -> Page[SeqT]:
    """Keyset page: rows after the cursor's seq, fetching one extra to know if more follow."""
    size = page_size(first)
    if after is not None:
        statement = statement.where(seq > decode_cursor(after))
    rows = connection.execute(statement.order_by(seq).limit(size + 1)).all()
    items = [build(row) for row in rows[:size]]
    return Page(
        items=items,
        cursors=[encode_cursor(item.seq) for item in items],
        has_next_page=len(rows) > size,
    )


def count_rows(connection: Connection, statement: Select[Any]) -> int:
    return connection.execute(
        select(func.count()).select_from(statement.subquery())
    ).scalar_one()


def sightings_count(parent: Table, key: str, sightings: Table) -> Label[int]:
    """Per row of `parent`, an index range count of its sightings: an `occurrence_count`
    column, cheaper than a second statement and its thread hop."""
    return (
        select(func.count())
        .where(sightings.c[key] == parent.c[key])
        .correlate(parent)
        .scalar_subquery()
        .label("occurrence_count")
    )
