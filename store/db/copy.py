"""Copy a store to another backend with every row, id, leaf and tree head preserved."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select
from sqlalchemy.exc import DBAPIError

from store.db.audit_store import AuditStore
from store.db.log.kept_checkpoints import kept_checkpoints, next_checkpoint_id
from store.db.log.stored_log import StoredLog, latest_head, stored_origin
from store.db.planner_statistics import analyze_postgres
from store.db.schema.engine import settle_sqlite
from store.db.schema.record_kinds import LEDGERED_KEYS
from store.db.schema.tables import (
    log_subtrees,
    metadata,
    sighting_counts,
    tree_heads,
    turn_fields,
)
from store.db.schema.tally_tables import residual_record_tallies, residual_tallies, turn_tallies
from store.db.schema.text_search import TEXT_INDEXES
from store.db.verify.store_checks import VerifyReport, verify_store
from store.db.write.inserts import insert_rows, last_batch_id, lock_log_tip
from store.db.write.search_texts import fts_insert_sql
from store.errors import StoreError

COPY_CHUNK = 5000


@dataclass(frozen=True, slots=True)
class CopyReport:
    copied_rows: int
    already_there: int
    target: VerifyReport


def copy_store(source_db: str, target_db: str) -> CopyReport:
    """Append to `target_db` every row of `source_db` it lacks, read from one snapshot of the
    source; the target is verified inside its transaction and committed only if intact.

    Re-running is a no-op; a target whose tree is not a prefix of the source's is refused.
    Nothing is written to the target on any failure.
    """
    with AuditStore.open(source_db, read_only=True) as source, \
            AuditStore.open(target_db) as target, \
            source.engine.connect() as src:
        if src.dialect.name == "postgresql":
            src = src.execution_options(isolation_level="REPEATABLE READ")
        src.begin()  # one snapshot: a writer appending meanwhile is not half-copied
        report = verify_store(src)
        if not report.intact:
            raise StoreError(f"source is not intact, nothing copied: {report.first_problem}")
        try:
            with target.write_engine().begin() as dst:
                lock_log_tip(dst)
                start = _common_prefix(src, dst)
                copied = _copy_after(src, dst, start)
                verified = verify_store(dst)
                if not verified.intact or verified.tip != report.tip:
                    raise StoreError("copy does not verify, nothing written: "
                                     f"{verified.first_problem or verified.tip}")
        except DBAPIError as exc:
            raise StoreError(f"the target refused the copy, nothing written: {exc.orig}") from exc
        if copied:
            settle_sqlite(target.write_engine())
            analyze_postgres(target.write_engine())
    return CopyReport(copied_rows=copied, already_there=start, target=verified)


def _common_prefix(src: Connection, dst: Connection) -> int:
    head = latest_head(dst)
    if head.size == 0:
        return 0
    source_size = latest_head(src).size
    if head.size > source_size or StoredLog(src).root(head.size) != head.root:
        raise StoreError(
            f"target already holds a different history (its tree of {head.size} leaves is not "
            "a prefix of the source's); nothing copied")
    return head.size


def _nul_free(table: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # PostgreSQL text cannot hold U+0000; say which row instead of failing in the driver.
    for row in rows:
        for column, value in row.items():
            if isinstance(value, str) and "\x00" in value:
                raise StoreError(f"{table} row at seq {row.get('seq')}: {column} holds U+0000 "
                                 "(NUL), which PostgreSQL cannot store; nothing copied")
    return rows


def _copy_after(src: Connection, dst: Connection, start: int) -> int:
    copied = 0
    last_batch = last_batch_id(dst)
    postgres = dst.dialect.name == "postgresql"
    for table in LEDGERED_KEYS:
        t = metadata.tables[table]
        result = src.execute(select(t).where(t.c.seq > start).order_by(t.c.seq)
                             .execution_options(yield_per=COPY_CHUNK))
        for chunk in result.mappings().partitions():
            rows = [dict(row) for row in chunk]
            insert_rows(dst, table, _nul_free(table, rows) if postgres else rows)
            copied += len(rows)
    # Subtrees that end past the prefix; heads, tallies and counts of the batches after it.
    subtrees = src.execute(select(log_subtrees)).mappings()
    insert_rows(dst, "log_subtrees", [dict(row) for row in subtrees
                                      if row["start"] + (1 << row["level"]) > start])
    heads = src.execute(select(tree_heads).where(tree_heads.c.batch_id > last_batch)
                        .order_by(tree_heads.c.batch_id)).mappings()
    insert_rows(dst, "tree_heads", [dict(row) for row in heads])
    origin, kept = stored_origin(src), stored_origin(dst)
    if origin is not None and kept is None:
        insert_rows(dst, "log_origin", [{"origin": origin}])
    elif origin is not None and kept != origin:
        raise StoreError(f"target is the log {kept!r}, the source {origin!r}; nothing copied")
    tallies = src.execute(select(residual_tallies).where(residual_tallies.c.batch_id > last_batch)
                          .order_by(residual_tallies.c.batch_id, residual_tallies.c.ordinal))
    insert_rows(dst, "residual_tallies", [dict(row) for row in tallies.mappings()])
    turn_rows = src.execute(select(turn_tallies).where(turn_tallies.c.batch_id > last_batch)
                            .order_by(turn_tallies.c.batch_id, turn_tallies.c.ordinal))
    insert_rows(dst, "turn_tallies", [dict(row) for row in turn_rows.mappings()])
    counts = src.execute(select(sighting_counts)
                         .where(sighting_counts.c.batch_id > last_batch)
                         .order_by(sighting_counts.c.batch_id, sighting_counts.c.record_seq)
                         .execution_options(yield_per=COPY_CHUNK))
    for chunk in counts.mappings().partitions():
        insert_rows(dst, "sighting_counts", [dict(row) for row in chunk])
    fields = src.execute(select(turn_fields).where(turn_fields.c.batch_id > last_batch)
                         .order_by(turn_fields.c.turn_seq).execution_options(yield_per=COPY_CHUNK))
    for chunk in fields.mappings().partitions():
        insert_rows(dst, "turn_fields", [dict(row) for row in chunk])
    _copy_search_texts(src, dst, last_batch)
    _copy_kept_checkpoints(src, dst)
    return copied


def _copy_search_texts(src: Connection, dst: Connection, last_batch: int) -> None:
    """The search texts of the batches the target lacks, and on a SQLite target the same
    documents into its FTS5 indexes (PostgreSQL derives its tsvector column itself); then
    their residual record tallies."""
    for index in TEXT_INDEXES.values():
        texts = index.texts
        result = src.execute(select(texts).where(texts.c.batch_id > last_batch)
                             .order_by(texts.c.record_seq)
                             .execution_options(yield_per=COPY_CHUNK))
        for chunk in result.mappings().partitions():
            rows = [dict(row) for row in chunk]
            insert_rows(dst, str(texts.name), rows)
            if dst.dialect.name == "sqlite":
                dst.exec_driver_sql(fts_insert_sql(index), [
                    (row["record_seq"], *(row[c] for c in index.columns)) for row in rows])
    tallies = residual_record_tallies
    result = src.execute(select(tallies).where(tallies.c.batch_id > last_batch)
                         .order_by(tallies.c.record_seq, tallies.c.batch_id)
                         .execution_options(yield_per=COPY_CHUNK))
    for chunk in result.mappings().partitions():
        insert_rows(dst, str(tallies.name), [dict(row) for row in chunk])


def _copy_kept_checkpoints(src: Connection, dst: Connection) -> None:
    """The source's kept checkpoints the target lacks (numbered after the target's own), and
    the cosignatures it lacks of those it has: the signed word travels with the log."""
    have = {kept.signed_note: kept for kept in kept_checkpoints(dst, newest_first=False)}
    next_id = next_checkpoint_id(dst)
    for kept in kept_checkpoints(src, newest_first=False):
        found = have.get(kept.signed_note)
        if found is None:
            insert_rows(dst, "checkpoints", [{
                "checkpoint_id": next_id, "tree_size": kept.tree_size,
                "root_hash": kept.root_hash, "signers": " ".join(kept.signers),
                "note": kept.signed_note}])
            target, cosigned = next_id, set()
            next_id += 1
        else:
            target, cosigned = found.checkpoint_id, set(found.cosigners)
        insert_rows(dst, "checkpoint_cosignatures", [
            {"checkpoint_id": target, "witness": witness, "line": line}
            for witness, line in zip(kept.cosigners, kept.cosignature_lines, strict=True)
            if witness not in cosigned])
