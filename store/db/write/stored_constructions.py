"""Stored journal turns' construction evidence, projected after the fact: revision 0012
gives the turns a store held before it their `turn_constructions`, assessments, residuals
and links, re-derived from each stored `line` exactly as ingest derives them, as one batch."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import orjson
from sqlalchemy import Connection, exists, select

from store.db.schema.tables import turn_constructions, turns
from store.db.write.batch_summary import BatchSummary
from store.db.write.row_builders import PendingRow, construction_rows
from store.db.write.writer import append_rows_batch
from store.model.turns import TurnKind

BACKFILL_SOURCE = "alembic revision 0012: construction evidence of stored journal turns"
RECORD_TYPE = "turn_constructions"
_READ_ROWS = 1000


def _unprojected(connection: Connection, digest: Any) -> Iterator[tuple[int, list[PendingRow]]]:
    """(n, rows) of the n-th stored journal turn whose line carries a payload and has no
    turn_constructions row, in seq order; `digest` hashes the turn keys met."""
    t, c = turns, turn_constructions
    statement = (
        select(t)
        .where(t.c.kind == TurnKind.WORKBENCH_JOURNAL.value,
               t.c.line.contains('"construction_evidence"'),
               ~exists().where(c.c.turn_key == t.c.turn_key))
        .order_by(t.c.seq).execution_options(yield_per=_READ_ROWS))
    number = 0
    for stored in connection.execute(statement).mappings():
        payload = orjson.loads(stored["line"]).get("construction_evidence")
        if payload is not None:
            key = stored["turn_key"]
            digest.update(key.encode("ascii"))
            # The turn itself, as stored (present): the rows below refer to it.
            turn = {k: v for k, v in stored.items() if k not in ("seq", "batch_id")}
            number += 1
            yield number, [PendingRow("turns", (key,), turn),
                                  *construction_rows(key, payload)]


def append_stored_constructions(connection: Connection) -> BatchSummary:
    """The projections of stored turns that have none, appended as one batch (none if no
    stored line carries a payload). Its input_sha256 hashes the turn keys projected, in
    order; its "lines" are the turns projected, numbered in seq order."""
    digest = hashlib.sha256()
    rows = list(_unprojected(connection, digest))
    if not rows:  # no batch, and no hold on the log's lock for the rest of the migration
        return BatchSummary(source=BACKFILL_SOURCE)
    return append_rows_batch(connection, rows, BACKFILL_SOURCE, RECORD_TYPE,
                             digest.hexdigest())
