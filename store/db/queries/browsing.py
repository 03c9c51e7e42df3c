"""Reads the auditor's console needs beyond the API's: assessment and batch facets, a batch
filter, the ingest timeline, and a turn's neighbours in its journal."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, func, select

from store.db.log.stored_log import latest_head
from store.db.queries.as_of import Snapshot, held, snapshot_at
from store.db.queries.batches import BATCH_RECORD
from store.db.queries.facets import facet_counts
from store.db.queries.filters import AssessmentFilter, any_of
from store.db.queries.keys import key_value
from store.db.queries.listing_declarations import BATCHES
from store.db.queries.orders import COLUMN_ORDERS, Order, in_seq_order
from store.db.queries.pages import count_rows, page_of
from store.db.queries.ranges import BatchRange
from store.db.queries.records import Batch, FacetCount, Page
from store.db.schema.tables import contract_assessments as assessments_t
from store.db.schema.tables import ingest_batches as batches_t
from store.db.schema.tables import tree_heads
from store.db.schema.tables import turns as turns_t
from store.model.taxonomy import family_of
from store.model.turns import TurnKind


@dataclass(frozen=True, slots=True)
class BatchFilter(BatchRange):
    """Batches by record type and source (any-of lists, ANDed), and by id and time range."""

    record_type: Sequence[str] | None = None
    source: Sequence[str] | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        found = [any_of(column, values) for column, values in (
            (batches_t.c.record_type, self.record_type), (batches_t.c.source, self.source))
            if values]
        return [*found, *self.batch_conditions(batches_t.c.batch_id)]


@dataclass(frozen=True, slots=True)
class Facets:
    """Per-field value counts over a filtered list; `fields` maps a filter field to its list
    (for some, only its first values: `value_counts` says how many it has in all)."""

    total: int
    fields: dict[str, list[FacetCount]]
    value_counts: dict[str, int] = field(default_factory=dict)  # default: the list's length

    def value_count(self, name: str) -> int:
        return self.value_counts.get(name, len(self.fields[name]))


def _batches(where: BatchFilter | None, snapshot: Snapshot | None) -> Select[Any]:
    return select(batches_t).where(*(where.conditions() if where else []),
                                   *held(snapshot, batches_t))


def list_batches_where(connection: Connection, where: BatchFilter | None = None,
                       first: int | None = None, after: str | None = None, *,
                       last: int | None = None, before: str | None = None,
                       order: Order = Order.OLDEST_FIRST, as_of: int | None = None
                       ) -> Page[Batch]:
    statement = _batches(where, snapshot_at(connection, as_of))
    listing = (BATCHES.sorted_by(connection, order, statement) if order in COLUMN_ORDERS
               else in_seq_order(order, statement, batches_t.c.seq, listing="batches"))
    return page_of(connection, listing, order, BATCH_RECORD, first, after, last, before)


def count_batches_where(connection: Connection, where: BatchFilter | None = None,
                        as_of: int | None = None) -> int:
    return count_rows(connection, _batches(where, snapshot_at(connection, as_of))
                      .with_only_columns(batches_t.c.seq))


def batch_facets(connection: Connection, where: BatchFilter | None = None,
                 as_of: int | None = None) -> Facets:
    combos = (_batches(where, snapshot_at(connection, as_of))
              .with_only_columns(batches_t.c.record_type, batches_t.c.source,
                                 func.count().label("n"), func.count().label("s"))
              .group_by(batches_t.c.record_type, batches_t.c.source).cte("combos"))
    total, _, (by_type, by_source) = facet_counts(connection, combos,
                                                  ("record_type", "source"))
    return Facets(total, {"recordType": by_type, "source": by_source})


def assessment_facets(connection: Connection, where: AssessmentFilter | None = None,
                      as_of: int | None = None) -> Facets:
    """Per organ, family (through the organ map) and runnable, from the assessments counted
    per (organ, runnable): a walk of that index. As of an older head, the rows appended
    since are counted off (a range of the seq index) when they are the fewer."""
    snapshot = snapshot_at(connection, as_of)
    conditions = where.conditions() if where else []
    groups = _assessment_groups(connection, conditions)
    if snapshot is not None and snapshot.tree_size < latest_head(connection).size:
        later = assessments_t.c.seq > snapshot.tree_size
        appended = connection.execute(select(func.count()).where(later)).scalar_one()
        if appended * 2 < sum(groups.values()):
            for group, n in _assessment_groups(connection, [*conditions, later]).items():
                groups[group] -= n
        else:
            groups = _assessment_groups(connection, [*conditions,
                                                     *held(snapshot, assessments_t)])
    organs: dict[str, int] = {}
    runnable: dict[str, int] = {}
    families: dict[str | None, int] = {}
    for (organ, is_runnable), n in groups.items():
        if n:
            organs[organ] = organs.get(organ, 0) + n
            runnable[is_runnable] = runnable.get(is_runnable, 0) + n
            families[family_of(organ)] = families.get(family_of(organ), 0) + n
    return Facets(sum(organs.values()), {"organ": _by_count(organs),
                                         "familyId": _by_count(families),
                                         "runnable": _by_count(runnable)})


def _assessment_groups(connection: Connection, conditions: Sequence[ColumnElement[bool]]
                       ) -> dict[tuple[str, str], int]:
    """Assessments counted per (candidate_organ, runnable) — grouped by the columns
    themselves, so the (candidate_organ, runnable) index serves it; runnable spelled as the
    filter takes it."""
    rows = connection.execute(
        select(assessments_t.c.candidate_organ, assessments_t.c.runnable, func.count())
        .where(*conditions)
        .group_by(assessments_t.c.candidate_organ, assessments_t.c.runnable))
    found: dict[tuple[str, str], int] = {}
    for organ, is_runnable, n in rows:
        key = (organ, _boolean(is_runnable) or "false")
        found[key] = found.get(key, 0) + int(n)
    return found


def _by_count(counts: dict[Any, int]) -> list[FacetCount]:
    """Most first, then by value (a null last): as facet_counts orders them."""
    return [FacetCount(value=value, count=n, occurrences=n) for value, n in
            sorted(counts.items(), key=lambda item: (-item[1], item[0] is None, item[0] or ""))]


def _boolean(value: Any) -> str | None:
    return None if value is None else ("true" if value in (True, 1, "1", "true") else "false")


@dataclass(frozen=True, slots=True)
class TimelinePoint:
    day: str  # YYYY-MM-DD (UTC), from ingested_at
    batches: int
    new_rows: int


def ingest_timeline(connection: Connection, as_of: int | None = None) -> list[TimelinePoint]:
    """Batches and the rows they added, per UTC day of ingest, oldest first."""
    snapshot = snapshot_at(connection, as_of)
    day = func.substr(batches_t.c.ingested_at, 1, 10)
    rows = connection.execute(
        select(day.label("day"), func.count().label("batches"),
               func.sum(batches_t.c.new_rows).label("new_rows"))
        .where(*held(snapshot, batches_t)).group_by(day).order_by(day)).all()
    return [TimelinePoint(row.day, int(row.batches), int(row.new_rows or 0)) for row in rows]


@dataclass(frozen=True, slots=True)
class JournalNeighbours:
    """The turns before and after one turn in its journal (None at either end)."""

    journal: str | None  # the journal's source name, or None for a turn outside a journal
    previous: str | None  # turn_key
    next: str | None


def journal_neighbours(connection: Connection, turn_key: str,
                       as_of: int | None = None) -> JournalNeighbours:
    """A Workbench journal is the file its batches came from (same `source`), its turns in
    turn_id order across every ingest of it; other turns follow their source in append order."""
    snapshot = snapshot_at(connection, as_of)
    me = connection.execute(
        select(turns_t.c.kind, turns_t.c.turn_id, turns_t.c.seq, batches_t.c.source)
        .join(batches_t, batches_t.c.batch_id == turns_t.c.batch_id)
        .where(turns_t.c.turn_key == turn_key)).first()
    if me is None:
        return JournalNeighbours(None, None, None)
    journal = me.kind == TurnKind.WORKBENCH_JOURNAL.value and me.turn_id is not None
    key = turns_t.c.turn_id if journal else turns_t.c.seq
    mine = me.turn_id if journal else me.seq
    same = (select(turns_t.c.turn_key)
            .join(batches_t, batches_t.c.batch_id == turns_t.c.batch_id)
            .where(batches_t.c.source == me.source, turns_t.c.kind == me.kind,
                   *held(snapshot, turns_t)))

    def nearest(condition: ColumnElement[bool], ordering: Any) -> str | None:
        found = connection.execute(same.where(condition).order_by(ordering, turns_t.c.seq)
                                   .limit(1)).scalar()
        return None if found is None else str(found)

    return JournalNeighbours(
        journal=me.source if journal else None,
        previous=nearest(key < mine, key.desc()),
        next=nearest(key > mine, key.asc()))


@dataclass(frozen=True, slots=True)
class BatchHead:
    batch: Batch
    tree_size: int | None  # the tree head the batch ended with
    root_hash: str | None


def batch_by_id(connection: Connection, batch_id: int, as_of: int | None = None
                ) -> BatchHead | None:
    snapshot = snapshot_at(connection, as_of)
    row = connection.execute(
        select(batches_t, tree_heads.c.tree_size.label("head_size"),
               tree_heads.c.root_hash.label("head_root"))
        .outerjoin(tree_heads, tree_heads.c.batch_id == batches_t.c.batch_id)
        .where(batches_t.c.batch_id == key_value(batch_id), *held(snapshot, batches_t))).first()
    if row is None:
        return None
    return BatchHead(BATCH_RECORD(row), row.head_size, row.head_root)


@dataclass(frozen=True, slots=True)
class LoggedHead:
    tree_size: int
    root_hash: str
    batch_id: int
    source: str
    ingested_at: str


def tree_heads_page(connection: Connection, below: int | None = None, limit: int = 50
                    ) -> list[LoggedHead]:
    """Tree heads, newest first, with their batch; `below`: only sizes under it."""
    statement = (select(tree_heads.c.tree_size, tree_heads.c.root_hash, tree_heads.c.batch_id,
                        batches_t.c.source, batches_t.c.ingested_at)
                 .join(batches_t, batches_t.c.batch_id == tree_heads.c.batch_id)
                 .order_by(tree_heads.c.tree_size.desc()).limit(limit))
    if below is not None:
        statement = statement.where(tree_heads.c.tree_size < key_value(below))
    return [LoggedHead(r.tree_size, r.root_hash, r.batch_id, r.source, r.ingested_at)
            for r in connection.execute(statement)]
