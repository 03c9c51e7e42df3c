"""A histogram of turns by CORE's own time, counted bucket by bucket on turn_fields'
(core_time, turn_seq) index: one range count a bucket, no sort of a million keys.

`turnGroups(by: [CORE_DAY])` unfiltered is the auditor's "turns per day"; the general
grouping (groups.py) computes every turn's bucket text and sorts them (~0.5 s at 1M turns on
SQLite), while each bucket is one contiguous range of the index: counting the ranges reads
the same index once, in order. Turns without a CORE time (or without their fields row, which
`verify` names) are the null bucket: all turns less the ranges' sum. Only without a filter
(a filter's columns are not in the index) and for at most MAX_BUCKETS buckets between the
first and last time; otherwise None, and the general grouping answers.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime, timedelta

from sqlalchemy import BigInteger, Connection, column, func, select, values

from store.db.queries.as_of import Snapshot
from store.db.schema.tables import turn_fields as fields_t
from store.db.schema.tables import turns as turns_t


class TimeBucket(enum.Enum):
    HOUR = "hour"
    DAY = "day"
    WEEK = "week"
    MONTH = "month"


# CORE's time of the Unix epoch, in turn_fields.core_time's microseconds.
UNIX_EPOCH_CORE_TIME = 62_135_683_200_000_000
MAX_BUCKETS = 2000  # two parameters a bucket, well under SQLite's 32766
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _moment(core_time: int) -> datetime:
    return _EPOCH + timedelta(microseconds=core_time - UNIX_EPOCH_CORE_TIME)


def _core_time(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1) + UNIX_EPOCH_CORE_TIME


def _start(moment: datetime, bucket: TimeBucket) -> datetime:
    if bucket is TimeBucket.HOUR:
        return moment.replace(minute=0, second=0, microsecond=0)
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if bucket is TimeBucket.DAY:
        return day
    if bucket is TimeBucket.WEEK:
        return day - timedelta(days=day.weekday())
    return day.replace(day=1)


def _next(start: datetime, bucket: TimeBucket) -> datetime:
    if bucket is TimeBucket.HOUR:
        return start + timedelta(hours=1)
    if bucket is TimeBucket.DAY:
        return start + timedelta(days=1)
    if bucket is TimeBucket.WEEK:
        return start + timedelta(weeks=1)
    return (start + timedelta(days=32)).replace(day=1)


def bucket_text(start: datetime, bucket: TimeBucket) -> str:
    """As the SQL buckets spell it (time_buckets.core_bucketed): four-digit years."""
    date = f"{start.year:04d}-{start.month:02d}"
    if bucket is TimeBucket.MONTH:
        return date
    date += f"-{start.day:02d}"
    return date + f"T{start.hour:02d}" if bucket is TimeBucket.HOUR else date


def turn_time_histogram(connection: Connection, bucket: TimeBucket,
                        snapshot: Snapshot | None
                        ) -> tuple[int, list[tuple[str | None, int]]] | None:
    """(all turns, [(bucket, turns)] for the buckets holding any, then (None, turns without
    a time) if any), as of `snapshot`; None past MAX_BUCKETS buckets."""
    time = fields_t.c.core_time
    held = [] if snapshot is None else [fields_t.c.turn_seq <= snapshot.tree_size]
    # Two statements: SQLite reads a lone min() or max() off the index's end, not both at once.
    low = connection.execute(select(func.min(time)).where(*held)).scalar()
    high = connection.execute(select(func.max(time)).where(*held)).scalar()
    total = connection.execute(select(func.count()).select_from(turns_t).where(
        *([] if snapshot is None else [turns_t.c.seq <= snapshot.tree_size]))).scalar_one()
    if low is None or high is None:
        return total, [(None, total)] if total else []
    bounds: list[tuple[int, int]] = []
    start = _start(_moment(low), bucket)
    while _core_time(start) <= high:
        if len(bounds) == MAX_BUCKETS:
            return None
        after = _next(start, bucket)
        bounds.append((_core_time(start), _core_time(after)))
        start = after
    # WITH buckets(low, high) AS (VALUES ...): SQLite takes no column list on a VALUES alias
    buckets = values(column("low", BigInteger), column("high", BigInteger),
                     name="buckets").data(bounds).cte("buckets")
    counted = (select(func.count()).select_from(fields_t)
               .where(time >= buckets.c.low, time < buckets.c.high, *held)
               .scalar_subquery())
    found = [(bucket_text(_moment(low_end), bucket), int(n)) for low_end, n in
             connection.execute(select(buckets.c.low, counted).select_from(buckets))
             if n]
    timeless = total - sum(n for _, n in found)
    return total, found + ([(None, timeless)] if timeless else [])
