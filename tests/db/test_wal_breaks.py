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
from store_support import verify_both_ways

from store.db.verify.wal_file import WAL_HEADER_BYTES, scan_wal

JOURNAL = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"
PAGE = 4096
FRAME = 24 + PAGE


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Path]:
    """A live store: a reader holds a snapshot of batch 1, so batches 2-4 stay in the -wal."""
    db = tmp_path / "live" / "audit.db"
    db.parent.mkdir()
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
    assert cli("verify", "--db", copy).stdout == cli("verify", "--db", live).stdout


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
    assert first.startswith(f"NOT intact: first problem at {wal}: the WAL holds "), first
    assert "frames after" in first and "committed batches may be lost" in first
    assert "Traceback" not in result.stderr
