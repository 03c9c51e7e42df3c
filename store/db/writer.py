"""The append-only writer: one input file is one batch, written wholly or not at all."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

from sqlalchemy import Connection, Engine, select, tuple_

from store import __version__
from store.db.appends import batch_of_input, insert_rows, last_batch_id, lock_log_tip
from store.db.log import LogAppender
from store.db.rows import PendingRow, RecordReader, RegistryProvider, ledger_key
from store.db.tables import LEDGERED_KEYS, metadata
from store.db.tallies import BatchTally, Combo, combo_of
from store.model.fields import RecordError
from store.model.jsonl import MAX_LINE_BYTES, iter_json_lines
from store.model.teaching_surface import default_registry

CHUNK_ROWS = 5000
RESIDUAL_CACHE = 20_000
MAX_REPORTED_ERRORS = 20


@dataclass(frozen=True, slots=True)
class LineFailure:
    line: int
    reason: str


@dataclass
class TableCounts:
    new: int = 0
    present: int = 0


@dataclass
class BatchSummary:
    source: str
    input_sha256: str = ""
    lines: int = 0
    records: int = 0
    batch_id: int | None = None
    record_types: set[str] = field(default_factory=set)
    tables: dict[str, TableCounts] = field(
        default_factory=lambda: {t: TableCounts() for t in LEDGERED_KEYS if t != "ingest_batches"}
    )
    failures: list[LineFailure] = field(default_factory=list)
    failure_count: int = 0
    # Every row was stored already, so no batch was written: the earlier batch of the same
    # input (same_input), else the batches that hold its rows.
    already_in: list[int] = field(default_factory=list)
    same_input: bool = False

    @property
    def new_rows(self) -> int:
        return sum(c.new for c in self.tables.values())

    @property
    def present_rows(self) -> int:
        return sum(c.present for c in self.tables.values())

    @property
    def record_type(self) -> str:
        return "+".join(sorted(self.record_types))

    @property
    def rejected(self) -> bool:
        return self.failure_count > 0

    def fail(self, line: int, reason: str) -> None:
        self.failure_count += 1
        if len(self.failures) < MAX_REPORTED_ERRORS:
            self.failures.append(LineFailure(line, reason))

    def describe(self, failure: LineFailure) -> str:
        """`PATH:LINE: reason`, or `PATH: reason` for the input as a whole."""
        where = f"{self.source}:{failure.line}" if failure.line else self.source
        return f"{where}: {failure.reason}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "batch_id": self.batch_id,
            "input_sha256": self.input_sha256,
            "lines": self.lines,
            "records": self.records,
            "rejected": self.rejected,
            "rejected_lines": self.failure_count,
            "already_in": self.already_in,
            "same_input": self.same_input,
            "tables": {t: {"new": c.new, "present": c.present} for t, c in self.tables.items()},
            "errors": [self.describe(f) for f in self.failures],
        }


class BatchRejected(Exception):
    def __init__(self, summary: BatchSummary) -> None:
        super().__init__(f"{summary.source}: {summary.failure_count} bad line(s), nothing written")
        self.summary = summary


class _HashingReader:
    """Hashes the input bytes as they are read, so the batch records what it came from."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.digest = hashlib.sha256()

    def readline(self, limit: int = -1) -> bytes:
        data = self._stream.readline(limit)
        self.digest.update(data)
        return data


class _LineStream:
    """Adapts an iterable of lines (bytes or str) to readline()."""

    def __init__(self, lines: Iterable[bytes | str]) -> None:
        self._lines: Iterator[bytes | str] = iter(lines)
        self._rest = b""

    def readline(self, limit: int = -1) -> bytes:
        if not self._rest:
            item = next(self._lines, b"")
            self._rest = item.encode("utf-8") if isinstance(item, str) else item
            if self._rest and not self._rest.endswith(b"\n"):
                self._rest += b"\n"
        cut = len(self._rest) if limit < 0 else min(limit, len(self._rest))
        data, self._rest = self._rest[:cut], self._rest[cut:]
        return data


def as_stream(source: IO[bytes] | Iterable[bytes | str]) -> Any:
    return source if hasattr(source, "readline") else _LineStream(source)


def _holds_nul(rows: list[PendingRow]) -> bool:
    return any(isinstance(v, str) and "\x00" in v for p in rows for v in p.row.values())


def _content(row: Mapping[Any, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ("seq", "batch_id")}


class _BatchWriter:
    def __init__(self, connection: Connection, summary: BatchSummary, batch_id: int) -> None:
        self.connection = connection
        self.summary = summary
        self.batch_id = batch_id
        self.appender = LogAppender(connection)
        self.pending: list[tuple[int, PendingRow]] = []
        # Residual ids repeat across frames: remember their stored content, boundedly.
        self.residuals: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.tally = BatchTally()
        self.holding: set[int] = set()  # the batches of the rows found already stored

    def add(self, line: int, rows: list[PendingRow]) -> None:
        self.pending.extend((line, row) for row in rows)
        if len(self.pending) >= CHUNK_ROWS:
            self.flush()

    def _stored(self, table: str, keys: set[tuple[Any, ...]]) -> dict[tuple[Any, ...], Any]:
        if not keys:
            return {}
        t = metadata.tables[table]
        names = LEDGERED_KEYS[table]
        key_columns = [t.c[name] for name in names]
        if len(key_columns) == 1:
            condition = key_columns[0].in_([k[0] for k in keys])
        else:
            condition = tuple_(*key_columns).in_(list(keys))
        rows = self.connection.execute(select(t).where(condition)).mappings().all()
        self.holding.update(r["batch_id"] for r in rows)
        return {tuple(r[n] for n in names): _content(r) for r in rows}

    def _lookup(self) -> dict[str, dict[tuple[Any, ...], Any]]:
        keys: dict[str, set[tuple[Any, ...]]] = {t: set() for t in self.summary.tables}
        for _, p in self.pending:
            keys[p.table].add(p.key)
        stored = {
            table: self._stored(table, keys[table])
            for table in ("contract_assessments", "surface_records", "surface_occurrences",
                          "turns")
        }
        # An occurrence's key starts with its assessment's id: a new assessment has none stored.
        stored["residual_occurrences"] = self._stored(
            "residual_occurrences",
            {k for k in keys["residual_occurrences"] if (k[0],) in stored["contract_assessments"]},
        )
        if len(self.residuals) > RESIDUAL_CACHE:
            self.residuals.clear()
        self.residuals.update(self._stored(
            "contract_residuals", keys["contract_residuals"] - self.residuals.keys()))
        stored["contract_residuals"] = self.residuals
        return stored

    def flush(self) -> None:
        if not self.pending or self.summary.rejected:
            self.pending.clear()
            return
        stored = self._lookup()
        inserts: dict[str, list[dict[str, Any]]] = {table: [] for table in stored}
        # A frame's occurrences and their residuals arrive together, so within one chunk.
        combos: dict[str, Combo] = {
            p.row["residual_id"]: combo_of(p.row)
            for _, p in self.pending if p.table == "contract_residuals"
        }
        for line, p in self.pending:
            counts = self.summary.tables[p.table]
            existing = stored[p.table].get(p.key)
            if existing is not None:
                if existing != p.row:
                    self.summary.fail(
                        line,
                        f"{p.table} {ledger_key(p.key)} is already stored with different content",
                    )
                    break
                counts.present += 1
                continue
            row = {**p.row, "batch_id": self.batch_id}
            self.appender.append(p.table, row)
            inserts[p.table].append(row)
            stored[p.table][p.key] = p.row  # later sightings in this batch are "present"
            counts.new += 1
            if p.table == "contract_residuals":
                self.tally.add(combos[p.row["residual_id"]], residuals=1)
            elif p.table == "residual_occurrences":
                self.tally.add(combos[p.row["residual_id"]], occurrences=1)
        self.pending.clear()
        if self.summary.rejected:
            return
        for table, rows in inserts.items():
            insert_rows(self.connection, table, rows)
        insert_rows(self.connection, "log_subtrees", self.appender.subtree_rows())

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
        self.appender.append("ingest_batches", row)  # the batch's own row is its last leaf
        insert_rows(self.connection, "ingest_batches", [row])
        insert_rows(self.connection, "log_subtrees", self.appender.subtree_rows())
        insert_rows(self.connection, "tree_heads", [self.appender.head_row(self.batch_id)])
        insert_rows(self.connection, "residual_tallies", self.tally.rows(self.batch_id))


def append_batch(
    engine: Engine,
    source_lines: IO[bytes] | Iterable[bytes | str],
    source: str,
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    on_bytes: Callable[[int], None] | None = None,
    registry: RegistryProvider = default_registry,
) -> BatchSummary:
    """Append one input as one batch. Raises BatchRejected, writing nothing, on any bad line.

    `registry` gives the teaching corpora and packs that teaching surfaces are checked against.
    """
    summary = BatchSummary(source=source)
    hashing = _HashingReader(as_stream(source_lines))
    registry = functools.cache(registry)  # looked up once per batch, and only if needed
    with engine.begin() as connection:
        lock_log_tip(connection)
        batch_id = last_batch_id(connection) + 1
        writer = _BatchWriter(connection, summary, batch_id)
        reader = RecordReader(registry)
        for line in iter_json_lines(hashing, max_line_bytes, on_bytes):
            summary.lines = line.number
            if line.error is not None:
                summary.fail(line.number, line.error)
                continue
            try:
                record_type, rows = reader.rows(line)
            except RecordError as exc:
                summary.fail(line.number, str(exc))
                continue
            if _holds_nul(rows):
                # Refused on both backends: PostgreSQL text cannot hold it, and a SQLite store
                # holding it could never be copied there.
                summary.fail(line.number, "a text value holds U+0000 (NUL), which the store "
                                          "refuses (PostgreSQL cannot store it)")
                continue
            summary.records += 1
            summary.record_types.add(record_type)
            if not summary.rejected:
                writer.add(line.number, rows)
        writer.flush()
        if summary.records == 0 and not summary.rejected:
            summary.fail(0, "no records: the input is empty")
        if summary.rejected:
            raise BatchRejected(summary)  # leaves the transaction rolled back
        summary.input_sha256 = hashing.digest.hexdigest()
        if summary.new_rows == 0:  # all stored already: no batch row, no tree head, nothing
            earlier = batch_of_input(connection, summary.input_sha256, summary.record_type)
            summary.same_input = earlier is not None
            summary.already_in = [earlier] if earlier is not None else sorted(writer.holding)
            connection.rollback()
            return summary
        writer.close(summary.input_sha256)
        summary.batch_id = batch_id
    return summary
