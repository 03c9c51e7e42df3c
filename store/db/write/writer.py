"""The append-only writer: one input file is one batch, written wholly or not at all."""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import IO, Any

from sqlalchemy import Connection, Engine, select

from store import __version__
from store.db.log.stored_log import LogAppender
from store.db.schema.record_kinds import KINDS_BY_TABLE, RecordKind
from store.db.write.batch_proof import AppendedEntry, WrittenBatch, appended_columns, prove_batch
from store.db.write.batch_summary import BatchSummary
from store.db.write.derived_tables import DerivedTables
from store.db.write.guard_lift import InsertGuards, insert_guards_liftable
from store.db.write.input_kinds import (
    APPENDED_COLUMNS,
    CONTENT_KEYS,
    INPUT_KINDS,
    KEY_POSITIONS,
    check_references,
)
from store.db.write.inserts import (
    batch_of_input,
    content_columns,
    insert_rows,
    insert_values,
    last_batch_id,
    lock_log_tip,
)
from store.db.write.journal_rewrites import JournalTurns
from store.db.write.key_filter import KeyFilter, stored_key_filter
from store.db.write.reading_process import (
    CHUNK_ROWS,
    RowChunk,
    RowToAppend,
    chunks_in_process,
    named_rows,
    row_chunks,
    rows_to_append,
    worth_a_process,
)
from store.db.write.row_builders import InputStart, RegistryProvider, ledger_key
from store.db.write.sighting_counts import write_sighting_counts
from store.db.write.turn_fields import TurnFieldsWriter
from store.errors import BatchRejected as BatchRejected  # raised here, still importable
from store.model.jsonl import MAX_LINE_BYTES
from store.model.merkle import leaf_hash
from store.model.teaching_surface import default_registry

REPEAT_CACHE = 20_000  # stored rows remembered per kind whose records repeat
# Build key filters once a batch has looked up this fraction of the stored rows' count: the
# scan that fills them then costs no more than the lookups it saves.
FILTER_AFTER_FRACTION = 8
# With the cycle collector paused, the few reference cycles each flush leaves piled up to the
# end (peak RSS 241 MiB at 2M occurrences, 197 MiB when the young generation is collected).
COLLECT_EVERY_FLUSHES = 50


_LOOKUP_ORDER = sorted(INPUT_KINDS, key=lambda k: k.part_of is not None)  # parents first


class _BatchWriter:
    def __init__(self, connection: Connection, summary: BatchSummary, batch_id: int,
                 guards: InsertGuards, start: InputStart | None = None) -> None:
        self.connection = connection
        self.guards = guards
        self.flushes = 0
        self.summary = summary
        self.batch_id = batch_id
        self.appender = LogAppender(connection)
        self.pending: list[RowToAppend] = []
        # Residual ids repeat across frames: remember their stored content, boundedly.
        self.repeated: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {}
        self.derived = DerivedTables.on_store(connection)  # those the store has
        self.stored_rows = self.appender.size  # at most this many rows in any one table
        self.looked_up = 0
        self.filtering = False  # once True, each kind's key filter is built when first needed
        self.filters: dict[str, KeyFilter] = {}
        self.holding: set[int] = set()  # the batches of the rows found already stored
        self.met_earlier: set[str] = set()  # tables with rows an earlier batch stored
        self.written = WrittenBatch(self.appender.tree.copy())  # what prove_batch checks
        self.journal = JournalTurns()
        self.turn_batches: set[int] = set()  # the batches of the turns found stored
        # A tail batch (`follow`) has no turn 1: its journal is named by the caller.
        self.turn_fields = TurnFieldsWriter(batch_id, start.journal_id if start else None)

    def add(self, chunk: RowChunk) -> None:
        summary = self.summary
        for line, reason in chunk.failures:
            summary.fail(line, reason)
        summary.lines = chunk.lines
        summary.records += chunk.records
        summary.record_types |= chunk.record_types
        if not summary.rejected:
            self.pending.extend(named_rows(chunk.rows))
        if len(self.pending) >= CHUNK_ROWS:
            self.flush()

    def _stored(self, kind: RecordKind, keys: set[tuple[Any, ...]]
                ) -> dict[tuple[Any, ...], Any]:
        key_filter = self._key_filter(kind) if keys else None
        if key_filter is not None:
            keys = {k for k in keys if key_filter.may_hold(k[0])}
        if not keys:
            return {}
        t, columns = kind.table, content_columns(kind.name)
        key_of = CONTENT_KEYS[kind.name]
        # On the key's first column only: SQLite does not use an index for a row-value IN
        # list (3,500 occurrence keys took a second), so the rest is matched here.
        firsts = {k[0] for k in keys}
        result = self.connection.execute(
            select(t.c.batch_id, *(t.c[c] for c in columns)).where(t.c[kind.key[0]].in_(firsts)))
        found: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        for row in result:  # (batch_id, *content): tuples, not mappings, on the hot path
            content = tuple(row[1:])
            key = key_of(content)
            if key in keys:
                found[key] = content
                self.holding.add(row[0])
                if row[0] != self.batch_id:
                    self.met_earlier.add(kind.name)
                if kind.name == "turns":
                    self.turn_batches.add(row[0])
        return found

    def _key_filter(self, kind: RecordKind) -> KeyFilter | None:
        """The kind's filter, built on its first use (a batch of residuals builds none for
        surfaces or turns); it then holds the rows this batch has stored so far too."""
        if not self.filtering or len(kind.key) != 1:
            return None
        found = self.filters.get(kind.name)
        if found is None:
            found = self.filters[kind.name] = stored_key_filter(
                self.connection, kind.name, kind.key[0], self.stored_rows)
        return found

    def _lookup(self) -> dict[str, dict[tuple[Any, ...], Any]]:
        keys: dict[str, set[tuple[Any, ...]]] = {kind.name: set() for kind in INPUT_KINDS}
        for row in self.pending:
            keys[row.table].add(row.key)
        self.looked_up += len(self.pending)
        if self.looked_up * FILTER_AFTER_FRACTION >= self.stored_rows:
            self.filtering = True
        stored: dict[str, dict[tuple[Any, ...], Any]] = {}
        for kind in _LOOKUP_ORDER:
            wanted = keys[kind.name]
            if kind.part_of is not None:
                # A part of a record not stored yet (a new assessment's occurrence) is new.
                parents = stored[kind.part_of]
                wanted = {k for k in wanted if k[:len(KINDS_BY_TABLE[kind.part_of].key)]
                          in parents}
            if kind.repeats:
                cache = self.repeated.setdefault(kind.name, {})
                if len(cache) > REPEAT_CACHE:
                    cache.clear()
                cache.update(self._stored(kind, wanted - cache.keys()))
                stored[kind.name] = cache
            else:
                stored[kind.name] = self._stored(kind, wanted)
        return stored

    def flush(self) -> None:
        if not self.pending or self.summary.rejected:
            self.pending.clear()
            return
        stored = self._lookup()
        inserts: dict[str, list[tuple[Any, ...]]] = {table: [] for table in stored}
        leaves: list[bytes] = []
        tables, tally, batch_id = self.summary.tables, self.derived.residual_tally, self.batch_id
        seq = self.appender.size
        fields: list[tuple[Any, ...]] = []  # the new turns' turn_fields rows
        for line, table, key, content, leaf, combo in self.pending:
            counts = tables[table]
            existing = stored[table].get(key)
            if existing is not None:
                if existing != content:
                    self.summary.fail(
                        line,
                        f"{table} {ledger_key(key)} is already stored with different content",
                    )
                    break
                counts.present += 1
                if table == "turns":
                    self.journal.saw(line, content, stored=True)
                    self.turn_fields.saw_stored(content)
                continue
            seq += 1
            if table == "turns":
                self.journal.saw(line, content, stored=False)
                fields.append(self.turn_fields.new_row(seq, content))
                if self.derived.turn_tally is not None:
                    self.derived.turn_tally.add(content, fields[-1])
            inserts[table].append((seq, batch_id, *content))
            leaves.append(leaf)
            stored[table][key] = content  # later sightings in this batch are "present"
            counts.new += 1
            if combo is not None:  # a new residual, or a new sighting of one
                if table == "residual_occurrences":
                    tally.add(combo, occurrences=1)
                else:
                    tally.add(combo, residuals=1)
        self.pending.clear()
        if self.summary.rejected:
            return
        check_references(inserts, stored)
        for table, rows in inserts.items():
            key_filter = self.filters.get(table)
            if key_filter is not None:
                position = KEY_POSITIONS[table]
                key_filter.add_all(row[position] for row in rows)
        self.appender.append_hashes(leaves)
        for table, rows in inserts.items():
            self.written.add_many(table, rows)
        self.flushes += 1
        if self.flushes % COLLECT_EVERY_FLUSHES == 0:
            gc.collect(0)
        if self.flushes > 1:  # a batch of one chunk keeps them: no schema change for it
            self.guards.lift()
        for table, rows in inserts.items():
            insert_values(self.connection, table, APPENDED_COLUMNS[table], rows)
        self.derived.writes.insert(self.connection, "turn_fields", fields)
        self.derived.insert_texts(self.connection, batch_id, inserts, stored)
        self._insert_subtrees()

    def count_sightings(self) -> None:
        """The batch's sighting_counts rows, once every row is written (and while the insert
        guards may still be lifted)."""
        if self.summary.rejected or self.summary.new_rows == 0:
            return
        new = {table: counts.new for table, counts in self.summary.tables.items()}
        if "sighting_counts" not in self.derived.writes.absent:
            write_sighting_counts(self.connection, self.derived.writes, self.batch_id,
                                  self.written.before.size + 1, new, self.appender.size)
        # Every residual it sighted, the batch met (check_references): stored, or new.
        self.derived.insert_record_tallies(
            self.connection, self.batch_id, self.written.before.size + 1, new,
            earlier_sighted="contract_residuals" in self.met_earlier)

    def _insert_subtrees(self) -> None:
        self.derived.writes.insert_dicts(self.connection, "log_subtrees",
                                         self.appender.subtree_rows())

    def close(self, input_sha256: str) -> None:
        summary = self.summary
        row = {
            "batch_id": self.batch_id,
            "source": summary.source,
            "input_sha256": input_sha256,
            "record_type": summary.record_type,
            "lines": summary.lines,
            "new_rows": summary.new_rows,
            "present_rows": summary.present_rows,
            "rejected_lines": 0,
            "ingested_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "store_version": __version__,
        }
        row["seq"] = self.appender.size + 1  # the batch's own row is its last leaf
        values = tuple(row[name] for name in appended_columns("ingest_batches"))
        self.appender.append_hashes([leaf_hash(AppendedEntry("ingest_batches")(values))])
        self.written.add_many("ingest_batches", [values])
        insert_rows(self.connection, "ingest_batches", [row])
        self._insert_subtrees()
        head = self.appender.head_row(self.batch_id)
        self.derived.writes.insert_dicts(self.connection, "tree_heads", [head])
        self.derived.insert_tallies(self.connection, self.batch_id)
        prove_batch(self.connection, self.written, self.batch_id, head["tree_size"],
                    self.derived.writes)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """A batch allocates millions of acyclic objects: cycle collection was a sixth of it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def _batch_transaction(engine: Engine) -> Iterator[Connection]:
    """engine.begin(), but on SQLite without its row-by-row foreign key checks: a batch's row
    is written last, so until then every row is a pending violation, and SQLite then probes
    the child tables on every parent insert (a fifth of the batch's SQL time at 1M rows).
    The writer checks the same references itself (check_references); PostgreSQL keeps both."""
    with engine.connect() as connection:
        driver = connection.connection.driver_connection if (
            connection.dialect.name == "sqlite") else None
        if driver is not None:
            driver.execute("PRAGMA foreign_keys=OFF")  # a no-op inside a transaction
        try:
            with connection.begin():
                yield connection
        finally:
            if driver is not None:
                try:
                    driver.execute("PRAGMA foreign_keys=ON")
                    restored = driver.execute("PRAGMA foreign_keys").fetchone() == (1,)
                except sqlite3.Error:
                    restored = False
                if not restored:
                    connection.invalidate()  # never back to the pool with its checks off


def append_batch(
    engine: Engine,
    source_lines: IO[bytes] | Iterable[bytes | str],
    source: str,
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    on_bytes: Callable[[int], None] | None = None,
    registry: RegistryProvider = default_registry,
    parallel: bool | None = None,
    start: InputStart | None = None,
) -> BatchSummary:
    """Append one input as one batch. Raises BatchRejected, writing nothing, on any bad line.

    `registry` gives the teaching corpora and packs that teaching surfaces are checked against.
    `parallel`: read and hash the input in a second process (None: for a large file only).
    `start`: the input is the tail of a file whose lines before it the caller knows stored
    (numbered from start.line, its journal continuing at start.turn_id).
    """
    summary = BatchSummary(source=source)
    if parallel is None:
        parallel = worth_a_process(source_lines)
    with _batch_transaction(engine) as connection, _collector_paused():
        lock_log_tip(connection)
        batch_id = last_batch_id(connection) + 1

        def chunks() -> Iterator[RowChunk]:
            return row_chunks(source_lines, batch_id, registry, max_line_bytes, start)

        with insert_guards_liftable(connection) as guards:  # back before the batch's own rows
            writer = _BatchWriter(connection, summary, batch_id, guards, start)
            for chunk in (chunks_in_process(chunks) if parallel else chunks()):
                if on_bytes and chunk.bytes_read:
                    on_bytes(chunk.bytes_read)
                writer.add(chunk)
                if chunk.input_sha256 is not None:
                    summary.input_sha256 = chunk.input_sha256
            writer.flush()
            writer.count_sightings()
        if not summary.rejected:
            for line, reason in writer.journal.rewrites(connection, writer.turn_batches):
                summary.fail(line, reason)
        if summary.records == 0 and not summary.rejected:
            summary.fail(0, "no records: the input is empty")
        if summary.rejected:
            raise BatchRejected(summary)  # leaves the transaction rolled back
        if summary.new_rows == 0:  # all stored already: no batch row, no tree head, nothing
            earlier = batch_of_input(connection, summary.input_sha256, summary.record_type)
            summary.same_input = earlier is not None
            summary.already_in = [earlier] if earlier is not None else sorted(writer.holding)
            connection.rollback()
            return summary
        writer.close(summary.input_sha256)
        summary.batch_id = batch_id
    return summary


def append_rows_batch(connection: Connection, rows: Iterable[tuple[int, list[Any]]],
                      source: str, record_type: str, input_sha256: str) -> BatchSummary:
    """Rows derived from stored records (`(number, pending rows)` per record) appended as one
    batch on a connection already in its write transaction, as `append_batch` appends an
    input's: looked up, leaves, head, tallies, sighting counts, proved before COMMIT. No new
    row: no batch. A row stored with other content raises BatchRejected."""
    summary = BatchSummary(source=source)
    lock_log_tip(connection)
    batch_id = last_batch_id(connection) + 1
    with insert_guards_liftable(connection) as guards:
        writer = _BatchWriter(connection, summary, batch_id, guards)
        for number, pending in rows:
            chunk = RowChunk(rows=rows_to_append(number, pending, batch_id), records=1,
                             record_types={record_type}, lines=number)
            writer.add(chunk)
        writer.flush()
        writer.count_sightings()
    if summary.rejected:
        raise BatchRejected(summary)
    summary.input_sha256 = input_sha256
    if summary.new_rows:
        writer.close(input_sha256)
        summary.batch_id = batch_id
    return summary
