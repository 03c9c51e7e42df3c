"""Ingest batches: the envelope of every write."""

from __future__ import annotations

from typing import Any

from store.db.queries.records import Batch
from store.db.schema.tables import ingest_batches as batches_t

BATCH_COLUMNS = [c.label(f"batch_{c.name}") for c in batches_t.c]


def batch_of(row: Any, prefix: str = "") -> Batch:
    mapping = row._mapping
    return Batch(**{c.name: mapping[f"{prefix}{c.name}"] for c in batches_t.c})
