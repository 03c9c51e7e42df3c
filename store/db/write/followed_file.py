"""A file `core-audit follow` tails: its complete lines, each checked against the line it
followed before, and the new ones handed to the writer `ingest` uses.

The writer is the one path to the store. A run's first batch of a file is the whole file, as
`ingest FILE` appends a grown file: lines stored before (a restart, a crash) are "present",
the rest new, a rewritten journal refused; the store, not a state file, says what is stored.
Later batches are the lines after those followed, numbered as in the file and continuing its
journal's turn ids (InputStart): the writer parses only new lines.

Between batches the file is only stat()ed. A batch reads the file from its start all the
same: every line followed must come back byte for byte (a 16-byte digest a line, kept in
memory; hashing, not parsing), else the batch fails inside the writer's transaction naming
the line (truncated, rewritten, replaced by other content), so nothing of it is written. A
last line without its newline is not a line yet: the reader stops before it, and a later
batch reads it whole.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import IO, Any, NamedTuple

import orjson

from store.db.write.row_builders import InputStart
from store.errors import InputError
from store.model.jsonl import MAX_LINE_BYTES
from store.model.turns import TurnKind, stored_turn_key, turn_line_kind

JOURNAL_KIND = TurnKind.WORKBENCH_JOURNAL.value

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
    next_turn: int = 1  # the turn_id a journal line after them must have
    journal_id: str | None = None  # the turn_key of its journal's turn 1 (turn_fields)
    prefix: Any = field(default_factory=hashlib.sha256)  # of their bytes, 0 to `size`
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
        """A reader of `stream` (the file, from its start) for one batch: the whole file for
        the first batch of a run (the writer checks it against the store, as `ingest` does),
        then only the lines after those followed."""
        return PrefixReader(self, stream, tail=self.lines > 0)

    def advance(self, reader: PrefixReader) -> bool:
        """The batch `reader` fed is stored (or was already): its lines are followed now.
        True when the file is another than the one followed before, holding its lines."""
        replaced = self.seen is not None and reader.opened is not None and (
            self.seen[:2] != reader.opened[:2])
        self.digests += reader.new_digests
        self.prefix = reader.prefix
        self.lines = reader.line
        self.next_turn = reader.next_turn
        self.journal_id = reader.journal_id
        self.size = reader.size
        self.seen = reader.opened
        return replaced


class PrefixReader:
    """readline() over the file's complete lines for the writer, checking each followed one.

    `tail`: the writer gets only the lines after those followed (read and checked here all
    the same), numbered from followed.lines + 1 (`start`); else every line, from line 1.
    """

    def __init__(self, followed: FollowedFile, stream: IO[bytes], *, tail: bool) -> None:
        self.followed = followed
        self.stream = stream
        self.tail = tail
        self.opened = followed.state()  # before reading: a later change is seen next poll
        self.line = 0  # complete lines read
        self.size = 0  # bytes up to the end of the last of them
        self.new_digests = bytearray()
        self.prefix = followed.prefix.copy()  # grows with each new complete line
        self.next_turn = followed.next_turn
        self.journal_id = followed.journal_id
        self._current = hashlib.sha256()
        self._text = bytearray()  # the line being read, while it may be a journal line
        self._ended = False

    @property
    def start(self) -> InputStart | None:
        """Where what the writer reads begins in the file (None: at its start)."""
        if not self.tail:
            return None
        return InputStart(self.followed.lines + 1, self.followed.next_turn,
                          self.followed.journal_id)

    def readline(self, limit: int = -1, /) -> bytes:
        if self._ended:
            return b""
        if self.tail and self.line < self.followed.lines and not self._prefix_unchanged():
            self.stream.seek(0)  # something differs: find the first line that does
            while self.line < self.followed.lines and not self._ended:
                self._read(MAX_LINE_BYTES + 1)  # each checked as it completes
        return self._read(limit)

    def _prefix_unchanged(self) -> bool:
        """The followed bytes hash as they did, read in blocks, not line by line (SHA-256,
        ~0.5 GB/s here); then the stream stands after them."""
        check = hashlib.sha256()
        left = self.followed.size
        while left:
            block = self.stream.read(min(left, 1 << 20))
            if not block:
                return False
            check.update(block)
            left -= len(block)
        if check.digest() != self.followed.prefix.digest():
            return False
        self.line, self.size = self.followed.lines, self.followed.size
        return True

    def _read(self, limit: int) -> bytes:
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
        if self.line >= self.followed.lines:
            self.prefix.update(piece)
        if len(self._text) <= MAX_LINE_BYTES:
            self._text += piece
        if piece.endswith(b"\n"):
            self._line_read()
        return piece

    def _line_read(self) -> None:
        self.line += 1
        self.size = self.stream.tell()
        digest = self._current.digest()[:_DIGEST_BYTES]
        self._current = hashlib.sha256()
        text, self._text = self._text, bytearray()
        at = (self.line - 1) * _DIGEST_BYTES
        if self.line <= self.followed.lines:
            if self.followed.digests[at:at + _DIGEST_BYTES] != digest:
                raise FileChanged(self.line, (
                    f"line {self.line} is not the line {self.line} followed (stored): the "
                    "file was rewritten or replaced; a followed file is append-only"))
            return
        self.new_digests += digest
        if b'"turn_id"' in text:
            self._saw_turn(bytes(text))

    def _saw_turn(self, text: bytes) -> None:
        """A new journal line: the next batch's journal continues after its turn_id."""
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return  # the writer names it
        if turn_line_kind(value) is TurnKind.WORKBENCH_JOURNAL:
            turn_id = value.get("turn_id")
            if isinstance(turn_id, int) and not isinstance(turn_id, bool):
                self.next_turn = turn_id + 1
                if turn_id == 1:  # a tail batch's turns name their journal by this turn
                    line = text.decode("utf-8", "replace").rstrip("\r\n")
                    self.journal_id = stored_turn_key(JOURNAL_KIND, line, None)
