"""Groups: record counts per combination of up to three dimensions ("group by"), largest
first, capped — what a facet is for one dimension, for several at once, and over time.

A grouping is declared per listing (`GROUPINGS`): its dimensions (a column of the rows it
groups, or a time bucket of one) and what it counts. Residuals group their batches' tallies
(the residuals each batch first stored, and the sightings it recorded: the range semantics
of `residualFacets`), so the cost follows batches x combinations, not residuals; surfaces
and turns group their filtered rows. Time buckets are of the batch's ingest time (UTC), as
text that sorts as time does: `2026-12-06T07` (hour), `2026-12-06` (day), the Monday that
starts an ISO week (week), `2026-12` (month).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Date,
    Select,
    Subquery,
    cast,
    func,
    select,
)

from store.db.queries.as_of import Snapshot, snapshot_at
from store.db.queries.errors import QueryError
from store.db.queries.filters import ResidualFilter, SurfaceFilter, TurnFilter
from store.db.queries.listings import SURFACES, TURNS
from store.db.queries.pages import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from store.db.schema.tables import ingest_batches as batches_t
from store.db.schema.tables import residual_tallies as tallies_t
from store.db.schema.tables import surface_records as surfaces_t
from store.db.schema.tables import turns as turns_t

MAX_DIMENSIONS = 3
DEFAULT_GROUPS = DEFAULT_PAGE_SIZE
MAX_GROUPS = MAX_PAGE_SIZE


class TimeBucket(enum.Enum):
    HOUR = "hour"
    DAY = "day"
    WEEK = "week"
    MONTH = "month"


@dataclass(frozen=True, slots=True)
class Dimension:
    """One way to group: `column` names a column of the grouped rows; with `bucket`, that
    column holds an ISO 8601 UTC time (`2026-12-06T07:07:09.702915Z`) cut to the bucket."""

    name: str  # as the API names it: KIND, INGEST_DAY, ...
    column: str
    bucket: TimeBucket | None = None
    help: str = ""


@dataclass(frozen=True, slots=True)
class Group:
    values: tuple[str | None, ...]  # one per dimension asked for, in that order
    count: int  # records (first stored in the range, for residuals)
    occurrences: int  # their sightings (recorded in the range, for residuals)


@dataclass(frozen=True, slots=True)
class Groups:
    by: tuple[str, ...]
    total: int  # records over every group
    occurrences: int
    group_count: int  # groups in all, shown or not
    groups: list[Group]  # largest first (count, then sightings), then by values

    @property
    def has_more(self) -> bool:
        return self.group_count > len(self.groups)


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


@dataclass(frozen=True, slots=True)
class Grouping:
    """How one listing's records are grouped: the rows (filtered, as of a snapshot), each
    with the dimensions' columns and a record and sightings count."""

    dimensions: tuple[Dimension, ...]
    rows: Callable[[Any, Snapshot | None], Select[Any]]
    records: Callable[[Subquery], ColumnElement[Any]]  # per group, over the grouped rows
    sightings: Callable[[Subquery], ColumnElement[Any]]

    def dimension(self, name: str) -> Dimension:
        for dimension in self.dimensions:
            if dimension.name == name:
                return dimension
        raise QueryError(f"by: no dimension {name!r}; one of "
                         + ", ".join(d.name for d in self.dimensions))

    def groups(self, connection: Connection, by: Sequence[str], where: Any = None,
               first: int | None = None, as_of: int | None = None) -> Groups:
        """Counts per combination of the dimensions `by` over the records matching `where`
        (as of tree size `as_of`), the `first` largest (default DEFAULT_GROUPS)."""
        if not 1 <= len(by) <= MAX_DIMENSIONS:
            raise QueryError(f"by: between 1 and {MAX_DIMENSIONS} dimensions, got {len(by)}")
        if len(set(by)) != len(by):
            raise QueryError(f"by: a dimension given twice: {', '.join(by)}")
        limit = DEFAULT_GROUPS if first is None else first
        if not 0 <= limit <= MAX_GROUPS:
            raise QueryError(f"first: must be between 0 and {MAX_GROUPS}, got {limit}")
        dimensions = [self.dimension(name) for name in by]
        snapshot = snapshot_at(connection, as_of)
        rows = self.rows(where, snapshot).subquery("grouped_rows")
        dialect = connection.dialect.name
        keys = [(rows.c[d.column] if d.bucket is None
                 else bucketed(rows.c[d.column], d.bucket, dialect)).label(f"d{i}")
                for i, d in enumerate(dimensions)]
        grouped = (select(*keys, self.records(rows).label("n"),
                          self.sightings(rows).label("s"))
                   .select_from(rows).group_by(*keys).subquery("grouped"))
        total_row = connection.execute(select(
            func.count(), func.coalesce(func.sum(grouped.c.n), 0),
            func.coalesce(func.sum(grouped.c.s), 0))).one()
        values = [grouped.c[f"d{i}"] for i in range(len(dimensions))]
        page = connection.execute(
            select(grouped).order_by(grouped.c.n.desc(), grouped.c.s.desc(),
                                     *(v.asc().nulls_last() for v in values))
            .limit(limit)).all()
        # int(): PostgreSQL's sum() of integers is numeric.
        found = [Group(values=tuple(row[:len(dimensions)]), count=int(row.n),
                       occurrences=int(row.s)) for row in page]
        return Groups(by=tuple(by), total=int(total_row[1]), occurrences=int(total_row[2]),
                      group_count=int(total_row[0]), groups=found)


def _ingest_times(dimensions: Mapping[str, str]) -> tuple[Dimension, ...]:
    plain = tuple(Dimension(name, column, help=f"The {text}.")
                  for name, (column, text) in ((n, c.split("|")) for n, c in dimensions.items()))
    timed = tuple(Dimension(f"INGEST_{bucket.name}", "ingested_at", bucket,
                            f"The {bucket.value} (UTC) of the ingest of the batch that "
                            "stored it.") for bucket in TimeBucket)
    return plain + timed


def _residual_tallies(where: ResidualFilter | None, snapshot: Snapshot | None) -> Select[Any]:
    return (select(tallies_t, batches_t.c.ingested_at)
            .join(batches_t, batches_t.c.batch_id == tallies_t.c.batch_id)
            .where(*(where.conditions(tallies_t) if where else []),
                   *([] if snapshot is None else [snapshot.covers(tallies_t.c.batch_id)])))


def _with_ingest_time(listing_rows: Callable[[Any, Snapshot | None], Select[Any]],
                      batch_id: ColumnElement[Any]
                      ) -> Callable[[Any, Snapshot | None], Select[Any]]:
    def rows(where: Any, snapshot: Snapshot | None) -> Select[Any]:
        return (listing_rows(where, snapshot)
                .join(batches_t, batches_t.c.batch_id == batch_id)
                .add_columns(batches_t.c.ingested_at))
    return rows


def _summed(column: str) -> Callable[[Subquery], ColumnElement[Any]]:
    def summed(rows: Subquery) -> ColumnElement[Any]:
        return func.sum(rows.c[column])
    return summed


def _counted(rows: Subquery) -> ColumnElement[Any]:
    return func.count()


RESIDUAL_GROUPS = Grouping(
    _ingest_times({"KIND": "residual_kind|residual kind", "AXIS": "source_axis|source axis",
                   "ORGAN": "candidate_organ|candidate organ", "FAMILY": "family_id|family",
                   "CODE": "residual_code|residual code"}),
    _residual_tallies, _summed("residuals"), _summed("occurrences"))

SURFACE_GROUPS: Grouping = Grouping(
    _ingest_times({"GROUNDING_SOURCE": "grounding_source|grounding source",
                   "CORPUS": "corpus_id|teaching corpus", "CHAIN": "chain_id|teaching chain",
                   "PACK_VERSION": "pack_version|pack version",
                   "INTENT": "intent|intent", "FORM": "surface_form|surface form",
                   "VERIFICATION": "verification|verification"}),
    _with_ingest_time(lambda where, snapshot: SURFACES.rows(where, snapshot),
                      surfaces_t.c.batch_id),
    _counted, _summed("occurrence_count"))

TURN_GROUPS: Grouping = Grouping(
    _ingest_times({"KIND": "kind|turn kind",
                   "GROUNDING_SOURCE": "grounding_source|grounding source",
                   "VERIFICATION": "surface_verification|emitted surface's verification",
                   "CORPUS": "surface_corpus_id|emitted surface's teaching corpus",
                   "CHAIN": "surface_chain_id|emitted surface's teaching chain",
                   "EPISTEMIC_STATE": "epistemic_state|epistemic state",
                   "CLEARANCE": "normative_clearance|normative clearance",
                   "TRACE_INTEGRITY": "trace_integrity|trace integrity"}),
    _with_ingest_time(lambda where, snapshot: TURNS.rows(where, snapshot), turns_t.c.batch_id),
    _counted, _counted)

# The listings that group, by listing name.
GROUPINGS: Mapping[str, Grouping] = {
    "residuals": RESIDUAL_GROUPS, "surfaces": SURFACE_GROUPS, "turns": TURN_GROUPS}


def residual_groups(connection: Connection, by: Sequence[str],
                    where: ResidualFilter | None = None, first: int | None = None,
                    as_of: int | None = None) -> Groups:
    return RESIDUAL_GROUPS.groups(connection, by, where, first, as_of)


def surface_groups(connection: Connection, by: Sequence[str],
                   where: SurfaceFilter | None = None, first: int | None = None,
                   as_of: int | None = None) -> Groups:
    return SURFACE_GROUPS.groups(connection, by, where, first, as_of)


def turn_groups(connection: Connection, by: Sequence[str], where: TurnFilter | None = None,
                first: int | None = None, as_of: int | None = None) -> Groups:
    return TURN_GROUPS.groups(connection, by, where, first, as_of)
