"""Copy a store to another backend with every row, id and chain hash preserved."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, select

from store.db.audit_store import AuditStore
from store.db.errors import StoreError
from store.db.ledger import read_tip
from store.db.tables import LEDGERED_KEYS, ledger, metadata, residual_tallies
from store.db.verify import VerifyReport
from store.db.writer import insert_rows, last_batch_id, lock_chain_tip

COPY_CHUNK = 5000


@dataclass(frozen=True, slots=True)
class CopyReport:
    copied_rows: int
    already_there: int
    target: VerifyReport


def copy_store(source_db: str, target_db: str) -> CopyReport:
    """Append to `target_db` every ledgered row of `source_db` it lacks; verify both ends.

    Re-running is a no-op; a target whose history is not a prefix of the source's is refused.
    """
    with AuditStore.open(source_db, read_only=True) as source:
        report = source.verify()
        if not report.intact:
            raise StoreError(f"source is not intact, nothing copied: {report.first_problem}")
        with AuditStore.open(target_db) as target:
            engine = target.write_engine()
            with source.engine.connect() as src, engine.begin() as dst:
                lock_chain_tip(dst)
                start = _common_prefix(src, dst)
                copied = _copy_after(src, dst, start)
            verified = target.verify()
    if not verified.intact or verified.tip != report.tip:
        raise StoreError(f"copy does not verify: {verified.first_problem or verified.tip}")
    return CopyReport(copied_rows=copied, already_there=start, target=verified)


def _common_prefix(src: Connection, dst: Connection) -> int:
    tip = read_tip(dst)
    if tip.seq == 0:
        return 0
    same = src.execute(select(ledger.c.chain_hash).where(ledger.c.seq == tip.seq)).scalar()
    if same != tip.chain_hash:
        raise StoreError(
            f"target already holds a different history (its seq {tip.seq} is not the source's);"
            " nothing copied"
        )
    return tip.seq


def _copy_after(src: Connection, dst: Connection, start: int) -> int:
    copied = 0
    # A ledger prefix ends with a batch row, so the target holds whole batches.
    last_batch = last_batch_id(dst)
    for table in (*LEDGERED_KEYS, "ledger"):
        t = metadata.tables[table]
        result = src.execution_options(yield_per=COPY_CHUNK).execute(
            select(t).where(t.c.seq > start).order_by(t.c.seq)
        )
        for chunk in result.mappings().partitions():
            insert_rows(dst, table, [dict(row) for row in chunk])
            if table == "ledger":
                copied += len(chunk)
    tallies = src.execute(select(residual_tallies).where(residual_tallies.c.batch_id > last_batch)
                          .order_by(residual_tallies.c.batch_id, residual_tallies.c.ordinal))
    insert_rows(dst, "residual_tallies", [dict(row) for row in tallies.mappings()])
    return copied
