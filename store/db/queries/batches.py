"""Ingest batches: the envelope of every write."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Connection,
    select,
)

from store.db.queries.as_of import held, snapshot_at
from store.db.queries.orders import Order, in_seq_order
from store.db.queries.pages import (
    count_rows,
    page_of,
)
from store.db.queries.records import Batch, Page
from store.db.schema.tables import ingest_batches as batches_t

BATCH_COLUMNS = [c.label(f"batch_{c.name}") for c in batches_t.c]


def batch_of(row: Any, prefix: str = "") -> Batch:
    mapping = row._mapping
    return Batch(**{c.name: mapping[f"{prefix}{c.name}"] for c in batches_t.c})


def list_batches(
    connection: Connection,
    first: int | None = None,
    after: str | None = None,
    *,
    last: int | None = None,
    before: str | None = None,
    order: Order = Order.OLDEST_FIRST,
    as_of: int | None = None,
) -> Page[Batch]:
    statement = select(batches_t).where(*held(snapshot_at(connection, as_of), batches_t))
    listing = in_seq_order(order, statement, batches_t.c.seq, listing="batches")
    return page_of(connection, listing, order, batch_of, first, after, last, before)


def count_batches(connection: Connection, as_of: int | None = None) -> int:
    snapshot = snapshot_at(connection, as_of)
    return count_rows(connection, select(batches_t.c.seq).where(*held(snapshot, batches_t)))
