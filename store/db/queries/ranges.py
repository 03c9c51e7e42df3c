"""Ranges every record filter takes: the batch that stored a record, by id and by ingest time.

Both bounds are inclusive. A record's batch is the one that first stored it (a residual or a
surface seen again later keeps its first batch). Ingest times compare with
`ingest_batches.ingested_at`, which the writer stores as UTC text with microseconds and a Z
(2026-05-01T12:00:00.000000Z): a bound rendered the same way compares in time order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import BigInteger, ColumnElement, select

from store.db.queries.errors import QueryError
from store.db.queries.keys import MAX_KEY, key_value
from store.db.queries.statement_shapes import Slot
from store.db.schema.tables import ingest_batches as batches_t


def ingest_time(moment: datetime) -> str:
    """`moment` as ingested_at is stored; a moment without a zone is taken as UTC."""
    if moment.tzinfo is None:
        return moment.isoformat(timespec="microseconds") + "Z"
    try:
        utc = moment.astimezone(UTC).replace(tzinfo=None)
    except OverflowError:  # in UTC, before year 1 or after 9999: as far as a time goes
        ahead = (moment.utcoffset() or timedelta(0)) > timedelta(0)
        utc = datetime.min if ahead else datetime.max
    return utc.isoformat(timespec="microseconds") + "Z"


def parse_ingest_time(text: str, argument: str) -> datetime:
    """An ISO 8601 timestamp or date typed by a user (e.g. on the command line)."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise QueryError(f"{argument}: not an ISO 8601 timestamp: {text!r} "
                         "(e.g. 2026-05-01T12:00:00Z or 2026-05-01)") from None


_ARGUMENTS = {"batch_id_from": "batchIdFrom", "batch_id_to": "batchIdTo"}


def range_parameter(field: str, value: Any) -> Any:
    """A range bound's value as its statement's parameter (statement_shapes.py), checked as
    the bound is when it is built: a batch id within 64 bits, an ingest time as stored."""
    if field in _ARGUMENTS:
        _checked_batch(value, _ARGUMENTS[field])
        return value
    return ingest_time(value)


def _checked_batch(value: int, argument: str) -> None:
    if not 0 <= value <= MAX_KEY:  # checked before any SQL: it may not fit a column
        raise QueryError(f"{argument}: must be between 0 and {MAX_KEY}, got {value}")


def _batch_bound(value: int | Slot, argument: str) -> ColumnElement[Any]:
    if isinstance(value, Slot):
        return value.bind(BigInteger())
    _checked_batch(value, argument)
    return key_value(value)


def _time_bound(value: datetime | Slot) -> Any:
    # Untyped, as the text it stands for: compared with ingested_at, it takes its type.
    return value.bind() if isinstance(value, Slot) else ingest_time(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchRange:
    """Inclusive bounds on the batch that stored a record; None = unbounded."""

    batch_id_from: int | None = None
    batch_id_to: int | None = None
    ingested_from: datetime | None = None
    ingested_to: datetime | None = None

    def has_range(self) -> bool:
        """Whether a batch or ingest-time bound is given."""
        return any(bound is not None for bound in (
            self.batch_id_from, self.batch_id_to, self.ingested_from, self.ingested_to))

    def batch_conditions(self, batch_id: ColumnElement[Any]) -> list[ColumnElement[bool]]:
        """On a table's `batch_id` column (a record's, or a tally's)."""
        found: list[ColumnElement[bool]] = []
        if self.batch_id_from is not None:
            found.append(batch_id >= _batch_bound(self.batch_id_from, "batchIdFrom"))
        if self.batch_id_to is not None:
            found.append(batch_id <= _batch_bound(self.batch_id_to, "batchIdTo"))
        times: list[ColumnElement[bool]] = []
        if self.ingested_from is not None:
            times.append(batches_t.c.ingested_at >= _time_bound(self.ingested_from))
        if self.ingested_to is not None:
            times.append(batches_t.c.ingested_at <= _time_bound(self.ingested_to))
        if times:
            # Not a join: batch ids need not rise with the clock, and batches are few.
            found.append(batch_id.in_(select(batches_t.c.batch_id).where(*times)))
        return found
