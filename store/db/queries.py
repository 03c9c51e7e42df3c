"""The read/query layer: every SELECT the API and the CLI run is written here.

Each public function takes a SQLAlchemy `Connection` first and returns plain records, so
callers (GraphQL resolvers through `Database.run`, the CLI, benchmarks) never write SQL.
Lists are keyset-paginated over `seq`, the row's ledger position, i.e. its append order.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import orjson
from sqlalchemy import (
    CTE,
    ColumnElement,
    Connection,
    Label,
    Select,
    Table,
    false,
    func,
    literal_column,
    select,
    union_all,
)

from store.db.ledger import read_tip
from store.db.tables import TALLY_DIMENSIONS
from store.db.tables import contract_assessments as assessments_t
from store.db.tables import contract_residuals as residuals_t
from store.db.tables import ingest_batches as batches_t
from store.db.tables import ledger as ledger_t
from store.db.tables import residual_occurrences as occurrences_t
from store.db.tables import residual_tallies as tallies_t
from store.db.tables import surface_occurrences as sightings_t
from store.db.tables import surface_records as surfaces_t
from store.model.records import ContractAssessment, ContractResidual, SourceSpan
from store.model.surface_records import SurfaceVerification
from store.model.taxonomy import (
    FAMILY_BY_ORGAN,
    LABEL_MAP,
    ResidualKind,
    ResidualSourceAxis,
    family_of,
)
from store.model.teaching_surface import GroundingSource

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
    occurrence_count: int  # its sightings, counted in the same statement


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
class StoredSurface:
    """A surface_records row: what CORE said, its provenance and the re-derivation outcome."""

    surface_id: str
    seq: int
    batch_id: int
    grounding_source: GroundingSource
    surface: str | None
    subject: str | None
    intent: str | None
    corpus_id: str | None
    chain_id: str | None
    chain_provenance: str | None
    pack_id: str | None
    pack_version: str | None
    connective: str | None
    object: str | None
    subject_domains: tuple[str, ...] | None
    object_domains: tuple[str, ...] | None
    verification: SurfaceVerification
    expected_surface: str | None
    occurrence_count: int  # the turns that emitted it, counted in the same statement


@dataclass(frozen=True, slots=True)
class SurfaceOccurrence:
    """One sighting of a surface: the turn that emitted it, and the batch that recorded it."""

    occurrence_id: str
    seq: int
    surface_id: str
    session_id: str | None
    turn_id: str | None
    prompt: str | None
    batch: Batch


@dataclass(frozen=True, slots=True)
class FacetCount:
    value: str | None  # as CORE serializes it: lower case; None for a null column
    count: int  # distinct records (residuals or surfaces)
    occurrences: int  # sightings of those records


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
class SurfaceFacets:
    total: int
    occurrences: int
    by_grounding_source: list[FacetCount]
    by_corpus: list[FacetCount]
    by_intent: list[FacetCount]
    by_verification: list[FacetCount]


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

    def conditions(self, table: Table = residuals_t) -> list[ColumnElement[bool]]:
        """On contract_residuals, or on residual_tallies (same column names)."""
        pairs: list[tuple[Any, Sequence[Any] | None]] = [
            (table.c.candidate_organ, self.organ),
            (table.c.family_id, self.family_id),
            (table.c.residual_kind, _values(self.kind)),
            (table.c.source_axis, _values(self.axis)),
            (table.c.residual_code, self.code),
        ]
        return [_any_of(column, values) for column, values in pairs if values]


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
            found.append(_any_of(assessments_t.c.candidate_organ, self.organ))
        if self.family_id:
            # Families are a domain mapping, not a column: filter by the organs they name.
            wanted = set(self.family_id)
            organs = [o for o, f in FAMILY_BY_ORGAN.items() if f in wanted]
            found.append(assessments_t.c.candidate_organ.in_(organs))
        if self.runnable is not None:
            found.append(assessments_t.c.runnable.is_(self.runnable))
        if self.source_ref:
            found.append(_any_of(assessments_t.c.source_ref, self.source_ref))
        if self.batch_id:
            found.append(assessments_t.c.batch_id.in_(list(self.batch_id)))
        return found


@dataclass(frozen=True, slots=True)
class SurfaceFilter:
    """Each field is a list matched as any-of; fields are ANDed. None or [] = no constraint."""

    grounding_source: Sequence[GroundingSource] | None = None
    corpus_id: Sequence[str] | None = None
    chain_id: Sequence[str] | None = None
    intent: Sequence[str] | None = None
    subject: Sequence[str] | None = None
    verification: Sequence[SurfaceVerification] | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        pairs: list[tuple[Any, Sequence[Any] | None]] = [
            (surfaces_t.c.grounding_source, _values(self.grounding_source)),
            (surfaces_t.c.corpus_id, self.corpus_id),
            (surfaces_t.c.chain_id, self.chain_id),
            (surfaces_t.c.intent, self.intent),
            (surfaces_t.c.subject, self.subject),
            (surfaces_t.c.verification, _values(self.verification)),
        ]
        return [_any_of(column, values) for column, values in pairs if values]


def _storable(value: str) -> bool:
    """PostgreSQL text cannot hold U+0000 (its driver refuses such a parameter outright), so a
    value containing it matches nothing, on either backend, instead of failing the query."""
    return "\x00" not in value


def _any_of(column: Any, values: Sequence[Any]) -> ColumnElement[bool]:
    return column.in_([v for v in values if not isinstance(v, str) or _storable(v)])


def _equals(column: Any, value: str) -> ColumnElement[bool]:
    return column == value if _storable(value) else false()


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
    return tuple(SourceSpan(**span) for span in orjson.loads(text))


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
        occurrence_count=row.occurrence_count,
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
            missing_bindings=tuple(orjson.loads(row.missing_bindings)),
            unresolved_hazards=tuple(orjson.loads(row.unresolved_hazards)),
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


def _sightings_of(parent: Table, key: str, sightings: Table) -> Label[int]:
    """Per row of `parent`, an index range count of its sightings: an `occurrence_count`
    column, cheaper than a second statement and its thread hop."""
    return (
        select(func.count())
        .where(sightings.c[key] == parent.c[key])
        .correlate(parent)
        .scalar_subquery()
        .label("occurrence_count")
    )


_RESIDUAL_SIGHTINGS = _sightings_of(residuals_t, "residual_id", occurrences_t)


def _residual_rows() -> Select[Any]:
    return select(residuals_t, _RESIDUAL_SIGHTINGS)


def _residuals_select(where: ResidualFilter | None) -> Select[Any]:
    conditions = where.conditions() if where else []
    return _residual_rows().where(*conditions)


def residual_by_id(connection: Connection, residual_id: str) -> StoredResidual | None:
    row = connection.execute(
        _residual_rows().where(_equals(residuals_t.c.residual_id, residual_id))
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
    """Matching residuals, summed from the tallies (every filter field is a tally column)."""
    tallies = _tallies(where).subquery("tallies")
    # int(): PostgreSQL's sum() of integers is bigint or numeric.
    return int(connection.execute(
        select(func.coalesce(func.sum(tallies.c.residuals), 0))).scalar_one())


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
        .where(_equals(occurrences_t.c.residual_id, residual_id))
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


def _facet_counts(
    connection: Connection, combos: CTE, column_names: Sequence[str]
) -> tuple[int, int, list[list[FacetCount]]]:
    """Totals and per-value counts from `combos`: rows grouped by every facet column at once
    (a few hundred), each with `n` records and `s` sightings. One statement; each facet sums
    the groups.
    """
    facets = union_all(*(
        select(
            literal_column(str(index)).label("facet"),
            combos.c[name].label("value"),
            func.sum(combos.c.n).label("count"),
            func.sum(combos.c.s).label("occurrences"),
        ).group_by(combos.c[name])
        for index, name in enumerate(column_names)
    )).order_by(
        literal_column("facet"), literal_column("count").desc(),
        literal_column("value").asc().nulls_last(),
    )
    lists: list[list[FacetCount]] = [[] for _ in column_names]
    for index, value, count, occurrences in connection.execute(facets):
        # int(): PostgreSQL's sum() of counts is numeric.
        lists[index].append(FacetCount(value=value, count=int(count),
                                       occurrences=int(occurrences)))
    # Every filtered row falls in exactly one group of the first facet (a null is a group).
    total = sum(facet.count for facet in lists[0])
    occurrences = sum(facet.occurrences for facet in lists[0])
    return total, occurrences, lists


def _tallies(where: ResidualFilter | None) -> Select[Any]:
    return select(tallies_t).where(*(where.conditions(tallies_t) if where else []))


def residual_facets(connection: Connection, where: ResidualFilter | None = None) -> ResidualFacets:
    """Counts per kind, axis, organ, family and code over the filtered residuals: sums of the
    batches' tallies, so the cost follows the number of batches, not of residuals."""
    tallies = _tallies(where).subquery("tallies")
    dims = [tallies.c[name] for name in TALLY_DIMENSIONS]
    combos = (
        select(*dims, func.sum(tallies.c.residuals).label("n"),
               func.sum(tallies.c.occurrences).label("s"))
        .group_by(*dims)
        .cte("combos")
    )
    total, occurrences, (by_kind, by_axis, by_organ, by_family, by_code) = _facet_counts(
        connection, combos, TALLY_DIMENSIONS)
    return ResidualFacets(
        total=total,
        occurrences=occurrences,
        by_kind=by_kind,
        by_axis=by_axis,
        by_organ=by_organ,
        by_family=by_family,
        by_code=by_code,
    )


# --- assessments --------------------------------------------------------------------------


def assessment_by_id(connection: Connection, assessment_id: str) -> StoredAssessment | None:
    row = connection.execute(
        _assessments_select().where(_equals(assessments_t.c.assessment_id, assessment_id))
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


def assessment_residuals(
    connection: Connection, assessment_ids: Sequence[str]
) -> dict[str, list[StoredResidual]]:
    """The residuals each assessment produced, in projection (ordinal) order; one statement
    for a whole page of assessments."""
    rows = connection.execute(
        _residual_rows()
        .add_columns(occurrences_t.c.assessment_id.label("produced_by"))
        .join(occurrences_t, occurrences_t.c.residual_id == residuals_t.c.residual_id)
        .where(_any_of(occurrences_t.c.assessment_id, list(set(assessment_ids))))
        .order_by(occurrences_t.c.assessment_id, occurrences_t.c.ordinal)
    ).all()
    produced: dict[str, list[StoredResidual]] = {a: [] for a in assessment_ids}
    for row in rows:
        produced[row.produced_by].append(_residual(row))
    return produced


# --- surfaces -----------------------------------------------------------------------------


def _domains(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(orjson.loads(text))


def _surface(row: Any) -> StoredSurface:
    return StoredSurface(
        surface_id=row.surface_id,
        seq=row.seq,
        batch_id=row.batch_id,
        grounding_source=GroundingSource(row.grounding_source),
        surface=row.surface,
        subject=row.subject,
        intent=row.intent,
        corpus_id=row.corpus_id,
        chain_id=row.chain_id,
        chain_provenance=row.chain_provenance,
        pack_id=row.pack_id,
        pack_version=row.pack_version,
        connective=row.connective,
        object=row.object,
        subject_domains=_domains(row.subject_domains),
        object_domains=_domains(row.object_domains),
        verification=SurfaceVerification(row.verification),
        expected_surface=row.expected_surface,
        occurrence_count=row.occurrence_count,
    )


_SURFACE_SIGHTINGS = _sightings_of(surfaces_t, "surface_id", sightings_t)


def _filtered_surfaces(where: SurfaceFilter | None) -> Select[Any]:
    return select(surfaces_t).where(*(where.conditions() if where else []))


def _surfaces_select(where: SurfaceFilter | None) -> Select[Any]:
    return _filtered_surfaces(where).add_columns(_SURFACE_SIGHTINGS)


def surface_by_id(connection: Connection, surface_id: str) -> StoredSurface | None:
    row = connection.execute(
        _surfaces_select(None).where(_equals(surfaces_t.c.surface_id, surface_id))
    ).first()
    return None if row is None else _surface(row)


def list_surfaces(
    connection: Connection,
    where: SurfaceFilter | None = None,
    first: int | None = None,
    after: str | None = None,
) -> Page[StoredSurface]:
    return _page(connection, _surfaces_select(where), surfaces_t.c.seq, first, after, _surface)


def count_surfaces(connection: Connection, where: SurfaceFilter | None = None) -> int:
    return _count(connection, _filtered_surfaces(where))


def _surface_occurrence(row: Any) -> SurfaceOccurrence:
    return SurfaceOccurrence(
        occurrence_id=row.occurrence_id,
        seq=row.seq,
        surface_id=row.surface_id,
        session_id=row.session_id,
        turn_id=row.turn_id,
        prompt=row.prompt,
        batch=_batch(row, "batch_"),
    )


def list_surface_occurrences(
    connection: Connection,
    surface_id: str,
    first: int | None = None,
    after: str | None = None,
) -> Page[SurfaceOccurrence]:
    """The turns that emitted one surface, with the batch that recorded each, in append order."""
    statement = (
        select(sightings_t, *_BATCH_COLUMNS)
        .join(batches_t, batches_t.c.batch_id == sightings_t.c.batch_id)
        .where(_equals(sightings_t.c.surface_id, surface_id))
    )
    return _page(connection, statement, sightings_t.c.seq, first, after, _surface_occurrence)


def surface_facets(connection: Connection, where: SurfaceFilter | None = None) -> SurfaceFacets:
    """Counts per grounding source, corpus, intent and verification over the filtered surfaces."""
    filtered = _surfaces_select(where).subquery("filtered")  # each row with its sightings
    names = ("grounding_source", "corpus_id", "intent", "verification")
    combos = (
        select(*(filtered.c[name] for name in names), func.count().label("n"),
               func.sum(filtered.c.occurrence_count).label("s"))
        .group_by(*(filtered.c[name] for name in names))
        .cte("combos")
    )
    total, occurrences, (by_source, by_corpus, by_intent, by_verification) = _facet_counts(
        connection, combos, names)
    return SurfaceFacets(
        total=total,
        occurrences=occurrences,
        by_grounding_source=by_source,
        by_corpus=by_corpus,
        by_intent=by_intent,
        by_verification=by_verification,
    )


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
