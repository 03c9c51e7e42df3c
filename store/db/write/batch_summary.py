"""What a batch's ingest reports: its lines, per-table counts and the failures it names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from store.db.write.input_kinds import INPUT_KINDS

MAX_REPORTED_ERRORS = 20


@dataclass(frozen=True, slots=True)
class LineFailure:
    line: int
    reason: str


@dataclass
class TableCounts:
    new: int = 0
    present: int = 0


@dataclass
class BatchSummary:
    source: str
    input_sha256: str = ""
    lines: int = 0
    records: int = 0
    batch_id: int | None = None
    record_types: set[str] = field(default_factory=set)
    tables: dict[str, TableCounts] = field(
        default_factory=lambda: {kind.name: TableCounts() for kind in INPUT_KINDS}
    )
    failures: list[LineFailure] = field(default_factory=list)
    failure_count: int = 0
    # Every row was stored already, so no batch was written: the earlier batch of the same
    # input (same_input), else the batches that hold its rows.
    already_in: list[int] = field(default_factory=list)
    same_input: bool = False

    @property
    def new_rows(self) -> int:
        return sum(c.new for c in self.tables.values())

    @property
    def present_rows(self) -> int:
        return sum(c.present for c in self.tables.values())

    @property
    def record_type(self) -> str:
        return "+".join(sorted(self.record_types))

    @property
    def rejected(self) -> bool:
        return self.failure_count > 0

    def fail(self, line: int, reason: str) -> None:
        self.failure_count += 1
        if len(self.failures) < MAX_REPORTED_ERRORS:
            self.failures.append(LineFailure(line, reason))

    def describe(self, failure: LineFailure) -> str:
        """`PATH:LINE: reason`, or `PATH: reason` for the input as a whole."""
        where = f"{self.source}:{failure.line}" if failure.line else self.source
        return f"{where}: {failure.reason}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "batch_id": self.batch_id,
            "input_sha256": self.input_sha256,
            "lines": self.lines,
            "records": self.records,
            "rejected": self.rejected,
            "rejected_lines": self.failure_count,
            "already_in": self.already_in,
            "same_input": self.same_input,
            "tables": {t: {"new": c.new, "present": c.present} for t, c in self.tables.items()},
            "errors": [self.describe(f) for f in self.failures],
        }
