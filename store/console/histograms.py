"""The histogram over time above a list: its filtered records counted per bucket of time, each
bar a link to the list filtered to that bucket. Residuals and surfaces by the ingest time of
the batch that stored them (the groups query layer's INGEST_* dimensions, filtered by
ingestedFrom/ingestedTo); turns by CORE's own time (the line's timestamp, filtered by
timeFrom/timeTo).

The bucket is the finest of hour, day, week and month that gives at most MAX_BARS bars; each
reading is bounded by MAX_GROUPS buckets (a coarser one is read when the finer holds more).
"""

from __future__ import annotations

import calendar
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, func, select

from store.console.charts import Column
from store.db.queries.as_of import snapshot_at
from store.db.queries.groups import GROUPINGS, MAX_GROUPS, TimeBucket
from store.db.queries.listing_declarations import TURNS
from store.db.queries.turns import on_fields
from store.db.schema.tables import ingest_batches as batches_t
from store.db.schema.tables import turn_fields as fields_t
from store.model.turn_fields import CORE_TIME_ORIGIN

MAX_BARS = 90
_HOUR = 3_600_000_000  # microseconds
_DAY = 24 * _HOUR
# CORE time counts microseconds from CORE_TIME_ORIGIN, the day before 0001-01-01
# (store/model/turn_fields.py): 0001-01-01T00:00:00Z is one day's microseconds.
_YEAR_ONE = datetime(1, 1, 1, tzinfo=UTC)
assert CORE_TIME_ORIGIN == "0000-12-31T00:00:00Z"


@dataclass(frozen=True, slots=True)
class Bucket:
    """One bar: its label, the inclusive bounds of its time (ISO 8601, UTC), its count."""

    label: str
    start: str
    end: str
    count: int


@dataclass(frozen=True, slots=True)
class Histogram:
    title: str  # "Residuals per day of ingest"
    time: str  # what is counted: "ingest" or "CORE time"
    bucket: str  # hour, day, week, month
    buckets: list[Bucket]
    untimed: int = 0  # records with no time of this kind (turns without a timestamp)
    bounds: tuple[str, str] = ("ingestedFrom", "ingestedTo")  # the filter each bar sets


def bucket_bounds(bucket: TimeBucket, value: str) -> tuple[str, str]:
    """A bucket's value as the groups layer spells it, as inclusive ISO 8601 bounds."""
    if bucket is TimeBucket.HOUR:  # 2026-12-06T07
        return f"{value}:00:00Z", f"{value}:59:59.999999Z"
    if bucket is TimeBucket.MONTH:  # 2026-12
        year, month = (int(part) for part in value.split("-"))
        last = calendar.monthrange(year, month)[1]
        return f"{value}-01T00:00:00Z", f"{value}-{last:02d}T23:59:59.999999Z"
    first = date.fromisoformat(value)  # a day, or the Monday that starts a week
    last_day = first + timedelta(days=6 if bucket is TimeBucket.WEEK else 0)
    return f"{first.isoformat()}T00:00:00Z", f"{last_day.isoformat()}T23:59:59.999999Z"


def ingest_histogram(connection: Connection, name: str, where: Any, as_of: int | None,
                     title: str) -> Histogram:
    """`name`'s records matching `where`, per bucket of their batch's ingest time."""
    grouping = GROUPINGS[name]
    for bucket in (TimeBucket.DAY, TimeBucket.WEEK, TimeBucket.MONTH):
        if bucket is TimeBucket.DAY and _one_ingest_day(connection, as_of):
            # Every batch on one day: the day's count is the hours' sum (read once; a
            # search's matches are read per reading).
            hours = grouping.groups(connection, ["INGEST_HOUR"], where, MAX_GROUPS, as_of)
            if 1 <= hours.group_count <= MAX_BARS:
                bucket, found = TimeBucket.HOUR, hours
            else:  # nothing matches: no bar, a day's chart
                found = grouping.groups(connection, ["INGEST_DAY"], where, MAX_GROUPS, as_of)
            break
        found = grouping.groups(connection, [f"INGEST_{bucket.name}"], where, MAX_GROUPS, as_of)
        if bucket is TimeBucket.DAY and found.group_count == 1:
            # One day: its hours, so the bars say when in the day (one bar stays readable).
            hours = grouping.groups(connection, ["INGEST_HOUR"], where, MAX_GROUPS, as_of)
            if hours.group_count <= MAX_BARS:
                bucket, found = TimeBucket.HOUR, hours
        if found.group_count <= MAX_BARS or bucket is TimeBucket.MONTH:
            break
    ordered = sorted((g for g in found.groups if g.values[0] is not None),
                     key=lambda g: str(g.values[0]))[-MAX_BARS:]
    buckets = [Bucket(_label(bucket, str(g.values[0])), *bucket_bounds(bucket, str(g.values[0])),
                      g.count) for g in ordered]
    return Histogram(f"{title} per {bucket.value} of ingest (UTC)", "ingest", bucket.value,
                     buckets)


def _one_ingest_day(connection: Connection, as_of: int | None) -> bool:
    """Whether every batch held as of tree size `as_of` was ingested on one day (UTC)."""
    held = [] if as_of is None else [batches_t.c.seq <= as_of]
    first, last = connection.execute(select(func.min(batches_t.c.ingested_at),
                                            func.max(batches_t.c.ingested_at))
                                     .where(*held)).one()
    return first is not None and first[:10] == last[:10]


def _label(bucket: TimeBucket, value: str) -> str:
    if bucket is TimeBucket.HOUR:
        return value.replace("T", " ") + ":00"
    if bucket is TimeBucket.WEEK:
        return f"week of {value}"
    return value


# Widths of CORE-time buckets (microseconds), finest first, and how a bar is named.
_CORE_WIDTHS: Sequence[tuple[str, int]] = (
    ("hour", _HOUR), ("day", _DAY), ("week", 7 * _DAY), ("4 weeks", 28 * _DAY),
    ("year", 364 * _DAY))


def _core_moment(micros: int) -> datetime:
    return _YEAR_ONE + timedelta(microseconds=micros - _DAY)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def core_time_histogram(connection: Connection, where: Any, as_of: int | None,
                        title: str = "Turns") -> Histogram:
    """Turns matching `where`, per bucket of CORE's own time (the line's timestamp)."""
    snapshot = snapshot_at(connection, as_of)
    source: Any
    if on_fields(where):
        # A filter on turn_fields alone (or none): read the turns' CORE times from turn_fields
        # (one row per turn, written with it; its core_time index), as the turn facets do,
        # not from every turn's wide row joined to its surface (0.66 s at 100k turns).
        source, at = fields_t, fields_t.c.core_time
        conditions = [*([] if where is None else where.conditions(fields_t)),
                      *([] if snapshot is None else [snapshot.covers(fields_t.c.batch_id)])]
    else:
        source = TURNS.rows(where, snapshot).subquery("timed_turns")
        at, conditions = source.c.fields_core_time, []
    low, high, untimed = connection.execute(select(
        func.min(at), func.max(at), func.count().filter(at.is_(None)))
        .select_from(source).where(*conditions)).one()
    if low is None:
        return Histogram(f"{title} per day of CORE time (UTC)", "CORE time", "day", [],
                         int(untimed or 0), ("timeFrom", "timeTo"))
    name, width = next(((n, w) for n, w in _CORE_WIDTHS
                        if (high // w) - (low // w) < MAX_BARS - 1), _CORE_WIDTHS[-1])
    # Weeks (and their multiples) start on a Monday, as the groups layer's INGEST_WEEK does:
    # 0001-01-01, one day after CORE time's origin, was a Monday.
    shift = _DAY if width % (7 * _DAY) == 0 else 0
    slot = ((at - shift) // width).label("slot")
    counted = connection.execute(
        select(slot, func.count()).select_from(source).where(at.is_not(None), *conditions)
        .group_by(slot).order_by(slot).limit(MAX_GROUPS)).all()
    buckets = []
    for number, count in counted[-MAX_BARS:]:
        start = _core_moment(int(number) * width + shift)
        end = start + timedelta(microseconds=width - 1)
        label = (start.strftime("%Y-%m-%d %H:00") if width == _HOUR
                 else start.date().isoformat() if width == _DAY
                 else f"{name} from {start.date().isoformat()}")
        buckets.append(Bucket(label, _iso(start), _iso(end), int(count)))
    return Histogram(f"{title} per {name} of CORE time (UTC)", "CORE time", name, buckets,
                     int(untimed or 0), ("timeFrom", "timeTo"))


def narrowed(given: Mapping[str, Sequence[str]], low: str, high: str, start: str, end: str
             ) -> dict[str, list[str]]:
    """The bounds a bar's link sets: its bucket's, within the bounds the page already has
    (a bucket at the edge of the page's range is only partly counted)."""
    def moment(text: str) -> datetime | None:
        try:
            found = datetime.fromisoformat(text.replace(" ", "+"))
        except ValueError:
            return None
        return found if found.utcoffset() is not None else found.replace(tzinfo=UTC)

    chosen = {}
    for name, own, later in ((low, start, True), (high, end, False)):
        kept = next(iter(given.get(name) or ()), None)
        mine, theirs = moment(own), None if kept is None else moment(kept)
        if theirs is not None and mine is not None and (theirs > mine if later
                                                         else theirs < mine):
            chosen[name] = [str(kept)]
        else:
            chosen[name] = [own]
    return chosen


def columns(histogram: Histogram, given: Mapping[str, Sequence[str]],
            href: Callable[[dict[str, list[str]]], str]) -> list[Column]:
    """The histogram's bars for charts.histogram, each linking to `href(bounds)`: the list
    filtered to its bucket (within the page's own bounds)."""
    low, high = histogram.bounds
    return [Column(b.label, b.count, href(narrowed(given, low, high, b.start, b.end)),
                   f"{b.label}: {b.count:,} — list them") for b in histogram.buckets]
