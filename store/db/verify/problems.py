"""What `verify` reports: one problem, naming where it is."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    seq: int | None
    table: str
    key: str
    reason: str

    def __str__(self) -> str:
        where = f"seq {self.seq}: " if self.seq is not None else ""
        name = f"{self.table} {self.key}" if self.key else self.table
        return f"{where}{name}: {self.reason}"
