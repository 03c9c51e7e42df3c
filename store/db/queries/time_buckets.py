"""Time buckets in SQL: a time cut to its hour, day, ISO week or month, as text that sorts
as time does (`2026-12-06T07`, `2026-12-06`, the Monday that starts the week, `2026-12`),
the same on SQLite and PostgreSQL.

An ingest time (ISO 8601 UTC text) is cut by `bucketed`; CORE's own time (turn_fields.
core_time, microseconds since CORE_TIME_ORIGIN) by `core_bucketed`, in UTC, as the same
text. The groupings (groups.py) group by them, over turns' rows or their tallies (whose
CORE hour is a whole UTC hour: every bucket is a sum of hours).
"""

from __future__ import annotations

import enum
from typing import Any

from sqlalchemy import ColumnElement, Date, cast, func


class TimeBucket(enum.Enum):
    HOUR = "hour"
    DAY = "day"
    WEEK = "week"
    MONTH = "month"


# CORE's time of the Unix epoch, in turn_fields.core_time's microseconds.
UNIX_EPOCH_CORE_TIME = 62_135_683_200_000_000


def bucketed(column: ColumnElement[Any], bucket: TimeBucket, dialect: str
             ) -> ColumnElement[Any]:
    """`column` (ISO 8601 UTC text) cut to its bucket, as text that sorts as time does."""
    if bucket is TimeBucket.HOUR:
        return func.substr(column, 1, 13)
    if bucket is TimeBucket.DAY:
        return func.substr(column, 1, 10)
    if bucket is TimeBucket.MONTH:
        return func.substr(column, 1, 7)
    day = func.substr(column, 1, 10)
    if dialect == "sqlite":  # the Sunday on or after the day, less six days: its Monday
        return func.date(day, "weekday 0", "-6 days")
    return func.to_char(func.date_trunc("week", cast(day, Date)), "YYYY-MM-DD")


_MICROSECONDS = 1_000_000
_SQLITE_FORMATS = {TimeBucket.HOUR: "%Y-%m-%dT%H", TimeBucket.DAY: "%Y-%m-%d",
                   TimeBucket.MONTH: "%Y-%m"}
_PG_FORMATS = {TimeBucket.HOUR: 'YYYY-MM-DD"T"HH24', TimeBucket.DAY: "YYYY-MM-DD",
               TimeBucket.WEEK: "YYYY-MM-DD", TimeBucket.MONTH: "YYYY-MM"}


def core_bucketed(column: ColumnElement[Any], bucket: TimeBucket, dialect: str
                  ) -> ColumnElement[Any]:
    """`column` (CORE's time, turn_fields.core_time) cut to its bucket in UTC, as the same
    text `bucketed` gives an ingest time."""
    # Whole seconds from CORE_TIME_ORIGIN (never negative: floor), then from the Unix epoch.
    seconds = (column // _MICROSECONDS) - UNIX_EPOCH_CORE_TIME // _MICROSECONDS
    if dialect == "sqlite":
        if bucket is TimeBucket.WEEK:  # the Sunday on or after the day, less six days
            return func.date(seconds, "unixepoch", "weekday 0", "-6 days")
        return func.strftime(_SQLITE_FORMATS[bucket], seconds, "unixepoch")
    utc = func.timezone("UTC", func.to_timestamp(seconds))
    if bucket is TimeBucket.WEEK:
        utc = func.date_trunc("week", utc)
    return func.to_char(utc, _PG_FORMATS[bucket])
