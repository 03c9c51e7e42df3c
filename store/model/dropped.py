"""A corpus or lexicon line the loader refused, and why: the runtime skips it, checks report it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class DroppedLine:
    source: Path
    line: int  # 1-based, as editors and `FILE:LINE:` tooling count
    reason: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.reason}"
