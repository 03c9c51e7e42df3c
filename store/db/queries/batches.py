"""Ingest batches: the envelope of every write."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Connection,
    select,
)

from store.db.queries.pages import (
    count_rows,
    page_of,
)
from store.db.queries.records import Batch, Page
from store.db.tables import ingest_batches as batches_t

BATCH_COLUMNS = [c.label(f"batch_{c.name}") for c in batches_t.c]


def batch_of(row: Any, prefix: str = "") -> Batch:
    mapping = row._mapping
    return Batch(**{c.name: mapping[f"{prefix}{c.name}"] for c in batches_t.c})


def list_batches(
    connection: Connection, first: int | None = None, after: str | None = None
) -> Page[Batch]:
    return page_of(connection, select(batches_t), batches_t.c.seq, first, after, batch_of)


def count_batches(connection: Connection) -> int:
    return count_rows(connection, select(batches_t.c.seq))
