"""Filters: any-of lists per field, ANDed across fields, and batch ranges, as SQL conditions."""

from __future__ import annotations

import typing
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any, ClassVar, NewType

from sqlalchemy import (
    Column,
    ColumnElement,
    Table,
    false,
    or_,
)
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.selectable import SelectBase

from store.db.queries.errors import LimitExceeded, QueryError
from store.db.queries.keys import key_value
from store.db.queries.pages import MAX_PAGE_SIZE
from store.db.queries.ranges import BatchRange, range_parameter
from store.db.queries.statement_shapes import Shaped, Slot, SlotList
from store.db.schema.tables import contract_assessments as assessments_t
from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import surface_records as surfaces_t
from store.db.schema.tables import turn_fields as turn_fields_t
from store.db.schema.tables import turns as turns_t
from store.model.journal_digest import TraceIntegrity
from store.model.surface_records import SurfaceForm, SurfaceVerification
from store.model.taxonomy import (
    FAMILY_BY_ORGAN,
    ResidualKind,
    ResidualSourceAxis,
)
from store.model.teaching_surface import GroundingSource
from store.model.turn_fields import core_time
from store.model.turns import NormativeClearance, TurnKind

# A record's id as a filter takes it: GraphQL's ID.
RecordId = NewType("RecordId", str)

MAX_IDS = MAX_PAGE_SIZE  # ids one filter field takes: a page's worth


def on(column: Column[Any]) -> Any:
    """A filter field matched as any-of against `column` (enum members by stored value)."""
    return field(default=None, metadata={"column": column})


def ids(column: Column[Any], argument: str) -> Any:
    """A filter field of record ids (GraphQL `[ID!]`, named `argument`), any-of against
    `column`: at most MAX_IDS of them, as a page holds at most MAX_PAGE_SIZE records."""
    return field(default=None, metadata={"column": column, "ids": argument})


@dataclass(frozen=True, slots=True)
class ColumnFilter(BatchRange):
    """A filter whose fields name their columns (`on`): each any-of, ANDed, and the batch
    range on `_table`'s batch_id."""

    _table: ClassVar[Table]

    def has_ids(self) -> bool:
        """Whether an id list constrains it."""
        return any(f.metadata.get("ids") and getattr(self, f.name) for f in fields(self))

    def without_range(self) -> ColumnFilter:
        """The same filter over every batch."""
        return replace(self, batch_id_from=None, batch_id_to=None, ingested_from=None,
                       ingested_to=None)

    def conditions(self, table: Table | None = None) -> list[ColumnElement[bool]]:
        """On the columns the fields name, or on `table`'s columns of the same names.
        LimitExceeded for an id list longer than MAX_IDS."""
        found: list[ColumnElement[bool]] = []
        for each in fields(self):
            column, values = each.metadata.get("column"), getattr(self, each.name)
            if values:
                checked_ids(each, values)
            if column is not None and values:
                found.append(any_of(column if table is None else table.c[column.name],
                                    enum_values(values) or []))
        batch_id = (self._table if table is None else table).c.batch_id
        return [*found, *self.batch_conditions(batch_id)]


@dataclass(frozen=True, slots=True)
class ResidualFilter(ColumnFilter):
    """Each field is a list matched as any-of; fields are ANDed. None or [] = no constraint.
    The batch range is on the batch that first stored the residual. Its conditions apply to
    contract_residuals, or to residual_tallies (same column names)."""

    _table = residuals_t
    residual_id: Sequence[str] | None = ids(residuals_t.c.residual_id, "residualId")
    organ: Sequence[str] | None = on(residuals_t.c.candidate_organ)
    family_id: Sequence[str | None] | None = on(residuals_t.c.family_id)
    kind: Sequence[ResidualKind] | None = on(residuals_t.c.residual_kind)
    axis: Sequence[ResidualSourceAxis] | None = on(residuals_t.c.source_axis)
    code: Sequence[str] | None = on(residuals_t.c.residual_code)


@dataclass(frozen=True, slots=True)
class AssessmentFilter(ColumnFilter):
    """Any-of lists, ANDed; `runnable` None = both. `family_id` goes through the organ map."""

    _table = assessments_t
    assessment_id: Sequence[str] | None = ids(assessments_t.c.assessment_id, "assessmentId")
    organ: Sequence[str] | None = on(assessments_t.c.candidate_organ)
    family_id: Sequence[str] | None = None
    runnable: bool | None = None
    source_ref: Sequence[str | None] | None = on(assessments_t.c.source_ref)
    batch_id: Sequence[int] | None = on(assessments_t.c.batch_id)

    def conditions(self, table: Table | None = None) -> list[ColumnElement[bool]]:
        found = ColumnFilter.conditions(self)
        if self.family_id:
            # Families are a domain mapping, not a column: filter by the organs they name.
            wanted = set(self.family_id)
            organs = [o for o, f in FAMILY_BY_ORGAN.items() if f in wanted]
            found.append(assessments_t.c.candidate_organ.in_(organs))
        if self.runnable is not None:
            found.append(assessments_t.c.runnable.is_(self.runnable))
        return found


@dataclass(frozen=True, slots=True)
class SurfaceFilter(ColumnFilter):
    """Each field is a list matched as any-of; fields are ANDed. None or [] = no constraint.
    The batch range is on the batch that first stored the surface."""

    _table = surfaces_t
    surface_id: Sequence[str] | None = ids(surfaces_t.c.surface_id, "surfaceId")
    grounding_source: Sequence[GroundingSource] | None = on(surfaces_t.c.grounding_source)
    corpus_id: Sequence[str | None] | None = on(surfaces_t.c.corpus_id)
    chain_id: Sequence[str | None] | None = on(surfaces_t.c.chain_id)
    intent: Sequence[str | None] | None = on(surfaces_t.c.intent)
    subject: Sequence[str | None] | None = on(surfaces_t.c.subject)
    verification: Sequence[SurfaceVerification] | None = on(surfaces_t.c.verification)
    surface_form: Sequence[SurfaceForm | None] | None = on(surfaces_t.c.surface_form)
    # The pack a teaching surface was checked against (no index: a filter on it alone reads
    # the surfaces, fewer than their sightings).
    pack_id: Sequence[str | None] | None = on(surfaces_t.c.pack_id)
    pack_version: Sequence[str | None] | None = on(surfaces_t.c.pack_version)


def checked_ids(filter_field: Any, values: Sequence[Any]) -> None:
    """LimitExceeded for a list of ids (a field declared by `ids`) longer than MAX_IDS."""
    argument = filter_field.metadata.get("ids")
    if argument and len(values) > MAX_IDS:
        raise LimitExceeded(f"{argument}: at most {MAX_IDS} ids (a page's worth), got "
                            f"{len(values)}: ask in pages")


# Fields of every filter that bound the batch range.
_RANGE_FIELDS = ("batch_id_from", "batch_id_to", "ingested_from", "ingested_to")


def shaped_filter(where: Any) -> Shaped | None:
    """`where` (a ColumnFilter, or None) with each given value in a slot
    (statement_shapes.py); None when it gives a field its conditions are computed from in
    Python (AssessmentFilter's families and runnable, TurnFilter's times: fields without a
    column): its statements are built per request. A filter that overrides `conditions`
    adds conditions only for such fields (tested), so without them its conditions are
    ColumnFilter's. Raises what building its conditions raises (an id list too long)."""
    if where is None:
        return Shaped(None, None, {})
    if not isinstance(where, ColumnFilter):
        return None
    key: list[Hashable] = [type(where).__name__]
    params: dict[str, Any] = {}
    changes: dict[str, Any] = {}
    for each in fields(where):
        value = getattr(where, each.name)
        name = f"slot_f_{each.name}"
        if each.name in _RANGE_FIELDS:
            if value is not None:
                params[name] = range_parameter(each.name, value)
                changes[each.name] = Slot(name)
            key.append(value is not None)
        elif each.metadata.get("column") is not None:
            if not value:  # None or []: no condition
                key.append(None)
                continue
            checked_ids(each, value)
            given = matchable(enum_values(value) or [])
            null = any(v is None for v in value)
            params[name] = given
            changes[each.name] = SlotList(name, bool(given), null, len(value))
            key.append((bool(given), null))
        elif value is not None:
            return None  # a field ColumnFilter does not read: not a shape of its conditions
    return Shaped(tuple(key), replace(where, **changes), params)


def storable(value: str) -> bool:
    """PostgreSQL text cannot hold U+0000 (its driver refuses such a parameter outright), so a
    value containing it matches nothing, on either backend, instead of failing the query."""
    return "\x00" not in value


def matchable(values: Sequence[Any]) -> list[Any]:
    """The values of an any-of list that a stored value can equal: not None (the null rows
    are a condition of their own), no text that cannot be stored."""
    return [v for v in values if v is not None and (not isinstance(v, str) or storable(v))]


def any_of(column: Any, values: Sequence[Any]) -> ColumnElement[bool]:
    """`column` is one of `values`; a None among them selects the rows where it is null (what
    a facet's null value stands for). A SlotList: the same, its values a parameter."""
    if isinstance(values, SlotList):
        listed: ColumnElement[bool] = column.in_(values.bind())
        if not values.null:
            return listed
        return or_(listed, column.is_(None)) if values.given else column.is_(None)
    given = matchable(values)
    condition: ColumnElement[bool] = column.in_(given)
    if any(v is None for v in values):
        # Null alone is one index range; with values, an OR SQLite reads as ranges too.
        condition = or_(condition, column.is_(None)) if given else column.is_(None)
    return condition


def equals(column: Any, value: str | BindParameter[Any]) -> ColumnElement[bool]:
    if isinstance(value, BindParameter):  # kept by shape: its caller checked the value
        return column == value  # type: ignore[no-any-return]
    return column == value if storable(value) else false()


def enum_values(members: Sequence[Any] | None) -> list[str] | None:
    # Enum members are stored by their lower-case value.
    if isinstance(members, SlotList):
        return members  # type: ignore[return-value]  # its values are a parameter
    return None if not members else [getattr(m, "value", m) for m in members]


@dataclass(frozen=True, slots=True)
class TurnFilter(ColumnFilter):
    """Any-of lists, ANDed; on turns joined to the surface record each turn emitted. The
    batch range is on the turn's own batch."""

    _table = turns_t
    turn_key: Sequence[str] | None = ids(turns_t.c.turn_key, "turnKey")
    grounding_source: Sequence[GroundingSource] | None = on(turns_t.c.grounding_source)
    verification: Sequence[SurfaceVerification] | None = on(surfaces_t.c.verification)
    epistemic_state: Sequence[str | None] | None = on(turns_t.c.epistemic_state)
    normative_clearance: Sequence[NormativeClearance | None] | None = on(
        turns_t.c.normative_clearance)
    corpus_id: Sequence[str | None] | None = on(surfaces_t.c.corpus_id)
    chain_id: Sequence[str | None] | None = on(surfaces_t.c.chain_id)
    surface_form: Sequence[SurfaceForm | None] | None = on(surfaces_t.c.surface_form)
    # CORE's own identities (issue 30): the journal (its turn 1's turn_key), the journal's
    # turn_id, the trace_hash and journal_digest as CORE wrote them, the kind of line.
    journal: Sequence[RecordId | None] | None = on(turn_fields_t.c.journal_id)
    turn_id: Sequence[int | None] | None = on(turns_t.c.turn_id)
    trace_hash: Sequence[str | None] | None = on(turns_t.c.trace_hash)
    journal_digest: Sequence[str | None] | None = on(turns_t.c.journal_digest)
    kind: Sequence[TurnKind] | None = on(turns_t.c.kind)
    trace_integrity: Sequence[TraceIntegrity | None] | None = on(
        turns_t.c.trace_integrity)
    # CORE's own time: the turn's timestamp, inclusive bounds, each with an offset.
    time_from: datetime | None = None
    time_to: datetime | None = None

    def conditions(self, table: Table | None = None) -> list[ColumnElement[bool]]:
        found = ColumnFilter.conditions(self, table)
        for bound, argument in ((self.time_from, "timeFrom"), (self.time_to, "timeTo")):
            if bound is None:
                continue
            at = core_time(bound)
            if at is None:
                raise QueryError(f"{argument}: {bound.isoformat()!r} has no UTC offset: CORE's "
                                 "time is an instant (e.g. 2026-07-30T18:01:02+00:00)")
            column = turn_fields_t.c.core_time
            found.append(column >= key_value(at) if argument == "timeFrom"
                         else column <= key_value(at))
        return found


def tables_read(*elements: ColumnElement[Any]) -> set[Table]:
    """The tables whose columns `elements` read, not counting a subquery's (`x IN (SELECT
    ...)` reads its own FROM: the statement holding it joins nothing for it)."""
    found: set[Table] = set()
    walk: list[Any] = list(elements)
    while walk:
        node = walk.pop()
        if isinstance(node, SelectBase):
            continue
        if isinstance(table := getattr(node, "table", None), Table):
            found.add(table)
        walk.extend(node.get_children())
    return found


def filter_order(filter_type: type[Any] | None) -> int:
    """Where `filter_type` stands among the filters, in the order they are defined (this
    module's first): what export kinds and GraphQL filter inputs are listed in. None last."""
    defined = _defined(BatchRange)
    return defined.index(filter_type) if filter_type in defined else len(defined)


def _defined(base: type[Any]) -> list[type[Any]]:
    return [c for sub in base.__subclasses__() for c in (sub, *_defined(sub))]


def takes_null(filter_field: Any, hints: dict[str, Any]) -> bool:
    """Whether a filter field's list takes None (selecting the rows where its column is
    null): its items are typed `X | None`."""
    hint = hints[filter_field.name]
    (item,) = typing.get_args(typing.get_args(hint)[0]) or (None,)
    return type(None) in typing.get_args(item)


def check_null_selection(filters: Sequence[type[Any]]) -> None:
    """A field of a nullable column takes None in its list, one of a column that cannot be
    null does not (a facet gives null only for the first): a field declared otherwise fails
    when the module loads."""
    problems = []
    for each in filters:
        hints = typing.get_type_hints(each)
        for f in fields(each):
            column = f.metadata.get("column")
            if column is None or f.metadata.get("ids"):
                continue
            if takes_null(f, hints) != bool(column.nullable):
                problems.append(f"{each.__name__}.{f.name}: its column is "
                                f"{'' if column.nullable else 'not '}nullable")
    if problems:
        raise TypeError("; ".join(problems))


check_null_selection((ResidualFilter, AssessmentFilter, SurfaceFilter, TurnFilter))
