"""The choice of the log's origin, logged: a batch of its own whose one leaf (its
`ingest_batches` row, record type `log-origin`, the origin as its source) makes the choice part
of the tree every checkpoint signs. `log_origin` keeps the origin for lookups; `verify` checks
it against this leaf, so rewriting it in place (guard dropped, row updated, guard recreated)
is found, as any rewritten leaf is."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from sqlalchemy import Connection, select

from store import __version__
from store.db.log.stored_log import LogAppender
from store.db.schema.tables import ingest_batches
from store.db.write.inserts import insert_rows, last_batch_id

ORIGIN_RECORD_TYPE = "log-origin"


def origin_row(batch_id: int, origin: str) -> dict[str, object]:
    """The `ingest_batches` row that logs the choice of `origin` (no records: 0 lines)."""
    return {
        "batch_id": batch_id, "source": origin,
        "input_sha256": hashlib.sha256(origin.encode("utf-8")).hexdigest(),
        "record_type": ORIGIN_RECORD_TYPE, "lines": 0, "new_rows": 0, "present_rows": 0,
        "rejected_lines": 0,
        "ingested_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "store_version": __version__,
    }


def log_origin_choice(connection: Connection, origin: str) -> int:
    """Append the batch that logs `origin` as chosen (inside the caller's write transaction,
    the log's tip locked) and return its batch id. Read back before the caller commits."""
    batch_id = last_batch_id(connection) + 1
    appender = LogAppender(connection)
    row = origin_row(batch_id, origin)
    appender.append("ingest_batches", row)
    insert_rows(connection, "ingest_batches", [row])
    insert_rows(connection, "log_subtrees", appender.subtree_rows())
    head = appender.head_row(batch_id)
    insert_rows(connection, "tree_heads", [head])
    back = connection.execute(select(ingest_batches.c.source, ingest_batches.c.record_type,
                                     ingest_batches.c.seq)
                              .where(ingest_batches.c.batch_id == batch_id)).one()
    if tuple(back) != (origin, ORIGIN_RECORD_TYPE, head["tree_size"]):
        raise RuntimeError(f"the origin's batch {batch_id} does not read back as written")
    return batch_id


def logged_origins(connection: Connection) -> list[tuple[int, str]]:
    """(batch id, origin) of every batch that logged an origin choice, oldest first."""
    return [(int(b), str(s)) for b, s in connection.execute(
        select(ingest_batches.c.batch_id, ingest_batches.c.source)
        .where(ingest_batches.c.record_type == ORIGIN_RECORD_TYPE)
        .order_by(ingest_batches.c.batch_id))]
