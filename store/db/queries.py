"""The read/query layer: every SELECT the API and the CLI run is written here.

Each public function takes a SQLAlchemy `Connection` first and returns plain records, so
callers (GraphQL resolvers through `Database.run`, the CLI, benchmarks) never write SQL.
Lists are keyset-paginated over `seq`, the row's ledger position, i.e. its append order.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy import ColumnElement, Connection, Select, func, literal_column, select

from store.db.ledger import read_tip
from store.db.tables import contract_assessments as assessments_t
from store.db.tables import contract_residuals as residuals_t
from store.db.tables import ingest_batches as batches_t
from store.db.tables import ledger as ledger_t
from store.db.tables import residual_occurrences as occurrences_t
from store.model.records import ContractAssessment, ContractResidual, SourceSpan
from store.model.taxonomy import (
    FAMILY_BY_ORGAN,
    LABEL_MAP,
    ResidualKind,
    ResidualSourceAxis,
    family_of,
)

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
_CURSOR_PREFIX = "seq:"

T = TypeVar("T")


class Sequenced(Protocol):
    @property
    def seq(self) -> int: ...


SeqT = TypeVar("SeqT", bound=Sequenced)


# --- errors a user can act on (the API lets exactly these through unmasked) ---------------


class QueryError(ValueError):
    """A request the query layer refuses, with a message fit to show the caller."""


class CursorError(QueryError):
    """An `after` cursor this API did not hand out."""


class PageSizeError(QueryError):
    """`first` outside 0..MAX_PAGE_SIZE."""


class QueryTimeout(QueryError):
    """A query ran past the request's time limit and was aborted."""


# --- records ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Batch:
    batch_id: int
    seq: int
    source: str
    input_sha256: str
    record_type: str
    lines: int
    new_rows: int
    present_rows: int
    rejected_lines: int
    ingested_at: str
    store_version: str


@dataclass(frozen=True, slots=True)
class StoredResidual:
    seq: int
    batch_id: int
    residual: ContractResidual


@dataclass(frozen=True, slots=True)
class StoredAssessment:
    assessment_id: str
    seq: int
    problem_text: str | None
    source_ref: str | None
    assessment: ContractAssessment
    batch: Batch

    @property
    def family_id(self) -> str | None:
        return family_of(self.assessment.candidate_organ)


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One sighting of a residual: which assessment (in which batch) produced it."""

    seq: int
    residual_id: str
    ordinal: int
    assessment: StoredAssessment


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    cursors: list[str]
    has_next_page: bool

    @property
    def end_cursor(self) -> str | None:
        return self.cursors[-1] if self.cursors else None


@dataclass(frozen=True, slots=True)
class FacetCount:
    value: str | None  # as CORE serializes it: lower case; None only for a null family_id
    count: int  # distinct residuals
    occurrences: int  # sightings of those residuals


@dataclass(frozen=True, slots=True)
class ResidualFacets:
    total: int
    occurrences: int
    by_kind: list[FacetCount]
    by_axis: list[FacetCount]
    by_organ: list[FacetCount]
    by_family: list[FacetCount]
    by_code: list[FacetCount]


@dataclass(frozen=True, slots=True)
class LedgerStatus:
    length: int
    head_seq: int
    head_hash: str


@dataclass(frozen=True, slots=True)
class TaxonomyLabel:
    label: str
    kind: ResidualKind
    axis: ResidualSourceAxis


@dataclass(frozen=True, slots=True)
class Taxonomy:
    kinds: list[ResidualKind]
    axes: list[ResidualSourceAxis]
    labels: list[TaxonomyLabel]
    families_by_organ: list[tuple[str, str]]


# --- filters ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResidualFilter:
    """Each field is a list matched as any-of; fields are ANDed. None or [] = no constraint."""

    organ: Sequence[str] | None = None
    family_id: Sequence[str] | None = None
    kind: Sequence[ResidualKind] | None = None
    axis: Sequence[ResidualSourceAxis] | None = None
    code: Sequence[str] | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        pairs: list[tuple[Any, Sequence[Any] | None]] = [
            (residuals_t.c.candidate_organ, self.organ),
            (residuals_t.c.family_id, self.family_id),
            (residuals_t.c.residual_kind, _values(self.kind)),
            (residuals_t.c.source_axis, _values(self.axis)),
            (residuals_t.c.residual_code, self.code),
        ]
        return [column.in_(list(values)) for column, values in pairs if values]


@dataclass(frozen=True, slots=True)
class AssessmentFilter:
    """Any-of lists, ANDed; `runnable` None = both. `family_id` goes through the organ map."""

    organ: Sequence[str] | None = None
    family_id: Sequence[str] | None = None
    runnable: bool | None = None
    source_ref: Sequence[str] | None = None
    batch_id: Sequence[int] | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        found: list[ColumnElement[bool]] = []
        if self.organ:
            found.append(assessments_t.c.candidate_organ.in_(list(self.organ)))
        if self.family_id:
            # Families are a domain mapping, not a column: filter by the organs they name.
            organs = [o for o, f in FAMILY_BY_ORGAN.items() if f in set(self.family_id)]
            found.append(assessments_t.c.candidate_organ.in_(organs))
        if self.runnable is not None:
            found.append(assessments_t.c.runnable.is_(self.runnable))
        if self.source_ref:
            found.append(assessments_t.c.source_ref.in_(list(self.source_ref)))
        if self.batch_id:
            found.append(assessments_t.c.batch_id.in_(list(self.batch_id)))
        return found


def _values(members: Sequence[Any] | None) -> list[str] | None:
    # Enum members are stored by their lower-case value.
    return None if not members else [getattr(m, "value", m) for m in members]


# --- cursors and pages --------------------------------------------------------------------


def encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{seq}".encode("ascii")).decode("ascii")


def decode_cursor(cursor: str) -> int:
    """The seq inside a cursor; CursorError for anything this API did not produce."""
    try:
        raw = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True)
        text = raw.decode("ascii")
    except (binascii.Error, UnicodeError, ValueError):
        raise CursorError("after: malformed cursor (use an endCursor or cursor value)") from None
    digits = text.removeprefix(_CURSOR_PREFIX)
    if not text.startswith(_CURSOR_PREFIX) or not digits.isascii() or not digits.isdigit():
        raise CursorError("after: malformed cursor (use an endCursor or cursor value)")
    return int(digits)


def page_size(first: int | None) -> int:
    if first is None:
        return DEFAULT_PAGE_SIZE
    if first < 0 or first > MAX_PAGE_SIZE:
        raise PageSizeError(f"first: must be between 0 and {MAX_PAGE_SIZE}, got {first}")
    return first


def _page(
    connection: Connection,
    statement: Select[Any],
    seq: ColumnElement[int],
    first: int | None,
    after: str | None,
    build: Callable[[Any], SeqT],
) -> Page[SeqT]:
    """Keyset page: rows after the cursor's seq, fetching one extra to know if more follow."""
    size = page_size(first)
    if after is not None:
        statement = statement.where(seq > decode_cursor(after))
    rows = connection.execute(statement.order_by(seq).limit(size + 1)).all()
    items = [build(row) for row in rows[:size]]
    return Page(
        items=items,
        cursors=[encode_cursor(item.seq) for item in items],
        has_next_page=len(rows) > size,
    )


def _count(connection: Connection, statement: Select[Any]) -> int:
    return connection.execute(
        select(func.count()).select_from(statement.subquery())
    ).scalar_one()


# --- row -> record ------------------------------------------------------------------------


def _spans(text: str) -> tuple[SourceSpan, ...]:
    return tuple(SourceSpan(**span) for span in json.loads(text))


def _residual(row: Any) -> StoredResidual:
    return StoredResidual(
        seq=row.seq,
        batch_id=row.batch_id,
        residual=ContractResidual(
            residual_id=row.residual_id,
            candidate_organ=row.candidate_organ,
            family_id=row.family_id,
            residual_kind=ResidualKind(row.residual_kind),
            residual_code=row.residual_code,
            source_axis=ResidualSourceAxis(row.source_axis),
            evidence_spans=_spans(row.evidence_spans),
            explanation=row.explanation,
        ),
    )


_BATCH_COLUMNS = [c.label(f"batch_{c.name}") for c in batches_t.c]


def _batch(row: Any, prefix: str = "") -> Batch:
    mapping = row._mapping
    return Batch(**{c.name: mapping[f"{prefix}{c.name}"] for c in batches_t.c})


def _assessment(row: Any) -> StoredAssessment:
    return StoredAssessment(
        assessment_id=row.assessment_id,
        seq=row.seq,
        problem_text=row.problem_text,
        source_ref=row.source_ref,
        assessment=ContractAssessment(
            candidate_organ=row.candidate_organ,
            missing_bindings=tuple(json.loads(row.missing_bindings)),
            unresolved_hazards=tuple(json.loads(row.unresolved_hazards)),
            runnable=bool(row.runnable),
            explanation=row.explanation,
            evidence_spans=_spans(row.evidence_spans),
        ),
        batch=_batch(row, "batch_"),
    )


def _assessments_select() -> Select[Any]:
    return select(assessments_t, *_BATCH_COLUMNS).join(
        batches_t, batches_t.c.batch_id == assessments_t.c.batch_id
    )


# --- residuals ----------------------------------------------------------------------------


def _residuals_select(where: ResidualFilter | None) -> Select[Any]:
    conditions = where.conditions() if where else []
    return select(residuals_t).where(*conditions)


def residual_by_id(connection: Connection, residual_id: str) -> StoredResidual | None:
    row = connection.execute(
        select(residuals_t).where(residuals_t.c.residual_id == residual_id)
    ).first()
    return None if row is None else _residual(row)


def list_residuals(
    connection: Connection,
    where: ResidualFilter | None = None,
    first: int | None = None,
    after: str | None = None,
) -> Page[StoredResidual]:
    return _page(connection, _residuals_select(where), residuals_t.c.seq, first, after, _residual)


def count_residuals(connection: Connection, where: ResidualFilter | None = None) -> int:
    return _count(connection, _residuals_select(where))


def occurrence_counts(connection: Connection, residual_ids: Sequence[str]) -> dict[str, int]:
    """Sightings per residual, for a whole page in one grouped query; absent ids count 0."""
    rows = connection.execute(
        select(occurrences_t.c.residual_id, func.count())
        .where(occurrences_t.c.residual_id.in_(list(set(residual_ids))))
        .group_by(occurrences_t.c.residual_id)
    ).all()
    counts = dict.fromkeys(residual_ids, 0)
    counts.update({residual_id: n for residual_id, n in rows})
    return counts


def _occurrences_select(residual_id: str) -> Select[Any]:
    return (
        select(
            occurrences_t.c.seq.label("occurrence_seq"),
            occurrences_t.c.residual_id,
            occurrences_t.c.ordinal,
            assessments_t,
            *_BATCH_COLUMNS,
        )
        .join(assessments_t, assessments_t.c.assessment_id == occurrences_t.c.assessment_id)
        .join(batches_t, batches_t.c.batch_id == assessments_t.c.batch_id)
        .where(occurrences_t.c.residual_id == residual_id)
    )


def _occurrence(row: Any) -> Occurrence:
    return Occurrence(
        seq=row.occurrence_seq,
        residual_id=row.residual_id,
        ordinal=row.ordinal,
        assessment=_assessment(row),
    )


def list_occurrences(
    connection: Connection,
    residual_id: str,
    first: int | None = None,
    after: str | None = None,
) -> Page[Occurrence]:
    """Sightings of one residual with their assessment and batch, in append order."""
    statement = _occurrences_select(residual_id)
    seq = statement.selected_columns.occurrence_seq
    return _page(connection, statement, seq, first, after, _occurrence)


def count_occurrences(connection: Connection, residual_id: str) -> int:
    return occurrence_counts(connection, [residual_id])[residual_id]


def residual_facets(connection: Connection, where: ResidualFilter | None = None) -> ResidualFacets:
    """Counts per kind, axis, organ, family and code over the filtered residuals, in SQL."""
    sightings = (
        select(occurrences_t.c.residual_id, func.count().label("n"))
        .group_by(occurrences_t.c.residual_id)
        .subquery("sightings")
    )
    filtered = (
        _residuals_select(where)
        .add_columns(func.coalesce(sightings.c.n, 0).label("sightings"))
        .outerjoin(sightings, sightings.c.residual_id == residuals_t.c.residual_id)
        .subquery("filtered")
    )
    total, occurrences = connection.execute(
        select(func.count(), func.coalesce(func.sum(filtered.c.sightings), 0))
    ).one()

    def by(column_name: str) -> list[FacetCount]:
        value = filtered.c[column_name]
        count = func.count().label("count")
        rows = connection.execute(
            select(value, count, func.sum(filtered.c.sightings))
            .group_by(value)
            .order_by(literal_column("count").desc(), value.asc().nulls_last())
        ).all()
        return [FacetCount(value=v, count=c, occurrences=o) for v, c, o in rows]

    return ResidualFacets(
        total=total,
        occurrences=occurrences,
        by_kind=by("residual_kind"),
        by_axis=by("source_axis"),
        by_organ=by("candidate_organ"),
        by_family=by("family_id"),
        by_code=by("residual_code"),
    )


# --- assessments --------------------------------------------------------------------------


def assessment_by_id(connection: Connection, assessment_id: str) -> StoredAssessment | None:
    row = connection.execute(
        _assessments_select().where(assessments_t.c.assessment_id == assessment_id)
    ).first()
    return None if row is None else _assessment(row)


def _filtered_assessments(where: AssessmentFilter | None) -> Select[Any]:
    return _assessments_select().where(*(where.conditions() if where else []))


def list_assessments(
    connection: Connection,
    where: AssessmentFilter | None = None,
    first: int | None = None,
    after: str | None = None,
) -> Page[StoredAssessment]:
    statement = _filtered_assessments(where)
    return _page(connection, statement, assessments_t.c.seq, first, after, _assessment)


def count_assessments(connection: Connection, where: AssessmentFilter | None = None) -> int:
    conditions = where.conditions() if where else []
    return _count(connection, select(assessments_t.c.seq).where(*conditions))


def assessment_residuals(connection: Connection, assessment_id: str) -> list[StoredResidual]:
    """The residuals one assessment produced, in projection (ordinal) order."""
    rows = connection.execute(
        select(residuals_t)
        .join(occurrences_t, occurrences_t.c.residual_id == residuals_t.c.residual_id)
        .where(occurrences_t.c.assessment_id == assessment_id)
        .order_by(occurrences_t.c.ordinal)
    ).all()
    return [_residual(row) for row in rows]


# --- batches, ledger, taxonomy ------------------------------------------------------------


def list_batches(
    connection: Connection, first: int | None = None, after: str | None = None
) -> Page[Batch]:
    return _page(connection, select(batches_t), batches_t.c.seq, first, after, _batch)


def count_batches(connection: Connection) -> int:
    return _count(connection, select(batches_t.c.seq))


def ledger_status(connection: Connection) -> LedgerStatus:
    tip = read_tip(connection)
    length = connection.execute(select(func.count()).select_from(ledger_t)).scalar_one()
    return LedgerStatus(length=length, head_seq=tip.seq, head_hash=tip.chain_hash)


def taxonomy() -> Taxonomy:
    """The closed taxonomy and label map; domain constants, no database needed."""
    return Taxonomy(
        kinds=list(ResidualKind),
        axes=list(ResidualSourceAxis),
        labels=[TaxonomyLabel(label, kind, axis) for label, (kind, axis) in LABEL_MAP.items()],
        families_by_organ=list(FAMILY_BY_ORGAN.items()),
    )
