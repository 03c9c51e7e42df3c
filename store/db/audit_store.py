"""AuditStore: the one object that opens a store, read-only or for writing, and runs every
query on it: the Python API of the CLI, the server and library users.

The datasette pattern: it owns the engines; a query function runs on a connection under a
deadline that aborts runaway SQL, in a worker thread when called from the event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import IO, Concatenate, ParamSpec, TypeVar

import anyio.to_thread
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import ArgumentError, DatabaseError
from sqlalchemy.pool import QueuePool

from store.db.log.kept_checkpoints import (
    KeptCheckpoint,
    kept_checkpoint,
    next_checkpoint_id,
)
from store.db.log.stored_log import StoredLog, TreeHead, latest_head, stored_origin
from store.db.planner_statistics import analyze_grown_tables
from store.db.queries import LedgerStatus, QueryTimeout, ledger_status
from store.db.queries.ledger import provisional_origin
from store.db.read_threads import DEFAULT_READ_THREADS, FIRST_TRY_SECONDS, ReadThreads
from store.db.schema.engine import (
    create_store_engine,
    opened_immutable,
    resolve_url,
    settle_sqlite,
    sqlite_path,
    whole_file_read,
)
from store.db.schema.schema_version import ensure_at_head
from store.db.schema.wal_file import wal_problem
from store.db.time_limit import DEFAULT_TIME_LIMIT, time_limit
from store.db.verify.check_processes import CheckProcesses, unreadable_store
from store.db.verify.derived_record import DerivedSums
from store.db.verify.problems import Problem
from store.db.verify.store_checks import VerifyReport, verify_store
from store.db.write.batch_summary import BatchSummary
from store.db.write.inserts import insert_rows, lock_log_tip
from store.db.write.origin_batch import log_origin_choice
from store.db.write.row_builders import InputStart, RegistryProvider
from store.db.write.writer import append_batch
from store.errors import StoreError
from store.model.checkpoint import Checkpoint, NoteSignature, SignerKey, VerifierKey, sign
from store.model.cosignature import check_note, cosignature_time, is_witness_line
from store.model.teaching_surface import default_registry

P = ParamSpec("P")
R = TypeVar("R")


class AuditStore:
    def __init__(self, url: str, engine: Engine, *, read_only: bool,
                 time_limit: float = DEFAULT_TIME_LIMIT,
                 read_threads: int = DEFAULT_READ_THREADS) -> None:
        if not 0 < time_limit < float("inf"):
            raise ValueError(f"time limit: must be a positive number of seconds, got {time_limit}")
        self.url = url
        self.engine = engine
        self.read_only = read_only
        self.time_limit = time_limit
        self.reads = ReadThreads(read_threads)
        self._write_engine: Engine | None = None
        # A SQLite reader's pooled connections: a quick read may try on the loop's thread.
        self._pool: QueuePool | None = engine.pool if (
            read_only and engine.dialect.name == "sqlite" and isinstance(engine.pool, QueuePool)
        ) else None
        self._probe_engine: Engine | None = None

    @classmethod
    def open(cls, db: str | None = None, *, read_only: bool = False,
             time_limit: float = DEFAULT_TIME_LIMIT,
             read_threads: int = DEFAULT_READ_THREADS) -> AuditStore:
        """Open the store at `db` (path or URL). A writable open creates a new store at head;
        a read-only one (SQLite mode=ro) raises StoreError if there is none. `time_limit`:
        seconds for the queries of one request (`deadline`); `read_threads`: the reads `run`
        lets run at once (read_threads.py)."""
        if not 0 < time_limit < float("inf"):
            raise ValueError(f"time limit: must be a positive number of seconds, got {time_limit}")
        reads = ReadThreads(read_threads)  # a bad count: an error before anything is opened
        url = resolve_url(db)
        try:
            path = sqlite_path(url)
            engine = create_store_engine(url, read_only=read_only)
        except (ArgumentError, ImportError) as exc:
            # An unknown dialect (NoSuchModuleError is an ArgumentError) or a missing driver.
            raise StoreError(f"{url}: not a database this core-audit can open: {exc}") from exc
        if read_only and path is not None and not path.exists():
            engine.dispose()
            raise StoreError(f"{path}: no such store (create one with `core-audit ingest`)")
        try:
            ensure_at_head(url, engine, create=not read_only)
        except DatabaseError as exc:  # also "file is not a database", not only operational
            engine.dispose()
            raise StoreError(f"{path or url}: cannot open: {exc.orig}") from exc
        except UnicodeDecodeError as exc:  # SQLite: sqlite_master's text damaged
            engine.dispose()
            raise StoreError(f"{path or url}: cannot open: its schema holds text that is not "
                             f"UTF-8 ({exc.reason} at byte {exc.start}): damaged") from exc
        except BaseException:
            engine.dispose()
            raise
        store = cls(url, engine, read_only=read_only, time_limit=time_limit,
                    read_threads=reads.count)
        if read_only:  # the server's health probe: a connection the request pool cannot starve
            store._probe_engine = create_store_engine(url, read_only=True, pooled=False)
        return store

    def deadline(self) -> float:
        """A deadline `time_limit` from now, for all the queries of one request."""
        return time.monotonic() + self.time_limit

    def execute(self, query: Callable[Concatenate[Connection, P], R],
                *args: P.args, **kwargs: P.kwargs) -> R:
        """Run `query(connection, ...)` here, now, under a fresh deadline."""
        return self.execute_until(self.deadline(), query, *args, **kwargs)

    def execute_until(self, deadline: float, query: Callable[Concatenate[Connection, P], R],
                      *args: P.args, **kwargs: P.kwargs) -> R:
        with self.engine.connect() as connection, time_limit(connection, deadline):
            return query(connection, *args, **kwargs)

    async def run(self, deadline: float, query: Callable[Concatenate[Connection, P], R],
                  *args: P.args, **kwargs: P.kwargs) -> R:
        """`execute_until` in a worker thread, so the event loop keeps serving: one of the
        store's `reads`, waited for until `deadline` (QueryTimeout past it)."""

        def call() -> R:
            return self.execute_until(deadline, query, *args, **kwargs)

        async with self.reads.turn(deadline):
            return await anyio.to_thread.run_sync(call)

    async def run_quick(self, deadline: float, query: Callable[Concatenate[Connection, P], R],
                        *args: P.args, **kwargs: P.kwargs) -> R:
        """`run` for a read whose Python work is bounded (a page, a record): on a SQLite
        reader first here on the event loop's thread, cut short after FIRST_TRY_SECONDS
        (read_threads.py), and only if it was, `run` again in a worker thread."""
        if self._first_try_here():
            try:
                return self.execute_until(min(deadline, time.monotonic() + FIRST_TRY_SECONDS),
                                          query, *args, **kwargs)
            except QueryTimeout:
                if time.monotonic() >= deadline:
                    raise
        return await self.run(deadline, query, *args, **kwargs)

    def _first_try_here(self) -> bool:
        """Whether a read may first run on the event loop's thread: a SQLite reader's, with a
        pooled connection free (taking one must not wait: the loop would wait with it)."""
        return self._pool is not None and self._pool.checkedout() < self._pool.size()

    def probe(self) -> LedgerStatus:
        """The newest tree head, read on a connection of its own, outside the pool: it answers
        while requests hold every pooled connection, and fails once the store is unreadable."""
        engine = self._probe_engine or self.engine
        with engine.connect() as connection, time_limit(connection, self.deadline()):
            return ledger_status(connection)

    def ingest(
        self,
        lines: IO[bytes] | Iterable[bytes | str],
        source: str = "<api>",
        *,
        on_bytes: Callable[[int], None] | None = None,
        registry: RegistryProvider = default_registry,
        parallel: bool | None = None,
        start: InputStart | None = None,
    ) -> BatchSummary:
        """Append `lines` (a binary stream or lines) as one batch; BatchRejected writes nothing.

        Teaching surfaces are re-derived against `registry()` (default: the located data).
        `parallel`: read the input in a second process (default: for a file of 4 MiB or more).
        `start`: `lines` is a file's tail, its earlier lines stored (append_batch).
        """
        summary = append_batch(self.write_engine(), lines, source, on_bytes=on_bytes,
                               registry=registry, parallel=parallel, start=start)
        if summary.batch_id is not None:
            settle_sqlite(self.write_engine(), f"batch {summary.batch_id} ({source})")
            analyze_grown_tables(self.write_engine())
        return summary

    def write_engine(self) -> Engine:
        """The engine whose transactions take the write lock (SQLite: BEGIN IMMEDIATE)."""
        if self.read_only:
            raise StoreError("this store was opened read-only")
        if self._write_engine is None:
            self._write_engine = create_store_engine(self.url, write=True)
        return self._write_engine

    def verify(self, checkpoint: Checkpoint | None = None, *, quick: bool = False,
               jobs: int = 1, since: Checkpoint | None = None,
               since_sums: DerivedSums | None = None, record: bool = False) -> VerifyReport:
        """StoreError when the database cannot be read through (a malformed page, say).
        SQLite: frames of the -wal SQLite will not replay are its first problem. `jobs` > 1:
        the O(n) checks run in that many worker processes (the same report). `since`: a tree
        an earlier full verify recomputed (its record, checked by the caller): only what came
        after it is checked (verify_store), and the derived rows under it must still make
        `since_sums` (its record's). `record`: an intact report carries what a record keeps."""
        path = sqlite_path(self.url)
        lost = wal_problem(path) if path is not None else None
        try:
            with self.engine.connect() as connection, \
                    CheckProcesses(self.url, jobs,
                                   immutable=opened_immutable(self.engine) is not None
                                   ) as processes, whole_file_read(connection):
                report = verify_store(connection, checkpoint, quick=quick,
                                      heavy=processes if jobs > 1 else None, since=since,
                                      since_sums=since_sums, record=record)
        except (DatabaseError, UnicodeDecodeError) as exc:
            raise unreadable_store(self.url, exc) from exc
        if lost is not None:
            report.problems.insert(0, Problem(None, f"{path}-wal", "", lost))
        return report

    def tree_head(self) -> TreeHead:
        with self.engine.connect() as connection:
            return latest_head(connection)

    def origin(self) -> str | None:
        """StoreError when log_origin cannot be read (dropped, say) or holds two rows."""
        try:
            with self.engine.connect() as connection:
                return stored_origin(connection)
        except DatabaseError as exc:
            where = sqlite_path(self.url) or self.url
            raise StoreError(f"{where}: log_origin cannot be read: {exc.orig}") from exc

    def checkpoint(self, origin: str | None = None) -> Checkpoint:
        """The newest tree head as a C2SP checkpoint. The store's origin is chosen once, on
        purpose: the first `origin` given is kept and another one refused. Until then the
        checkpoint carries `provisional_origin()` and nothing is written."""
        stored = self.origin()
        if stored is not None:
            if origin is not None and origin != stored:
                raise StoreError(f"this store's checkpoints have origin {stored!r}, not "
                                 f"{origin!r}")
            origin = stored
        head = self.tree_head()
        if stored is None and origin is None:
            return Checkpoint(origin=self.provisional_origin(), size=head.size, root=head.root)
        if stored is None:
            assert origin is not None
            Checkpoint(origin=origin, size=head.size, root=head.root)  # refuses a bad origin
            with self.write_engine().begin() as connection:
                lock_log_tip(connection)
                if stored_origin(connection) is None:
                    # logged as a leaf first: the choice is part of every later signed tree
                    log_origin_choice(connection, origin)
                    insert_rows(connection, "log_origin", [{"origin": origin}])
                origin = stored_origin(connection)
                head = latest_head(connection)  # the origin's own leaf included
            settle_sqlite(self.write_engine())
        assert origin is not None
        return Checkpoint(origin=origin, size=head.size, root=head.root)

    def keep_checkpoint(self, signers: list[SignerKey], origin: str | None = None
                        ) -> KeptCheckpoint:
        """Sign the newest tree head with every key of `signers` (several while rotating keys)
        and keep the note in the store's `checkpoints`; the root is recomputed from the stored
        log and the kept row read back and checked before COMMIT."""
        if not signers:
            raise StoreError("a kept checkpoint needs at least one signer key")
        if origin is None and self.origin() is None:
            raise StoreError("this store's origin is not chosen yet: sign only under the "
                             "origin it will keep, chosen once with --origin")
        origin = self.checkpoint(origin).origin  # keeps a newly chosen origin
        with self.write_engine().begin() as connection:
            lock_log_tip(connection)
            head = latest_head(connection)
            if StoredLog(connection).root(head.size) != head.root:
                raise StoreError(f"the stored log does not make the tree head of size "
                                 f"{head.size}; run `core-audit verify`")
            note = sign(Checkpoint(origin, head.size, head.root), *signers)
            checkpoint_id = next_checkpoint_id(connection)
            insert_rows(connection, "checkpoints", [{
                "checkpoint_id": checkpoint_id, "tree_size": head.size,
                "root_hash": head.root_hex, "signers": " ".join(k.name for k in signers),
                "note": note}])
            kept = kept_checkpoint(connection, checkpoint_id)
            if kept is None or kept.note != note or check_note(
                    kept.note, [k.verifier for k in signers]).checkpoint.size != head.size:
                raise StoreError("the kept checkpoint does not read back as signed; "
                                 "nothing kept")
        settle_sqlite(self.write_engine())
        return kept

    def add_cosignatures(self, checkpoint_id: int, lines: list[NoteSignature],
                         witnesses: list[VerifierKey]) -> KeptCheckpoint:
        """Append the cosignature lines of `witnesses` to kept checkpoint `checkpoint_id`,
        each checked against its body first; a witness already kept is left as it is."""
        with self.write_engine().begin() as connection:
            kept = kept_checkpoint(connection, checkpoint_id)
            if kept is None:
                raise StoreError(f"no kept checkpoint {checkpoint_id}")
            body = kept.signed_note[:kept.signed_note.index("\n\n") + 1]
            rows, seen = [], set(kept.cosigners)
            for line in lines:
                # a cosignature/v1 line (key ID over 0x04) or, for a witness given by a plain
                # 0x01 key, its Ed25519 note signature line
                witness = next((w for w in witnesses if is_witness_line(line, w)), None)
                if witness is None:
                    raise StoreError(f"cosignature by {line.name}: not one of the witness "
                                     "keys given")
                cosignature_time(line, body, witness)  # SignatureError if it does not verify
                if line.name not in seen:
                    seen.add(line.name)
                    rows.append({"checkpoint_id": checkpoint_id, "witness": line.name,
                                 "line": line.line()})
            if rows:
                insert_rows(connection, "checkpoint_cosignatures", rows)
            cosigned = kept_checkpoint(connection, checkpoint_id)
            if cosigned is None or not {r["line"] for r in rows} <= set(
                    cosigned.cosignature_lines):
                raise StoreError("the cosignatures do not read back as written; nothing kept")
        settle_sqlite(self.write_engine())
        return cosigned
    def provisional_origin(self) -> str:
        """The origin a checkpoint carries before one is chosen: `core-audit/` and the first
        tree head's root (hex, 16 digits; `empty` without one). Stable as the log grows, so
        choosing it later keeps the checkpoints printed so far valid."""
        with self.engine.connect() as connection:
            return provisional_origin(connection)

    def close(self) -> None:
        for engine in (self.engine, self._write_engine, self._probe_engine):
            if engine is not None:
                engine.dispose()

    def __enter__(self) -> AuditStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
