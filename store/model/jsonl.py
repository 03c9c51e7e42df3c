"""Streaming JSONL input: strict UTF-8, one JSON value a line, bounded line length."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

MAX_LINE_BYTES = 1 << 20  # 1 MiB: far above any CORE frame, small enough to never exhaust memory
_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class JsonLine:
    """One non-blank input line: its 1-based number and either a value or an error."""

    number: int
    value: Any = None
    error: str | None = None
    text: str = ""  # the line as read, without its line ending (journal digests hash it)


def _skip_rest_of_line(stream: LineSource) -> int:
    skipped = 0
    while True:
        chunk = stream.readline(_CHUNK)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped


class LineSource(Protocol):
    """What the reader needs of a stream: bounded readline of bytes."""

    def readline(self, limit: int = -1, /) -> bytes: ...


def iter_json_lines(
    stream: LineSource,
    max_line_bytes: int = MAX_LINE_BYTES,
    on_bytes: Callable[[int], None] | None = None,
    first_line: int = 1,
) -> Iterator[JsonLine]:
    """Yield every non-blank line of `stream`; never holds more than one line in memory.
    `first_line`: the number of the stream's first line (a file's tail is numbered as in the
    file)."""
    number = first_line - 1
    while True:
        raw = stream.readline(max_line_bytes + 1)
        if not raw:
            return
        number += 1
        size = len(raw)
        if size > max_line_bytes and not raw.endswith(b"\n"):
            size += _skip_rest_of_line(stream)
            if on_bytes:
                on_bytes(size)
            yield JsonLine(number, error=f"line is longer than {max_line_bytes} bytes")
            continue
        if on_bytes:
            on_bytes(size)
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield JsonLine(number, error=f"invalid UTF-8 at byte {exc.start}")
            continue
        text = text.rstrip("\r\n")
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            yield JsonLine(number, error=f"malformed JSON: {exc}", text=text)
            continue
        yield JsonLine(number, value=value, text=text)
