"""A corpus or lexicon line the loader refused, and why: the runtime skips it, checks report it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, TypeVar

from store.model.fields import RecordError
from store.model.jsonl import iter_json_lines

T = TypeVar("T")


class Severity(StrEnum):
    ERROR = "error"  # a real defect in the data: `corpus check` fails
    WARNING = "warning"  # outside ADR-0052 but loaded or skipped harmlessly by CORE


@dataclass(frozen=True, slots=True)
class DroppedLine:
    source: Path
    line: int  # 1-based, as editors and `FILE:LINE:` tooling count
    reason: str
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        # Line 0 is the file as a whole (say, its bound pack is missing).
        where = f"{self.source}:{self.line}" if self.line else f"{self.source}"
        return f"{where}: {self.reason}"


def read_records(
    stream: IO[bytes], source: Path, parse: Callable[[Any, int], T]
) -> tuple[list[T], list[DroppedLine]]:
    """`parse(value, line_number)` for each JSONL line of `source`; a line that is not JSON, or
    that `parse` refuses with RecordError, is dropped (and kept as a DroppedLine), not fatal."""
    kept: list[T] = []
    dropped: list[DroppedLine] = []
    for line in iter_json_lines(stream):
        if line.error is not None:
            dropped.append(DroppedLine(source, line.number, line.error))
            continue
        try:
            kept.append(parse(line.value, line.number))
        except RecordError as exc:
            dropped.append(DroppedLine(source, line.number, str(exc)))
    return kept, dropped
