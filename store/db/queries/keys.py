"""Integers a caller hands in (cursor keys, tree sizes, batch ids): their bound and their SQL.

Each is compared with an INTEGER column or a count. Bound to 64 bits (what SQLite stores and
a PostgreSQL bigint holds) and sent as a bigint: as a plain parameter PostgreSQL would cast
it to the column's 32-bit type and fail on a larger one instead of matching nothing.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, ColumnElement, literal

MAX_KEY = 2**63 - 1


def key_value(value: int) -> ColumnElement[Any]:
    return literal(value, BigInteger())
