"""Ingest batches: the envelope of every write."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy import Connection, select

from store.db.queries.records import Batch
from store.db.queries.row_records import flat_record
from store.db.schema.tables import ingest_batches as batches_t

BATCH_COLUMNS = [c.label(f"batch_{c.name}") for c in batches_t.c]
BATCH_RECORD = flat_record(Batch)  # a batch is its row; in a joined row, .at("batch_")


def first_batch_not_of(connection: Connection, inputs: Collection[str],
                       also: Sequence[str] = ()) -> Batch | None:
    """The first batch whose input (its bytes' sha256) is not one of `inputs` and whose record
    type is not one of `also`; None when every batch is one of them. Reads one row however
    many batches the store holds."""
    statement = select(batches_t).order_by(batches_t.c.seq).limit(1)
    if inputs:
        statement = statement.where(batches_t.c.input_sha256.not_in(list(inputs)))
    if also:
        statement = statement.where(batches_t.c.record_type.not_in(list(also)))
    row = connection.execute(statement).first()
    return None if row is None else BATCH_RECORD(row)


def batches_by_id(connection: Connection, batch_ids: Collection[int]) -> list[Batch]:
    """The batches of `batch_ids`, ascending (ids not stored are left out)."""
    if not batch_ids:
        return []
    statement = (select(batches_t).where(batches_t.c.batch_id.in_(list(batch_ids)))
                 .order_by(batches_t.c.batch_id))
    return [BATCH_RECORD(row) for row in connection.execute(statement)]
