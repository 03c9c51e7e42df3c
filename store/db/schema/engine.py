"""The one engine factory: URLs, SQLite pragmas, read-only connections, transactions.

Every connection to a store is made here, so pragmas, locking and read-only mode are
decided in one place (the datasette pattern).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Connection, CursorResult, Engine, Executable, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from store.db.schema.wal_file import refuse_lossy_wal
from store.errors import StoreError

DEFAULT_PATH = "core-audit.db"
ENV_VAR = "CORE_AUDIT_DB"
# Set to 1: open SQLite stores read-only as immutable even where they are writable.
IMMUTABLE_ENV_VAR = "CORE_AUDIT_IMMUTABLE"
BUSY_TIMEOUT_MS = 60_000
# A writer queues behind another writer's whole file (one transaction): wait much longer.
WRITE_BUSY_TIMEOUT_MS = 30 * 60_000
WRITE_CACHE_KIB = 64 * 1024
# A reader of the whole file (verify) maps it into memory: SQLite then reads its pages in
# place, not copied out by a read() each; integrity_check took 16.3 -> 9.6 s CPU at 1M
# occurrences, the foreign keys 4.9 -> 3.6 (issue 34). SQLite caps it at its compile-time
# maximum (2 GiB by default) and reads any larger file's rest as before.
SCAN_MMAP_BYTES = 1 << 40
# The page size a new SQLite store is made with (SQLite's default: 4 KiB). A batch into a
# large store changes pages all over its indexes (their keys are sha256 hex), and each
# changed page is a -wal frame that every later read of a page looks for: at 10M
# occurrences a third of the writer's CPU was SQLite's lookup of frames
# (docs/benchmarks.md). Four times fewer, larger pages: fewer frames to write and to look
# through. SQLite fixes it with the first table; a store made before keeps its own.
NEW_STORE_PAGE_BYTES = 16384
# A reader's page cache, per connection. SQLite's default is 2,000 KiB: 125 pages of 16 KiB,
# fewer than one 100-row page of residuals touches (each row and its sighting count on a
# page of its own), so every such read copied its pages in again: 0.40 vs 0.19 ms for the
# statement at 1M occurrences (docs/benchmarks.md). Memory is taken as pages are read.
READ_CACHE_KIB = 16 * 1024

_SQLITE_PRAGMAS = (
    "PRAGMA synchronous=FULL",
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
    "PRAGMA foreign_keys=ON",
    "PRAGMA recursive_triggers=ON",
)


def resolve_url(db: str | None = None) -> str:
    """`--db` value, else $CORE_AUDIT_DB, else ./core-audit.db; a bare path means SQLite."""
    value = db or os.environ.get(ENV_VAR) or DEFAULT_PATH
    if "://" in value:
        return value
    return f"sqlite:///{Path(value).expanduser().resolve()}"


def sqlite_path(url: str) -> Path | None:
    """The file behind a SQLite URL, or None for other backends and in-memory databases."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def create_store_engine(url: str, *, read_only: bool = False, write: bool = False,
                        pooled: bool = True, immutable: bool | None = None,
                        scan: bool = False) -> Engine:
    """An engine for `url`. `write` takes the write lock at BEGIN; `read_only` cannot write;
    not `pooled`: every connect opens the store anew (a health check sees it as it is now);
    `immutable` (with `read_only`): True or False opens a SQLite file immutable or not
    whatever read_only_mode says (a verify worker opens the store as the process that started
    it did: the fork server's environment may be older or newer); None: read_only_mode
    decides. `scan`: a reader of the whole file (SQLite: mapped into memory, see
    whole_file_read)."""
    parsed = make_url(url)
    pool: dict[str, Any] = {} if pooled else {"poolclass": NullPool}
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url, read_only=read_only, write=write, pool=pool,
                              immutable=immutable, scan=scan)
    return _server_engine(url, read_only=read_only, pool=pool)


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK)  # False on a read-only mount, even for root


def read_only_mode(path: Path, *, writable: Callable[[Path], bool] = _writable
                   ) -> Literal["ro", "immutable"]:
    """How to open `path` read-only: `immutable` where this process cannot write the file or
    its folder (read-only media: SQLite could not create its -shm there, and must neither
    lock nor write), or when CORE_AUDIT_IMMUTABLE=1. An immutable open does not read the
    -wal: StoreError when that file holds transactions the open would miss."""
    forced = os.environ.get(IMMUTABLE_ENV_VAR) == "1"
    if not path.exists() or (not forced and writable(path) and writable(path.parent)):
        return "ro"
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    if wal.exists() and wal.stat().st_size > 0:
        if not forced and (shm.exists() or writable(path.parent)):
            return "ro"  # SQLite reads the -wal read-only through an -shm it has or can make
        raise StoreError(
            f"{path}: its write-ahead log {wal.name} holds transactions that are not in the "
            f"file yet, and a read-only{'' if forced else ' folder'} open cannot read them "
            f"without {shm.name}: copy {wal.name} and {shm.name} along with the file, or "
            f"checkpoint the store where it is writable first (sqlite3 {path.name} "
            f"'PRAGMA wal_checkpoint(TRUNCATE)'), or open a writable copy of all three files")
    return "immutable"


def opened_immutable(engine: Engine) -> Path | None:
    """The file behind `engine` if it was opened immutable (read_only_mode), else None."""
    if engine.url.get_backend_name() != "sqlite" or engine.url.query.get("immutable") != "1":
        return None
    return Path(str(engine.url.database).removeprefix("file:"))


@contextmanager
def whole_file_read(connection: Connection) -> Iterator[None]:
    """`connection` set up to read the whole file within (SQLite: mapped, SCAN_MMAP_BYTES),
    as before after (a pooled connection goes back to the pool as it came)."""
    if connection.dialect.name != "sqlite":
        yield
        return
    before = connection.exec_driver_sql("PRAGMA mmap_size").scalar()
    connection.exec_driver_sql(f"PRAGMA mmap_size={SCAN_MMAP_BYTES}").close()
    try:
        yield
    finally:
        # Never in the way of the error that ended the read, if one did.
        with suppress(DBAPIError):
            connection.exec_driver_sql(f"PRAGMA mmap_size={int(before or 0)}").close()


def _sqlite_engine(url: str, *, read_only: bool, write: bool, pool: dict[str, Any],
                   immutable: bool | None, scan: bool) -> Engine:
    path = sqlite_path(url)
    if not read_only and path is not None:
        # Before any connection: SQLite would drop what it cannot replay, and a write reset
        # the -wal over it.
        refuse_lossy_wal(path)
    if read_only and path is not None:
        # mode=ro: the driver itself refuses writes, whatever SQL a resolver sends;
        # immutable=1 also takes no lock and creates no -wal or -shm beside the file.
        if immutable is None:
            immutable = read_only_mode(path) == "immutable"
        mode = "mode=ro&immutable=1" if immutable else "mode=ro"
        url = f"sqlite:///file:{path}?{mode}&uri=true"
    engine = create_engine(url, **pool)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # SQLAlchemy's recipe: stop the driver's own transaction handling, emit BEGIN below.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        # No journal_mode here: switching to WAL rewrites the file's header, and a command
        # that refuses must leave the file byte-identical (settle_sqlite, once it wrote).
        for pragma in _SQLITE_PRAGMAS:
            cursor.execute(pragma)
        if not read_only:
            # Only a database not yet created takes it (before its first table); a store's
            # page size is its own, and this changes no byte of it.
            cursor.execute(f"PRAGMA page_size={NEW_STORE_PAGE_BYTES}")
        if read_only:
            cursor.execute(f"PRAGMA cache_size=-{READ_CACHE_KIB}")
        if write:
            # Random sha256 keys touch index pages all over the file: keep them in memory.
            cursor.execute(f"PRAGMA cache_size=-{WRITE_CACHE_KIB}")
            # The insert guards give every row a statement journal; on disk it dominated
            # ingest (perf-notes.md: 17% of samples in pwrite to a temp file).
            cursor.execute("PRAGMA temp_store=MEMORY")
            cursor.execute(f"PRAGMA busy_timeout={WRITE_BUSY_TIMEOUT_MS}")
        if scan:
            cursor.execute(f"PRAGMA mmap_size={SCAN_MMAP_BYTES}").fetchall()
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # IMMEDIATE takes the write lock up front, so two writers queue instead of deadlocking.
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


SETTLE_BUSY_TIMEOUT_MS = 2_000


class WalNotFolded(StoreError):
    """A write committed, but the step that folds the -wal into the file failed: the write
    lives in the -wal alone until a later fold succeeds."""


# SQLite's primary result codes a fold may meet while readers hold old snapshots: frames
# they still need stay in the -wal and the last connection to close moves them. Any other
# error (disk full, I/O) is not "busy" and is reported.
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6


def settle_sqlite(engine: Engine, written: str = "the write") -> None:
    """After a write has committed: the store in WAL mode (readers then never wait for a
    writer), and the WAL checkpointed into the file and truncated, so a closed store is one
    self-contained file (a damaged -wal makes SQLite drop committed transactions silently).
    A reader still holding an old snapshot keeps some frames in the -wal: SQLite moves them
    into the file when the last connection closes. WalNotFolded, naming `written`, when the
    fold fails for another reason (a full disk). No-op on other backends."""
    path = sqlite_path(str(engine.url)) if engine.url.get_backend_name() == "sqlite" else None
    if path is None:
        return
    try:
        # A connection of its own: a pooled one may still hold a statement of the write.
        connection = sqlite3.connect(path, timeout=SETTLE_BUSY_TIMEOUT_MS / 1000,
                                     isolation_level=None)
    except sqlite3.Error as exc:
        raise _not_folded(path, written, exc) from exc
    try:
        connection.execute("PRAGMA journal_mode=WAL").fetchall()
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in (_SQLITE_BUSY, _SQLITE_LOCKED):
            raise _not_folded(path, written, exc) from exc
    finally:
        connection.close()


def _not_folded(path: Path, written: str, exc: sqlite3.Error) -> WalNotFolded:
    return WalNotFolded(
        f"{path}: {written} is committed, but only in {path.name}-wal: folding the WAL into "
        f"the file failed ({exc}). Keep {path.name}-wal beside the file (copy or move both, "
        "never the file alone); once the cause is fixed (free disk space, say), run "
        f"`sqlite3 {path} 'PRAGMA wal_checkpoint(TRUNCATE)'` (or any core-audit command that "
        "writes) and `core-audit verify`")


def _server_engine(url: str, *, read_only: bool, pool: dict[str, Any]) -> Engine:
    options: dict[str, Any] = {}
    if read_only:
        options["postgresql_readonly"] = True
    return create_engine(url, execution_options=options, pool_pre_ping=True, **pool)


LEDGER_LOCK_KEY = 0x636F7265  # "core": the advisory lock that serializes log appends
# The lock's second key: the store's schema. Advisory locks are per database, and a database
# may hold several stores (one a schema): each store's writers queue only behind their own.
_LOCK_LOG_TIP = text(
    "SELECT pg_advisory_xact_lock(:key, hashtext(coalesce(current_schema(), '')))")


def lock_log_tip(connection: Connection) -> None:
    """One writer at a time extends the log; SQLite's BEGIN IMMEDIATE already ensures it."""
    if connection.dialect.name == "postgresql":
        connection.execute(_LOCK_LOG_TIP, {"key": LEDGER_LOCK_KEY})


def row_chunks_read(connection: Connection, statement: Executable, size: int
                    ) -> Iterator[Sequence[Sequence[Any]]]:
    """`statement`, run now, its rows `size` at a time. SQLite: the driver's own row tuples
    (a Boolean as 0 or 1), its cursor stepping through the rows as read: SQLAlchemy's Row per
    row was most of an export's time and a fifth of the batch proof's. Elsewhere: SQLAlchemy's
    rows from a server-side cursor."""
    if connection.dialect.name != "sqlite":
        return connection.execute(statement.execution_options(yield_per=size)).partitions()
    return _fetched(connection.execute(statement), size)


def _fetched(result: CursorResult[Any], size: int) -> Iterator[Sequence[Sequence[Any]]]:
    try:
        while rows := result.cursor.fetchmany(size):
            yield rows
    finally:
        result.close()
