"""A file `core-audit follow` tails: its complete lines, each checked against the line it
followed before, so that the writer re-reads the grown file as `ingest` would re-read it.

The writer is the one path to the store: each batch of a followed file is the file's complete
lines, all of them, appended exactly as `ingest FILE` appends a grown file (stored lines are
"present", the new ones new, a rewritten journal refused). That keeps one writer, and makes a
restart or a crash lose nothing: the store, not a state file, says what is stored.

Between batches the file is only stat()ed. While a batch reads it, every line already followed
must come back byte for byte (a digest a line, kept in memory): a file truncated, rewritten or
replaced by different content fails the batch inside the writer's transaction, naming the line,
so nothing of it is written. A last line without its newline is not a line yet: the reader stops
before it, and the next batch reads it whole.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import IO, NamedTuple

from store.errors import InputError

_DIGEST_BYTES = 16  # per followed line: 1.6 MB for 100,000 lines


class FileChanged(InputError):
    """A followed file no longer holds the lines followed: `line` is the first that differs."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


class FileState(NamedTuple):
    device: int
    inode: int
    size: int
    mtime_ns: int


@dataclass
class FollowedFile:
    """One followed file: how many complete lines are stored, and each one's digest."""

    path: str
    lines: int = 0  # complete lines (blank ones too) the store holds from this file
    size: int = 0  # bytes up to the end of the last of them
    digests: bytearray = field(default_factory=bytearray)
    seen: FileState | None = None  # the file as last read: unchanged, it is not read again

    def state(self) -> FileState | None:
        try:
            status = os.stat(self.path)
        except FileNotFoundError:
            return None
        return FileState(status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)

    def changed(self) -> bool:
        """True when the file may hold a new complete line, or no longer hold a followed one:
        one stat(), no read. A file that vanished after lines were followed has lost them."""
        now = self.state()
        if now is None:
            if self.lines:
                raise FileChanged(1, "the file was removed: the lines followed are gone")
            return False
        return now != self.seen

    def reader(self, stream: IO[bytes]) -> PrefixReader:
        """A reader of `stream` (the file, from its start) for one batch."""
        return PrefixReader(self, stream)

    def advance(self, reader: PrefixReader) -> bool:
        """The batch `reader` fed is stored (or was already): its lines are followed now.
        True when the file is another than the one followed before, holding its lines."""
        replaced = self.seen is not None and reader.opened is not None and (
            self.seen[:2] != reader.opened[:2])
        self.digests += reader.new_digests
        self.lines = reader.line
        self.size = reader.size
        self.seen = reader.opened
        return replaced


class PrefixReader:
    """readline() over the file's complete lines for the writer, checking each followed one."""

    def __init__(self, followed: FollowedFile, stream: IO[bytes]) -> None:
        self.followed = followed
        self.stream = stream
        self.opened = followed.state()  # before reading: a later change is seen next poll
        self.line = 0  # complete lines read
        self.size = 0  # bytes up to the end of the last of them
        self.new_digests = bytearray()
        self._current = hashlib.blake2b()
        self._ended = False

    def readline(self, limit: int = -1, /) -> bytes:
        if self._ended:
            return b""
        piece = self.stream.readline(limit)
        if not piece.endswith(b"\n") and (limit < 0 or len(piece) < limit):
            # The end of the file, maybe inside a line still being written: not a line yet.
            self._ended = True
            followed = self.followed.lines
            if self.line < followed:
                raise FileChanged(self.line + 1, (
                    f"the file was truncated: it ends before the end of line {self.line + 1}; "
                    f"lines 1-{followed} were followed (stored)"))
            return b""
        self._current.update(piece)
        if piece.endswith(b"\n"):
            self._line_read()
        return piece

    def _line_read(self) -> None:
        self.line += 1
        self.size = self.stream.tell()
        digest = self._current.digest()[:_DIGEST_BYTES]
        self._current = hashlib.blake2b()
        at = (self.line - 1) * _DIGEST_BYTES
        if self.line <= self.followed.lines:
            if self.followed.digests[at:at + _DIGEST_BYTES] != digest:
                raise FileChanged(self.line, (
                    f"line {self.line} is not the line {self.line} followed (stored): the "
                    "file was rewritten or replaced; a followed file is append-only"))
        else:
            self.new_digests += digest
