"""SQLite's write-ahead log read as bytes: the frames SQLite will not replay.

SQLite replays a -wal's frames up to the first one whose salt or cumulative checksum is wrong
and drops the rest without a word: one flipped byte loses every batch committed after it.
`verify` reads the file itself (https://www.sqlite.org/fileformat2.html#walformat) and names
the frames of the current generation (the header's salts) that follow a break.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

WAL_HEADER_BYTES = 32
FRAME_HEADER_BYTES = 24
# The magic number's low bit: 1 when the checksums read words big-endian.
WAL_MAGIC = {0x377F0682: "<", 0x377F0683: ">"}
_MASK = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class WalScan:
    frames: int  # frames of the current generation (matching salts) in the file
    valid: int  # frames SQLite replays up to (a valid prefix)
    after_break: int  # frames of the current generation after the first bad checksum
    commits_after_break: int  # of them, commit frames: transactions that will be lost
    header_broken: bool = False


def _checksum(data: bytes, order: str, s0: int, s1: int) -> tuple[int, int]:
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & _MASK
        s1 = (s1 + words[i + 1] + s0) & _MASK
    return s0, s1


def scan_wal(path: Path) -> WalScan | None:
    """The -wal beside `path` scanned, or None when there is none (or it is empty)."""
    wal = Path(f"{path}-wal")
    try:
        data = wal.read_bytes()
    except FileNotFoundError:
        return None
    if len(data) < WAL_HEADER_BYTES:
        return None
    magic, _version, page_size, _seq, _salt1, _salt2, c1, c2 = struct.unpack(
        ">8I", data[:WAL_HEADER_BYTES])
    order = WAL_MAGIC.get(magic)
    frame_bytes = FRAME_HEADER_BYTES + page_size
    count = (len(data) - WAL_HEADER_BYTES) // frame_bytes if page_size else 0
    if order is None or not page_size:
        return WalScan(count, 0, count, count, header_broken=True)
    s0, s1 = _checksum(data[:24], order, 0, 0)
    header_broken = (s0, s1) != (c1, c2)
    salts = data[16:24]
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
        if header_broken or not broken:
            frames += current or header_broken
        if not broken:
            if differing == 0:
                page = data[offset + FRAME_HEADER_BYTES:offset + frame_bytes]
                s0, s1 = _checksum(head[:8] + page, order, s0, s1)
                if (s0, s1) == (f1, f2):
                    valid += 1
                    continue
            elif not current:
                continue  # the end of the current generation's frames
            broken = True
        if current or header_broken:
            after += 1
            commits += commit != 0
    return WalScan(frames, valid, after, commits, header_broken)


def wal_problem(path: Path) -> str | None:
    """One line naming frames SQLite will not replay, or None."""
    scan = scan_wal(path)
    if scan is None or not scan.after_break:
        return None
    where = "its header's checksum is broken" if scan.header_broken else "a checksum break"
    return (f"the WAL holds {scan.after_break} frames after {where} "
            f"({scan.commits_after_break} of them commit a transaction): committed batches "
            "may be lost; SQLite will not replay them")
