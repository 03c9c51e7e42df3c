"""Groups: record counts per combination of up to three dimensions ("group by"), largest
first, capped — what a facet is for one dimension, for several at once, and over time.

A grouping is declared per listing (`GROUPINGS`): its dimensions (a column of the rows it
groups, or a time bucket of one) and what it counts. Residuals group their batches' tallies
(the residuals each batch first stored, and the sightings it recorded: the range semantics
of `residualFacets`), so the cost follows batches x combinations, not residuals; a search
its matches' residual record tallies; turns group their batches' turn tallies where those
answer (turn_tally_rows.py), else their filtered rows, as surfaces do. Time buckets are of the
batch's ingest time (UTC), or of CORE's own time where a record has one (a turn's timestamp; a
surface's sightings emitted by a turn), as text that sorts as time does: `2026-12-06T07`
(hour), `2026-12-06` (day), the Monday that starts an ISO week (week), `2026-12` (month).

Surfaces grouped by what only a sighting says (its prompt, session, or the CORE time of the
turn that emitted it) are grouped sighting by sighting: a group counts the distinct surfaces
seen so, and the sightings; a surface seen with two prompts is in both groups, and the total
counts it once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    FromClause,
    Select,
    Subquery,
    Table,
    distinct,
    func,
    literal,
    select,
    union_all,
)

from store.db.queries.as_of import Snapshot, held, snapshot_at
from store.db.queries.errors import QueryError
from store.db.queries.filters import ResidualFilter, SurfaceFilter, TurnFilter, tables_read
from store.db.queries.listing_declarations import SURFACES
from store.db.queries.pages import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from store.db.queries.search import Searched, record_tallies
from store.db.queries.time_buckets import (  # TimeBucket: callers import it from here
    TimeBucket as TimeBucket,
)
from store.db.queries.time_buckets import bucketed, core_bucketed
from store.db.queries.turn_tally_rows import tallied_turn_rows
from store.db.queries.turns import fields_semi_join
from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import ingest_batches as batches_t
from store.db.schema.tables import residual_occurrences as occurrences_t
from store.db.schema.tables import surface_occurrences as sightings_t
from store.db.schema.tables import surface_records as surfaces_t
from store.db.schema.tables import turn_fields as turn_fields_t
from store.db.schema.tables import turns as turns_t
from store.db.schema.tally_tables import TALLY_DIMENSIONS
from store.db.schema.tally_tables import residual_tallies as tallies_t

MAX_DIMENSIONS = 3
DEFAULT_GROUPS = DEFAULT_PAGE_SIZE
MAX_GROUPS = MAX_PAGE_SIZE


@dataclass(frozen=True, slots=True)
class Dimension:
    """One way to group: `column` names a column of the grouped rows; with `bucket`, that
    column holds an ISO 8601 UTC time (`2026-12-06T07:07:09.702915Z`) cut to the bucket, or,
    `core`, CORE's own time as turn_fields.core_time counts it (microseconds since
    CORE_TIME_ORIGIN)."""

    name: str  # as the API names it: KIND, INGEST_DAY, CORE_DAY, ...
    column: str
    bucket: TimeBucket | None = None
    help: str = ""
    core: bool = False
    per_sighting: bool = False  # only a sighting says it: grouped sighting by sighting


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


def _key(rows: FromClause, dimension: Dimension, dialect: str) -> ColumnElement[Any]:
    column = rows.c[dimension.column]
    if dimension.bucket is None:
        return column
    if dimension.core:
        return core_bucketed(column, dimension.bucket, dialect)
    return bucketed(column, dimension.bucket, dialect)


# The rows a grouping counts, given the filter, the snapshot and the dimensions asked for
# (so that only the joins those need are made).
Rows = Callable[[Any, Snapshot | None, Sequence[Dimension]], Select[Any]]


@dataclass(frozen=True, slots=True)
class Grouping:
    """How one listing's records are grouped: the rows (filtered, as of a snapshot), each
    with the dimensions' columns and a record and sightings count. With `distinct`, the
    records of a group are counted distinct (rows are sightings) and so is the total."""

    dimensions: tuple[Dimension, ...]
    rows: Rows
    records: Callable[[Subquery], ColumnElement[Any]]  # per group, over the grouped rows
    sightings: Callable[[Subquery], ColumnElement[Any]]
    distinct: Callable[[Sequence[Dimension]], bool] = lambda dimensions: False

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
        rows = self.rows(where, snapshot, dimensions).subquery("grouped_rows")
        dialect = connection.dialect.name
        keys = [_key(rows, d, dialect).label(f"d{i}") for i, d in enumerate(dimensions)]
        grouped = (select(*keys, self.records(rows).label("n"),
                          self.sightings(rows).label("s"))
                   .select_from(rows).group_by(*keys).subquery("grouped"))
        values = [grouped.c[f"d{i}"] for i in range(len(dimensions))]
        # One pass: the totals over every group ride on each row shown (window sums run
        # before LIMIT), so the grouping is not computed twice.
        page = connection.execute(
            select(grouped, func.count().over().label("groups_in_all"),
                   func.sum(grouped.c.n).over().label("records_in_all"),
                   func.sum(grouped.c.s).over().label("sightings_in_all"))
            .order_by(grouped.c.n.desc(), grouped.c.s.desc(),
                      *(v.asc().nulls_last() for v in values))
            .limit(max(limit, 1))).all()
        # int(): PostgreSQL's sum() of integers is numeric.
        total_row: tuple[Any, ...] = ((page[0].groups_in_all, page[0].records_in_all,
                                       page[0].sightings_in_all) if page else (0, 0, 0))
        if self.distinct(dimensions):  # a record in several groups is one record in all
            over = connection.execute(select(self.records(rows), self.sightings(rows))
                                      .select_from(rows)).one()
            total_row = (total_row[0], over[0] or 0, over[1] or 0)
        found = [Group(values=tuple(row[:len(dimensions)]), count=int(row.n),
                       occurrences=int(row.s)) for row in page[:limit]]
        return Groups(by=tuple(by), total=int(total_row[1]), occurrences=int(total_row[2]),
                      group_count=int(total_row[0]), groups=found)


def _ingest_times(dimensions: Mapping[str, str],
                  core_time: str | None = None) -> tuple[Dimension, ...]:
    """The plain dimensions ("NAME": "column|what it is"; a column ending `@sighting` is one
    only a sighting says), the ingest-time buckets and, with `core_time` (which turn's
    time), CORE-time buckets."""
    plain = tuple(Dimension(name, column.removesuffix("@sighting"), help=f"The {text}.",
                            per_sighting=column.endswith("@sighting"))
                  for name, (column, text) in ((n, c.split("|")) for n, c in dimensions.items()))
    timed = tuple(Dimension(f"INGEST_{bucket.name}", "ingested_at", bucket,
                            f"The {bucket.value} (UTC) of the ingest of the batch that "
                            "stored it.") for bucket in TimeBucket)
    core = () if core_time is None else tuple(
        Dimension(f"CORE_{bucket.name}", "core_time", bucket,
                  f"The {bucket.value} (UTC) of CORE's own time: {core_time} (null: none, "
                  "or one without an offset).", core=True,
                  per_sighting=core_time.startswith("the sighting"))
        for bucket in TimeBucket)
    return plain + timed + core


def _residual_tallies(where: ResidualFilter | None, snapshot: Snapshot | None,
                      dimensions: Sequence[Dimension] = ()) -> Select[Any]:
    if isinstance(where, Searched) and (rows := record_tallies(where, snapshot, True)) is not None:
        return rows  # a search: its matches' rows of the record tallies
    if where is not None and where.has_ids():  # the tallies hold no ids: the rows, counted
        return _residual_rows(where, snapshot)
    return (select(tallies_t, batches_t.c.ingested_at)
            .join(batches_t, batches_t.c.batch_id == tallies_t.c.batch_id)
            .where(*(where.conditions(tallies_t) if where else []),
                   *([] if snapshot is None else [snapshot.covers(tallies_t.c.batch_id)])))


def _residual_rows(where: ResidualFilter, snapshot: Snapshot | None) -> Select[Any]:
    """Rows shaped as the tallies (a residual counted by the batch that first stored it, a
    sighting by the batch that recorded it), for a filter of residual ids."""
    dimensions = [residuals_t.c[name] for name in TALLY_DIMENSIONS]
    stored = (select(*dimensions, literal(1).label("residuals"),
                     literal(0).label("occurrences"), batches_t.c.ingested_at)
              .join(batches_t, batches_t.c.batch_id == residuals_t.c.batch_id)
              .where(*where.conditions(), *held(snapshot, residuals_t)))
    seen = (select(*dimensions, literal(0).label("residuals"),
                   literal(1).label("occurrences"), batches_t.c.ingested_at)
            .select_from(occurrences_t.join(
                residuals_t, residuals_t.c.residual_id == occurrences_t.c.residual_id).join(
                batches_t, batches_t.c.batch_id == occurrences_t.c.batch_id))
            .where(*where.without_range().conditions(),
                   *where.batch_conditions(occurrences_t.c.batch_id),
                   *held(snapshot, occurrences_t)))
    return select(union_all(stored, seen).subquery("tallied_rows"))


def _summed(column: str) -> Callable[[Subquery], ColumnElement[Any]]:
    def summed(rows: Subquery) -> ColumnElement[Any]:
        return func.sum(rows.c[column])
    return summed


def _turns_counted(rows: Subquery) -> ColumnElement[Any]:
    """Turns: tally rows (with `turns`) summed, turn rows counted."""
    return func.sum(rows.c.turns) if "turns" in rows.c else func.count()


def _joined_rows(base: Table, columns: Mapping[str, ColumnElement[Any]],
                 joins: Sequence[tuple[Table, ColumnElement[bool], bool]], where: Any,
                 snapshot: Snapshot | None, dimensions: Sequence[Dimension],
                 extra: Sequence[ColumnElement[Any]] = (),
                 conditions: Sequence[ColumnElement[bool]] | None = None) -> Select[Any]:
    """`base`'s rows with the dimensions' columns (by label, from `columns`), joined only to
    the tables (`joins`: table, on, outer) those columns or `where` read, filtered (by
    `where`'s conditions, or by `conditions` that stand for them) and held as of
    `snapshot`."""
    # Each column once: two buckets of one time (CORE_DAY, CORE_HOUR) cut the same column.
    wanted = [columns[name].label(name) for name in dict.fromkeys(d.column for d in dimensions)]
    if conditions is None:
        conditions = where.conditions() if where is not None else []
    needed = tables_read(*conditions, *wanted)
    for table, on, _ in reversed(joins):  # a join needs the tables its condition reads
        if table in needed:
            needed |= tables_read(on)
    source: FromClause = base
    for table, on, outer in joins:
        if table in needed:
            source = source.join(table, on, isouter=outer)
    return (select(*wanted, *extra).select_from(source)
            .where(*conditions, *held(snapshot, base)))


_INGEST = {"ingested_at": batches_t.c.ingested_at}
_SURFACE_COLUMNS: Mapping[str, ColumnElement[Any]] = {
    name: surfaces_t.c[name] for name in (
        "grounding_source", "corpus_id", "chain_id", "pack_version", "intent", "surface_form",
        "verification", "checked_against")} | _INGEST


def _surface_rows(where: SurfaceFilter | None, snapshot: Snapshot | None,
                  dimensions: Sequence[Dimension]) -> Select[Any]:
    """One row per surface with its sightings (as `SURFACES` counts them), or, when a
    dimension only a sighting says is asked for, one row per sighting."""
    if not any(d.per_sighting for d in dimensions):
        return (SURFACES.rows(where, snapshot)
                .join(batches_t, batches_t.c.batch_id == surfaces_t.c.batch_id)
                .add_columns(batches_t.c.ingested_at))
    columns = {**_SURFACE_COLUMNS, "prompt": sightings_t.c.prompt,
               "session_id": sightings_t.c.session_id, "core_time": turn_fields_t.c.core_time}
    return _joined_rows(sightings_t, columns, (
        (surfaces_t, surfaces_t.c.surface_id == sightings_t.c.surface_id, False),
        (batches_t, batches_t.c.batch_id == surfaces_t.c.batch_id, False),
        # outer: a sighting no turn emitted has no CORE time
        (turn_fields_t, turn_fields_t.c.turn_key == sightings_t.c.turn_key, True),
    ), where, snapshot, dimensions, extra=[sightings_t.c.surface_id])


_TURN_COLUMNS: Mapping[str, ColumnElement[Any]] = {
    "kind": turns_t.c.kind, "grounding_source": turns_t.c.grounding_source,
    "epistemic_state": turns_t.c.epistemic_state,
    "normative_clearance": turns_t.c.normative_clearance,
    "trace_integrity": turns_t.c.trace_integrity, "prompt": turns_t.c.prompt,
    "surface_verification": surfaces_t.c.verification,
    "surface_corpus_id": surfaces_t.c.corpus_id, "surface_chain_id": surfaces_t.c.chain_id,
    "surface_pack_version": surfaces_t.c.pack_version, "surface_surface": surfaces_t.c.surface,
    "core_time": turn_fields_t.c.core_time} | _INGEST


def _turn_rows(where: TurnFilter | None, snapshot: Snapshot | None,
               dimensions: Sequence[Dimension]) -> Select[Any]:
    """The batches' tally rows where they answer (turn_tally_rows.py); otherwise one row per
    turn, joined to its surface, its fields and its batch only as needed."""
    tallied = tallied_turn_rows(where, snapshot, dimensions)
    if tallied is not None:
        return tallied
    conditions = where.conditions() if where is not None else []
    if all(_TURN_COLUMNS[d.column].table is not turn_fields_t for d in dimensions):
        conditions = fields_semi_join(where, conditions) or conditions
    return _joined_rows(turns_t, _TURN_COLUMNS, (
        (surfaces_t, surfaces_t.c.surface_id == turns_t.c.surface_id, False),
        # outer: a missing fields row (verify names it) hides no turn
        (turn_fields_t, turn_fields_t.c.turn_key == turns_t.c.turn_key, True),
        (batches_t, batches_t.c.batch_id == turns_t.c.batch_id, False),
    ), where, snapshot, dimensions, conditions=conditions)


RESIDUAL_GROUPS = Grouping(
    _ingest_times({"KIND": "residual_kind|residual kind", "AXIS": "source_axis|source axis",
                   "ORGAN": "candidate_organ|candidate organ", "FAMILY": "family_id|family",
                   "CODE": "residual_code|residual code"}),
    _residual_tallies, _summed("residuals"), _summed("occurrences"))


def _surface_records(rows: Subquery) -> ColumnElement[Any]:
    return (func.count(distinct(rows.c.surface_id)) if "occurrence_count" not in rows.c
            else func.count())


def _surface_sightings(rows: Subquery) -> ColumnElement[Any]:
    return (func.count() if "occurrence_count" not in rows.c
            else func.sum(rows.c.occurrence_count))


SURFACE_GROUPS: Grouping = Grouping(
    _ingest_times({"GROUNDING_SOURCE": "grounding_source|grounding source",
                   "CORPUS": "corpus_id|teaching corpus", "CHAIN": "chain_id|teaching chain",
                   "PACK_VERSION": "pack_version|pack version",
                   "INTENT": "intent|intent", "FORM": "surface_form|surface form",
                   "VERIFICATION": "verification|verification",
                   "CHECKED_AGAINST": "checked_against|files the verification was checked "
                                      "against (corpus and pack ids, versions and sha256, as "
                                      "canonical JSON; compare teachingRegistry)",
                   "PROMPT": "prompt@sighting|prompt of a sighting",
                   "SESSION": "session_id@sighting|session of a sighting"},
                  core_time="the sighting's turn's timestamp"),
    _surface_rows, _surface_records, _surface_sightings,
    distinct=lambda dimensions: any(d.per_sighting for d in dimensions))

TURN_GROUPS: Grouping = Grouping(
    _ingest_times({"KIND": "kind|turn kind",
                   "GROUNDING_SOURCE": "grounding_source|grounding source",
                   "VERIFICATION": "surface_verification|emitted surface's verification",
                   "CORPUS": "surface_corpus_id|emitted surface's teaching corpus",
                   "CHAIN": "surface_chain_id|emitted surface's teaching chain",
                   "EPISTEMIC_STATE": "epistemic_state|epistemic state",
                   "CLEARANCE": "normative_clearance|normative clearance",
                   "TRACE_INTEGRITY": "trace_integrity|trace integrity",
                   "PACK_VERSION": "surface_pack_version|emitted surface's pack version",
                   "PROMPT": "prompt|prompt",
                   "SURFACE": "surface_surface|emitted surface's text"},
                  core_time="the turn's timestamp"),
    _turn_rows, _turns_counted, _turns_counted)

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
