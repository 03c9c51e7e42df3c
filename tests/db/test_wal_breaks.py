"""`verify` reads a store's -wal itself (issue 21): one flipped byte makes SQLite drop every
frame after it without a word; verify names them instead of reporting fewer leaves intact."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli
from store_support import query, verify_both_ways

from store.db.schema.wal_file import WAL_HEADER_BYTES, scan_wal

JOURNAL = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"
PAGE = 16384  # a new store's pages (engine.NEW_STORE_PAGE_BYTES): 0x00004000 in bytes 8-11
FRAME = 24 + PAGE


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A live store: a reader holds a snapshot of batch 1, so batches 2-4 stay in the -wal.
    One for the module (each ingest waits out the writer's 2 s fold against the reader);
    every test reads it or a copy of it."""
    db = tmp_path_factory.mktemp("live") / "audit.db"
    assert cli("ingest", "--db", db, EXAMPLE_FILES[0]).exit_code == 0
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN")
    holder.execute("SELECT count(*) FROM ingest_batches").fetchone()
    for path in (*EXAMPLE_FILES[1:], JOURNAL):
        assert cli("ingest", "--db", db, path).exit_code == 0
    yield db
    holder.close()


def _copy(db: Path, folder: Path) -> Path:
    """The file and its -wal, as a backup or a copy off a live machine takes them."""
    folder.mkdir()
    for suffix in ("", "-wal"):
        shutil.copy2(f"{db}{suffix}", folder / f"{db.name}{suffix}")
    return folder / db.name


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_an_intact_wal_is_replayed_whole_and_verify_says_intact(live: Path,
                                                                tmp_path: Path) -> None:
    copy = _copy(live, tmp_path / "copy")
    scan = scan_wal(copy)
    assert scan is not None and scan.frames > 0 and scan.after_break == 0
    before = [Path(f"{live}{suffix}").read_bytes() for suffix in ("", "-wal")]
    assert cli("verify", "--db", copy).stdout == cli("verify", "--db", live).stdout
    # verify reads: the module's live store, which the other tests copy, is as it was.
    assert [Path(f"{live}{suffix}").read_bytes() for suffix in ("", "-wal")] == before


@pytest.mark.parametrize("where", ["header salt", "first frame's page", "a middle frame",
                                   "last frame's checksum"])
def test_a_flipped_byte_in_the_wal_is_named_by_verify(live: Path, tmp_path: Path,
                                                      where: str) -> None:
    copy = _copy(live, tmp_path / "copy")
    wal = Path(f"{copy}-wal")
    frames = (wal.stat().st_size - WAL_HEADER_BYTES) // FRAME
    assert frames >= 3
    offset = {
        "header salt": 18,
        "first frame's page": WAL_HEADER_BYTES + 24 + 100,
        "a middle frame": WAL_HEADER_BYTES + (frames // 2) * FRAME + 24 + 7,
        "last frame's checksum": WAL_HEADER_BYTES + (frames - 1) * FRAME + 20,
    }[where]
    _flip(wal, offset)

    result = verify_both_ways(copy)

    assert result.exit_code == 1
    first = result.stderr.splitlines()[0]
    named = ("SQLite ignores the whole WAL: its header's checksum is broken; its "
             if where == "header salt" else "the WAL holds ")
    assert first.startswith(f"NOT intact: first problem at {wal}: {named}"), first
    assert "frames " in first and "committed batches may be lost" in first
    assert "Traceback" not in result.stderr


def _leaves(db: Path) -> int:
    """How many leaves SQLite itself shows for the copy (what a reader would be served)."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(connection.execute("SELECT max(tree_size) FROM tree_heads").fetchone()[0])
    finally:
        connection.close()


@pytest.mark.parametrize(("damage", "named"), [
    # Issue 32: one flipped bit in bytes 8-9 of the page size: SQLite ignores the whole -wal.
    # 0x00004000 becomes 0x01004000, or 0x00014000: neither a power of two.
    ("page size byte 8", "its header's page size (bytes 8-11) is 16793600, which SQLite "
                         "does not accept"),
    ("page size byte 9", "its header's page size (bytes 8-11) is 81920, which SQLite does not "
                         "accept"),
    ("magic", "its header's magic number is 0x377f0782, not SQLite's"),
])
def test_a_wal_header_sqlite_rejects_is_named_with_every_frame_it_loses(
        live: Path, tmp_path: Path, damage: str, named: str) -> None:
    copy = _copy(live, tmp_path / "copy")
    wal = Path(f"{copy}-wal")
    frames = (wal.stat().st_size - WAL_HEADER_BYTES) // FRAME
    intact_leaves = _leaves(copy)
    _flip(wal, {"page size byte 8": 8, "page size byte 9": 9, "magic": 2}[damage])
    assert _leaves(copy) < intact_leaves  # SQLite now serves fewer leaves, without a word

    result = verify_both_ways(copy)

    assert result.exit_code == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"NOT intact: first problem at {wal}: SQLite ignores the whole "
                            f"WAL: {named}"), first
    assert f"its {frames} frames (" in first and "committed batches may be lost" in first


def test_a_wal_cut_short_by_one_byte_is_named(live: Path, tmp_path: Path) -> None:
    copy = _copy(live, tmp_path / "copy")
    wal = Path(f"{copy}-wal")
    intact_leaves = _leaves(copy)
    wal.write_bytes(wal.read_bytes()[:-1])  # an interrupted copy
    assert _leaves(copy) < intact_leaves  # the newest batch is gone for SQLite

    result = verify_both_ways(copy)

    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        f"NOT intact: first problem at {wal}: the WAL's last frame is cut short "
        f"({FRAME - 1} of {FRAME} bytes: a copy or a write interrupted), and with it the "
        "transaction it commits: committed batches may be lost; SQLite will not replay them")


@pytest.mark.parametrize("damage", ["page size", "cut short", "checksum break"])
def test_a_writer_refuses_a_lossy_wal_and_changes_no_byte(live: Path, tmp_path: Path,
                                                          damage: str) -> None:
    copy = _copy(live, tmp_path / "copy")
    wal = Path(f"{copy}-wal")
    if damage == "cut short":
        wal.write_bytes(wal.read_bytes()[:-1])
    else:
        _flip(wal, 9 if damage == "page size" else WAL_HEADER_BYTES + 24 + 100)
    before = {p.name: p.read_bytes() for p in copy.parent.iterdir()}

    result = cli("ingest", "--db", copy, EXAMPLE_FILES[0])

    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {wal}: "), result.stderr
    assert "committed batches may be lost" in result.stderr
    assert "Nothing was written" in result.stderr and "Traceback" not in result.stderr
    assert {p.name: p.read_bytes() for p in copy.parent.iterdir()} == before


class _FoldFails:
    """A sqlite3 connection whose WAL fold fails as on a full disk (SQLITE_FULL, 13)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def execute(self, sql: str) -> sqlite3.Cursor:
        if "wal_checkpoint" in sql:
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorcode = 13  # type: ignore[attr-defined]
            raise error
        return self.connection.execute(sql)

    def close(self) -> None:
        self.connection.close()


def test_a_failed_wal_fold_after_commit_is_reported_by_the_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "audit.db"
    assert cli("ingest", "--db", db, EXAMPLE_FILES[0]).exit_code == 0
    import store.db.schema.engine as engine_module

    real_connect = sqlite3.connect
    monkeypatch.setattr(engine_module.sqlite3, "connect",
                        lambda *a, **k: _FoldFails(real_connect(*a, **k)))
    result = cli("ingest", "--db", db, EXAMPLE_FILES[1])
    monkeypatch.undo()

    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"Error: {db}: batch 2 ({EXAMPLE_FILES[1]}) is committed, but only in "
        f"audit.db-wal: folding the WAL into the file failed (database or disk is full). "
        "Keep audit.db-wal beside the file"), result.stderr
    assert "Traceback" not in result.stderr
    # Committed indeed (here the last connection's close folded it, the disk not being full).
    assert query(db, "SELECT max(batch_id) FROM ingest_batches") == [(2,)]
    assert cli("verify", "--db", db).exit_code == 0
    assert cli("ingest", "--db", db, EXAMPLE_FILES[2]).exit_code == 0
