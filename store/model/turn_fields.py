"""What a stored turn's line says beyond the columns `turns` keeps: CORE's own time, and the
TurnJournalEntry fields the Workbench shows (core-workbench.md §3), typed.

Derived from the verbatim line, never from anything else: the writer stores them per batch
(table `turn_fields`, revision 0011) and `verify` derives them again from every line.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Final

__all__ = ["CORE_TIME_ORIGIN", "TURN_FIELD_COLUMNS", "core_time", "evidence_payload",
           "journal_fields"]

_MICROSECOND: Final = timedelta(microseconds=1)
_DAY: Final = 86_400_000_000
# core_time counts microseconds from 0000-12-31T00:00:00Z: one day before datetime.min, so a
# year-1 time with an offset east of UTC still counts from zero (a cursor key is never < 0).
CORE_TIME_ORIGIN: Final = "0000-12-31T00:00:00Z"

# The typed journal fields a turn_fields row holds, as the journal names them (the verdicts'
# runtime details as verdict_<axis>_detail; proposal_candidates as canonical JSON).
TURN_FIELD_COLUMNS: Final = (
    "articulation_surface", "walk_surface", "verdict_identity_detail", "verdict_safety_detail",
    "verdict_ethics_detail", "proposal_candidates", "turn_cost_ms", "checkpoint_emitted",
)


def core_time(moment: datetime | str | None) -> int | None:
    """A time with an offset as microseconds since CORE_TIME_ORIGIN, comparable across
    offsets; None for no time, or one without an offset (it names no instant)."""
    if moment is None:
        return None
    if isinstance(moment, str):
        try:
            moment = datetime.fromisoformat(moment)
        except ValueError:
            return None
    offset = moment.utcoffset()
    if offset is None:
        return None
    local = moment.replace(tzinfo=None) - datetime.min
    return local // _MICROSECOND - offset // _MICROSECOND + _DAY


def _detail(verdict: Any) -> str | None:
    return verdict.get("runtime_detail") if isinstance(verdict, dict) else None


def journal_fields(line: str) -> dict[str, Any]:
    """The typed fields of a Workbench journal line (checked on ingest), by column."""
    entry = json.loads(line)
    verdicts = entry["verdicts"]
    return {
        "articulation_surface": entry["articulation_surface"],
        "walk_surface": entry["walk_surface"],
        "verdict_identity_detail": _detail(verdicts["identity"]),
        "verdict_safety_detail": _detail(verdicts["safety"]),
        "verdict_ethics_detail": _detail(verdicts["ethics"]),
        "proposal_candidates": json.dumps(entry["proposal_candidates"], sort_keys=True,
                                          separators=(",", ":"), ensure_ascii=False),
        "turn_cost_ms": entry["turn_cost_ms"],
        "checkpoint_emitted": entry["checkpoint_emitted"],
    }


def evidence_payload(line: str, key: str) -> Any:
    """A nested evidence payload (pipeline_record, ...) exactly as the line holds it: read
    from the stored bytes, so a float keeps CORE's value (Python's json reads repr's)."""
    return json.loads(line).get(key)
