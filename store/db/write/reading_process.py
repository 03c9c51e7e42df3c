"""The rows an input contributes, with their leaf hashes, in chunks: the writer's work that
needs no database (read, parse, project, content ids, leaf hashes).

A large input is read in a second process (fork), so this work runs beside the writer's SQL
instead of before it; the chunks are the same either way. That process dies with the writer
(the kernel's parent-death signal, and EOF on the sentinel pipe it watches) and closes the
database sockets the fork shared with it first: it never holds the writer's connection.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import hashlib
import marshal
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, NamedTuple, cast

from store.db.write.batch_proof import AppendedEntry
from store.db.write.inserts import content_columns, values_of
from store.db.write.row_builders import InputStart, PendingRow, RecordReader, RegistryProvider
from store.db.write.tallies import Combo, combo_of
from store.errors import InputError, StoreError
from store.model.fields import RecordError
from store.model.jsonl import iter_json_lines
from store.model.merkle import leaf_hash
from store.model.tiles.layout import MAX_ENTRY_BYTES

CHUNK_ROWS = 5000
# Below this many input bytes a second process costs more than it saves.
PARALLEL_MIN_BYTES = 4 << 20
_QUEUE_CHUNKS = 4  # chunks read ahead of the writer: bounds the reader's lead and memory
_POLL_SECONDS = 1.0
_PR_SET_PDEATHSIG = 1  # linux/prctl.h

NUL_REFUSED = ("a text value holds U+0000 (NUL), which the store refuses "
               "(PostgreSQL cannot store it)")


class RowToAppend(NamedTuple):
    """One row as the reading process hands it to the writer: every per-row step that needs
    no database is done here, beside the writer, not in it."""

    line: int
    table: str
    key: tuple[Any, ...]
    content: tuple[Any, ...]  # the row's values of content_columns(table)
    leaf: bytes  # the leaf hash of the row as stored in this batch
    combo: Combo | None  # a residual's or sighting's tally combination


# Between the processes a row travels as a plain tuple of RowToAppend's fields: a NamedTuple
# pickles as its class and a Python-level __new__ call (5-10x a tuple's cost; unpickling a
# dataclass per row once cost a fifth of the writer's time). `named_rows` names them in C.
RowValues = tuple[int, str, tuple[Any, ...], tuple[Any, ...], bytes, Combo | None]
_named = cast(Callable[[RowValues], RowToAppend], functools.partial(tuple.__new__, RowToAppend))


def named_rows(rows: Iterable[RowValues]) -> Iterator[RowToAppend]:
    """The rows of a chunk as RowToAppend, without a Python call per row."""
    return map(_named, rows)


@dataclass
class RowChunk:
    """What the input gave since the previous chunk; the last one carries the input's hash."""

    rows: list[RowValues] = field(default_factory=list)  # RowToAppend's fields, unnamed
    failures: list[tuple[int, str]] = field(default_factory=list)
    records: int = 0
    record_types: set[str] = field(default_factory=set)
    lines: int = 0  # the number of the last line read so far
    bytes_read: int = 0
    input_sha256: str | None = None


class _HashingReader:
    """Hashes the input bytes as they are read, so the batch records what it came from."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.digest = hashlib.sha256()

    def readline(self, limit: int = -1) -> bytes:
        data: bytes = self._stream.readline(limit)
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


class EntryTooLarge(InputError):
    """A row whose log entry an entry bundle cannot carry (2-byte length prefix)."""


@functools.cache
def _entry_of(table: str) -> AppendedEntry:
    return AppendedEntry(table)


def rows_to_append(line: int, rows: list[PendingRow], batch_id: int) -> list[RowValues]:
    combos: dict[str, Combo] = {}  # a frame's residuals come before their occurrences
    found: list[RowValues] = []
    for pending in rows:
        table, row = pending.table, pending.row
        combo = None
        if table == "contract_residuals":
            combo = combos[row["residual_id"]] = combo_of(row)
        elif table == "residual_occurrences":
            combo = combos[row["residual_id"]]
        content = values_of(content_columns(table), row)
        # The leaf of exactly the values inserted (seq is not in an entry): the batch proof
        # reads back values, and equal values are equal leaves.
        entry = _entry_of(table)((0, batch_id, *content))
        if len(entry) > MAX_ENTRY_BYTES:
            raise EntryTooLarge(f"its {table} row's log entry is {len(entry)} bytes; a C2SP "
                                f"tlog-tiles entry bundle carries at most {MAX_ENTRY_BYTES}")
        found.append((line, table, pending.key, content, leaf_hash(entry), combo))
    return found


def row_chunks(source: IO[bytes] | Iterable[bytes | str], batch_id: int,
               registry: RegistryProvider, max_line_bytes: int,
               start: InputStart | None = None) -> Iterator[RowChunk]:
    """The input's rows (as stored in batch `batch_id`) and bad lines, chunk by chunk."""
    hashing = _HashingReader(as_stream(source))
    # The registry is looked up once, and only if needed.
    reader = RecordReader(functools.cache(registry), start)
    chunk = RowChunk()

    def count_bytes(size: int) -> None:
        chunk.bytes_read += size

    for line in iter_json_lines(hashing, max_line_bytes, count_bytes,
                                start.line if start else 1):
        chunk.lines = line.number
        if line.error is not None:
            chunk.failures.append((line.number, line.error))
            continue
        try:
            record_type, rows = reader.rows(line)
        except RecordError as exc:
            chunk.failures.append((line.number, str(exc)))
            continue
        # A decoded string holds U+0000 only if the line spells the escape (JSON forbids raw
        # control characters), so only such a line has its values searched.
        if "\\u0000" in line.text and _holds_nul(rows):
            # Refused on both backends: PostgreSQL text cannot hold it, and a SQLite store
            # holding it could never be copied there.
            chunk.failures.append((line.number, NUL_REFUSED))
            continue
        try:
            appended = rows_to_append(line.number, rows, batch_id)
        except EntryTooLarge as exc:
            chunk.failures.append((line.number, str(exc)))
            continue
        chunk.records += 1
        chunk.record_types.add(record_type)
        chunk.rows.extend(appended)
        if len(chunk.rows) >= CHUNK_ROWS:
            yield chunk
            chunk = RowChunk(lines=chunk.lines)
    chunk.input_sha256 = hashing.digest.hexdigest()
    yield chunk


def worth_a_process(source: IO[bytes] | Iterable[bytes | str]) -> bool:
    """True for a regular file of PARALLEL_MIN_BYTES or more, where fork is available."""
    if not hasattr(os, "fork"):
        return False
    try:
        status = os.fstat(source.fileno())  # type: ignore[union-attr]
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISREG(status.st_mode) and status.st_size >= PARALLEL_MIN_BYTES


class ReaderFailed(StoreError):
    """The reading process died without saying why."""


def _die_with_parent(parent: int) -> None:
    """Linux: the kernel kills this process when the writer that forked it dies, whatever
    killed it (kill -9 included). Elsewhere the parent's sentinel pipe is watched instead."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(0)


def _close_inherited_sockets() -> None:
    """A fork shares the writer's open database sockets (PostgreSQL): the child must never
    hold them, or a killed writer's session lives on in it, idle in transaction, holding the
    store's lock. Closing the descriptor here sends nothing to the server; the queue between
    the processes is made of pipes, not sockets."""
    try:
        descriptors = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: the kernel's death signal and the sentinel still end us
        return
    for descriptor in descriptors:
        try:
            if stat.S_ISSOCK(os.fstat(descriptor).st_mode):
                os.close(descriptor)
        except OSError:
            continue


def _parent_gone() -> bool:
    """EOF on the pipe whose other end only the writer holds: it has exited."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return False
    return bool(multiprocessing.connection.wait([parent.sentinel], timeout=0))


def chunk_sent(chunk: RowChunk) -> bytes | RowChunk:
    """The chunk as marshal bytes: its rows are tuples of str, int, bytes and None, which
    marshal writes at a third of pickle's cost (pickling the chunks was a quarter of the
    reading process's time). A value marshal cannot write leaves the chunk to pickle."""
    try:
        return marshal.dumps((chunk.rows, chunk.failures, chunk.records, chunk.record_types,
                              chunk.lines, chunk.bytes_read, chunk.input_sha256))
    except ValueError:
        return chunk


def chunk_received(item: bytes | RowChunk) -> RowChunk:
    if not isinstance(item, bytes):
        return item
    rows, failures, records, record_types, lines, bytes_read, input_sha256 = marshal.loads(item)
    return RowChunk(rows, failures, records, record_types, lines, bytes_read, input_sha256)


def _produce(chunks: Callable[[], Iterator[RowChunk]], out: Any, parent: int) -> None:
    _die_with_parent(parent)
    _close_inherited_sockets()
    gc.disable()  # no cycles here; collections were a tenth of the time
    try:
        for chunk in map(chunk_sent, chunks()):
            while True:
                try:
                    out.put(chunk, timeout=_POLL_SECONDS)
                    break
                except queue.Full:
                    if _parent_gone():
                        out.cancel_join_thread()  # nobody will read what it holds: exit
                        return
    except BaseException as exc:  # handed to the writer, which raises it in its own process
        out.put(exc)
        return
    out.put(None)


def chunks_in_process(chunks: Callable[[], Iterator[RowChunk]]) -> Iterator[RowChunk]:
    """The chunks `chunks()` yields, produced in a forked process while the caller writes."""
    context = multiprocessing.get_context("fork")
    out = context.Queue(maxsize=_QUEUE_CHUNKS)
    process = context.Process(target=_produce, args=(chunks, out, os.getpid()), daemon=True)
    process.start()
    try:
        while True:
            try:
                item = out.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                if process.is_alive():
                    continue
                try:  # what it put just before exiting may still be on its way
                    item = out.get(timeout=_POLL_SECONDS)
                except queue.Empty:
                    raise ReaderFailed("the input's reading process exited with code "
                                       f"{process.exitcode}") from None
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield chunk_received(item)
    finally:
        if process.is_alive():
            process.terminate()
        process.join()
        out.close()
