"""Ingest batches: the envelope of every write."""

from __future__ import annotations

from store.db.queries.records import Batch
from store.db.queries.row_records import flat_record
from store.db.schema.tables import ingest_batches as batches_t

BATCH_COLUMNS = [c.label(f"batch_{c.name}") for c in batches_t.c]
BATCH_RECORD = flat_record(Batch)  # a batch is its row; in a joined row, .at("batch_")
