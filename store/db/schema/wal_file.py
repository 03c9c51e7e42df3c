"""SQLite's write-ahead log read as bytes: every frame SQLite will ignore or drop.

SQLite replays a -wal only if its header is one it accepts (the magic number, a page size
that is a power of two from 512 to 65536, the header's checksum; another format version and
it refuses to open), and then its frames up to the first one cut short or whose salt or
cumulative checksum is wrong, up to the last commit before it. Everything else goes without a
word: one flipped bit in the header loses every batch in the file, a copy cut short by one
byte loses the newest. `verify` reads the file itself
(https://www.sqlite.org/fileformat2.html#walformat) and names what will be lost; the writers
refuse such a -wal before writing (their first write would reset it and lose it for good).
"""

from __future__ import annotations

import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from store.errors import StoreError

WAL_HEADER_BYTES = 32
FRAME_HEADER_BYTES = 24
WAL_FORMAT_VERSION = 3007000
# The magic number's low bit: 1 when the checksums read words big-endian.
WAL_MAGIC = {0x377F0682: "<", 0x377F0683: ">"}
_MASK = 0xFFFFFFFF
_DEFAULT_PAGE = 4096
# A frame cut short at the end may be a live writer's frame half written: a writer looks again
# after this long, and refuses only a -wal that did not change meanwhile.
SETTLE_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class WalScan:
    frames: int  # frames of the current generation (matching salts) in the file
    valid: int  # frames SQLite replays up to (a valid prefix)
    after_break: int  # frames of the current generation SQLite will not replay
    commits_after_break: int  # of them, commit frames: transactions that will be lost
    header_broken: bool = False
    header_problem: str | None = None  # why SQLite ignores (or refuses) the whole file
    cut_short: int = 0  # bytes of a last frame cut short (0: none)
    frame_bytes: int = 0


def _checksum(data: bytes, order: str, s0: int, s1: int) -> tuple[int, int]:
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & _MASK
        s1 = (s1 + words[i + 1] + s0) & _MASK
    return s0, s1


def _possible_page_size(size: int) -> bool:
    return 512 <= size <= 65536 and size & (size - 1) == 0


def _database_page_size(path: Path) -> int:
    """The page size the database file's header gives (bytes 16-17; 1 means 65536)."""
    try:
        with path.open("rb") as stream:
            header = stream.read(100)
    except OSError:
        return _DEFAULT_PAGE
    if len(header) < 18:
        return _DEFAULT_PAGE
    size = struct.unpack(">H", header[16:18])[0]
    size = 65536 if size == 1 else size
    return size if _possible_page_size(size) else _DEFAULT_PAGE


def _header_problem(magic: int, version: int, page_size: int, checksum_ok: bool
                    ) -> str | None:
    if magic not in WAL_MAGIC:
        return f"its header's magic number is {magic:#010x}, not SQLite's"
    if not _possible_page_size(page_size):
        return (f"its header's page size (bytes 8-11) is {page_size}, which SQLite does not "
                "accept (a power of two from 512 to 65536)")
    if not checksum_ok:
        return "its header's checksum is broken"
    if version != WAL_FORMAT_VERSION:
        return (f"its header's format version is {version}, not {WAL_FORMAT_VERSION} (SQLite "
                "refuses to open the store)")
    return None


def scan_wal(path: Path) -> WalScan | None:
    """The -wal beside `path` scanned, or None when there is none (or it is empty)."""
    wal = Path(f"{path}-wal")
    try:
        data = wal.read_bytes()
    except FileNotFoundError:
        return None
    if not data:
        return None
    if len(data) < WAL_HEADER_BYTES:
        return WalScan(0, 0, 0, 0, header_broken=True,
                       header_problem=f"it is {len(data)} bytes, shorter than its header",
                       cut_short=len(data))
    magic, version, page_size, _seq, _salt1, _salt2, c1, c2 = struct.unpack(
        ">8I", data[:WAL_HEADER_BYTES])
    order = WAL_MAGIC.get(magic, ">")
    checksum_ok = _checksum(data[:24], order, 0, 0) == (c1, c2)
    header_problem = _header_problem(magic, version, page_size, checksum_ok)
    if not _possible_page_size(page_size):
        page_size = _database_page_size(path)  # to find the frames SQLite will now ignore
    frame_bytes = FRAME_HEADER_BYTES + page_size
    count, rest = divmod(len(data) - WAL_HEADER_BYTES, frame_bytes)
    header_broken = header_problem is not None
    salts = data[16:24]
    s0, s1 = c1, c2
    frames = valid = after = commits = 0
    broken = header_broken  # then no frame is replayed, whatever its salts
    for index in range(count):
        offset = WAL_HEADER_BYTES + index * frame_bytes
        head = data[offset:offset + FRAME_HEADER_BYTES]
        commit = struct.unpack(">I", head[4:8])[0]
        f1, f2 = struct.unpack(">2I", head[16:24])
        differing = sum(a != b for a, b in zip(head[8:16], salts, strict=True))
        # Other salts: a frame of an earlier generation, never replayed, not lost; unless
        # they differ from the header's in one byte only (a flipped byte, not a restart).
        current = differing == 0 or (differing == 1 and not header_broken)
        if not broken:
            frames += current
            if differing == 0:
                page = data[offset + FRAME_HEADER_BYTES:offset + frame_bytes]
                s0, s1 = _checksum(head[:8] + page, order, s0, s1)
                if (s0, s1) == (f1, f2):
                    valid += 1
                    continue
            elif not current:
                continue  # the end of the current generation's frames
            broken = True
        elif current or header_broken:
            frames += 1
        if current or header_broken:
            after += 1
            commits += commit != 0
    cut = 0
    if rest:
        head = data[len(data) - rest:len(data) - rest + FRAME_HEADER_BYTES]
        # A last frame of another generation (its salts whole and different) is no loss.
        if len(head) < 16 or head[8:16] == salts or header_broken:
            cut = rest
            after += 1
            commits += len(head) < 8 or struct.unpack(">I", head[4:8])[0] != 0
    return WalScan(frames, valid, after, commits, header_broken, header_problem, cut,
                   frame_bytes)


def wal_problem(path: Path) -> str | None:
    """One line naming the committed transactions of the -wal SQLite will ignore or drop, or
    None. Frames of a transaction that never committed (a writer killed mid-batch) are no
    loss: their batch was never written."""
    scan = scan_wal(path)
    if scan is None:
        return None
    lost = "committed batches may be lost; SQLite will not replay them"
    if scan.header_problem is not None and "refuses" in scan.header_problem:
        return f"SQLite ignores the whole WAL: {scan.header_problem}"
    if not scan.commits_after_break:
        return None
    if scan.header_problem is not None:
        return (f"SQLite ignores the whole WAL: {scan.header_problem}; its "
                f"{scan.after_break} frames ({scan.commits_after_break} of them commit a "
                f"transaction) are not read: {lost}")
    if scan.cut_short and scan.after_break == 1:
        return (f"the WAL's last frame is cut short ({scan.cut_short} of {scan.frame_bytes} "
                "bytes: a copy or a write interrupted), and with it the transaction it "
                f"commits: {lost}")
    cut = (f", the last one cut short ({scan.cut_short} of {scan.frame_bytes} bytes)"
           if scan.cut_short else "")
    return (f"the WAL holds {scan.after_break} frames after a checksum break{cut} "
            f"({scan.commits_after_break} of them commit a transaction): {lost}")


def _tail_only(scan: WalScan) -> bool:
    """What a live writer's frame half written looks like: the last frame alone is off."""
    return scan.header_problem is None and scan.after_break == 1


def refuse_lossy_wal(path: Path) -> None:
    """StoreError, before a writer opens `path`, when its -wal holds frames SQLite will drop:
    the writer's first commit would reset the -wal over them, and the loss would be for good.
    A last frame cut short may be a live writer's, half written: refused only if the file
    stays as it is for SETTLE_SECONDS."""
    scan = scan_wal(path)
    if scan is None or not (scan.commits_after_break or scan.header_problem):
        return
    if _tail_only(scan):
        wal = Path(f"{path}-wal")
        before = _stamp(wal)
        time.sleep(SETTLE_SECONDS)
        if _stamp(wal) != before:
            return  # a writer is at work: its frames are being written, not lost
    problem = wal_problem(path)
    if problem is None:
        return
    raise StoreError(
        f"{path}-wal: {problem}. Nothing was written: a write now would reset the WAL and "
        "lose them for good. Keep the file and its -wal as they are (copy both), run "
        "`core-audit verify`, and restore the store from a copy whose -wal is whole")


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_size, status.st_mtime_ns
