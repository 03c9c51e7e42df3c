"""GraphQL object types: thin views over the query layer's records."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeAlias, TypeVar

import strawberry
from sqlalchemy import Connection as SqlConnection
from strawberry.types import Info

import store.api.enums  # noqa: F401  the domain enums, registered with strawberry
from store.api.context import RequestContext
from store.api.facet_types import FacetCount, enum_facets, facet_page_field
from store.api.log_index import LogIndex
from store.api.log_types import inclusion_field
from store.api.record_views import RecordView, fields_of_record
from store.api.thread_reads import known_with_source, read_in_thread
from store.db import queries
from store.model import taxonomy as taxonomy_model
from store.model.taxonomy import ResidualKind, ResidualSourceAxis

if TYPE_CHECKING:
    from store.api.turn_types import Turn

OrderEnum: TypeAlias = queries.Order  # the name the list resolvers know it by
# A turn (turn_types.py imports this module): the type is looked up when the schema is built.
LazyTurn: TypeAlias = Annotated["Turn", strawberry.lazy("store.api.turn_types")]

AS_OF_HELP = ("The store as it was at this tree size: 0 or a recorded head's treeSize (one per "
              "batch); counts and nested lists as of then.")
AsOf: TypeAlias = Annotated[LogIndex | None, strawberry.argument(description=AS_OF_HELP)]
LAST_HELP = "Backwards: the last rows (before `before`, if given); not with first."

NodeT = TypeVar("NodeT")


@strawberry.type(description="Where a connection's page starts and ends, and whether rows "
                             "lie before or after it in the whole list.")
class PageInfo:
    has_next_page: bool
    has_previous_page: bool
    start_cursor: str | None
    end_cursor: str | None


@strawberry.type
class Edge(Generic[NodeT]):
    cursor: str
    node: NodeT
    snippet: str | None = strawberry.field(
        default=None, description="With `search`: the record's text around the words "
                                  "found, each between « and », … where cut; null without.")


@strawberry.type(description="A keyset-paginated list (Relay style): first/after forwards, "
                             "last/before backwards.")
class Connection(Generic[NodeT]):
    page_info: PageInfo
    edges: list[Edge[NodeT]]
    count_total: strawberry.Private[Callable[[], Awaitable[int]]]
    # count_total's: when read with the page, or how a read's own thread counts it
    known_total: strawberry.Private[int | Callable[[SqlConnection], int] | None] = None

    @strawberry.field(description="All matching rows; counted only when asked for.")
    @known_with_source(lambda connection: connection.known_total)
    async def total_count(self) -> int:
        return await self.count_total()

    @strawberry.field
    def nodes(self) -> list[NodeT]:
        return [edge.node for edge in self.edges]


def known_count(count: int) -> Callable[[], Awaitable[int]]:
    """A connection's count_total for a count already fetched with the row that owns it."""

    async def count_total() -> int:
        return count

    return count_total


def sightings_field(list_sightings: Callable[..., Any], key: str, node: type[Any],
                    description: str) -> Any:
    """A record view's occurrences field: a page of its sightings (`list_sightings` of its
    `key`) as of the tree it was read at; its totalCount is the view's occurrenceCount."""

    def read_sightings(sql: SqlConnection, source: Any, first: int | None = None,
                       after: str | None = None, last: int | None = None,
                       before: str | None = None, order: OrderEnum = queries.Order.OLDEST_FIRST
                       ) -> Any:
        page = list_sightings(sql, str(getattr(source, key)), first, after, last=last,
                              before=before, order=order, as_of=source.as_of)
        return connection(page, lambda o: node.of(o, source.as_of),
                          known_count(source.occurrence_count), source.occurrence_count)

    @read_in_thread(read_sightings)
    async def occurrences(
        self: Any, info: Info[RequestContext, None], first: int | None = None,
        after: str | None = None,
        last: Annotated[int | None, strawberry.argument(description=LAST_HELP)] = None,
        before: str | None = None, order: OrderEnum = queries.Order.OLDEST_FIRST,
    ) -> Any:
        return await info.context.run_quick(read_sightings, self, first, after, last=last,
                                            before=before, order=order)

    occurrences.__annotations__["return"] = Connection[node]  # type: ignore[valid-type]
    return strawberry.field(occurrences, description=description)


def connection(
    page: queries.Page[queries.SeqT],
    node: Callable[[queries.SeqT], NodeT],
    count_total: Callable[[], Awaitable[int]],
    known_total: int | Callable[[SqlConnection], int] | None = None,
) -> Connection[NodeT]:
    return Connection(
        page_info=PageInfo(has_next_page=page.has_next_page,
                           has_previous_page=page.has_previous_page,
                           start_cursor=page.start_cursor, end_cursor=page.end_cursor),
        edges=[Edge(cursor=c, node=node(item)) for c, item in zip(page.cursors, page.items,
                                                                   strict=True)],
        count_total=count_total,
        known_total=known_total,
    )


@strawberry.type(description="A source span, verbatim: problem_text[start:end] == text.")
class EvidenceSpan(RecordView):
    text: str
    start: int
    end: int
    sentence_index: int | None


@fields_of_record(
    queries.Batch, description="One ingest: a file appended as one batch.",
    ingested_at="UTC, ISO 8601.")
class Batch(RecordView):
    """The fields of queries.Batch."""


@strawberry.type(description="A ContractAssessment in its context (problem text or reference).")
class Assessment(RecordView):
    assessment_id: strawberry.ID
    seq: LogIndex
    problem_text: str | None
    source_ref: str | None
    candidate_organ: str
    family_id: str | None
    runnable: bool
    missing_bindings: list[str]
    unresolved_hazards: list[str]
    explanation: str = strawberry.field(description="The assessment's own explanation.")
    evidence_spans: list[EvidenceSpan]
    batch: Batch
    as_of: strawberry.Private[int | None]  # the tree size it was read as of, for its fields

    @strawberry.field(description="The residuals this assessment projects to, in code order.")
    async def residuals(self, info: Info[RequestContext, None]) -> list[Residual]:
        stored = await info.context.assessment_residuals.load(
            (str(self.assessment_id), self.as_of))
        return [Residual.of(r, self.as_of) for r in stored]

    @strawberry.field(description="The Workbench journal turn whose construction_evidence "
                                  "this assessment was projected from; null for one a frame "
                                  "stored.")
    async def turn(self, info: Info[RequestContext, None]) -> LazyTurn | None:
        from store.api.turn_types import Turn

        stored = await info.context.assessment_turns.load((str(self.assessment_id), self.as_of))
        return None if stored is None else Turn.of(stored, self.as_of)

    inclusion_proof = inclusion_field("contract_assessments", "assessment_id")


@strawberry.type(description="One sighting of a residual: the assessment that produced it.")
class Occurrence(RecordView):
    seq: LogIndex
    ordinal: int = strawberry.field(description="The residual's position in its assessment.")
    assessment: Assessment

    @strawberry.field(description="The problem text the assessment was made on.")
    def problem_text(self) -> str | None:
        return self.assessment.problem_text

    @strawberry.field(description="The external reference (case or turn id), if any.")
    def source_ref(self) -> str | None:
        return self.assessment.source_ref

    @strawberry.field
    def batch(self) -> Batch:
        return self.assessment.batch


@strawberry.type(description="A ContractResidual (ADR-0225), stored once per residual_id.")
class Residual(RecordView):
    residual_id: strawberry.ID
    seq: LogIndex
    candidate_organ: str
    family_id: str | None
    residual_kind: ResidualKind
    residual_code: str = strawberry.field(description="The contract label, verbatim.")
    source_axis: ResidualSourceAxis
    evidence_spans: list[EvidenceSpan]
    explanation: str
    occurrence_count: int = strawberry.field(
        description="How many times this residual was seen (by asOf, if read as of it).")
    as_of: strawberry.Private[int | None]  # the tree size it was read as of, for its fields

    occurrences = sightings_field(
        queries.list_occurrences, "residual_id", Occurrence, "Its sightings, in append order "
        "unless `order` says NEWEST_FIRST (by asOf, if read as of it).")

    @strawberry.field(description="The Workbench journal turns whose construction_evidence "
                                  "projected to this residual, each once, in append order "
                                  "unless `order` says NEWEST_FIRST (by asOf, if read as of it).")
    @read_in_thread(lambda sql, source, *args, **page: _read_residual_turns(
        sql, source, *args, **page, count=None))
    async def turns(
        self, info: Info[RequestContext, None], first: int | None = None,
        after: str | None = None,
        last: Annotated[int | None, strawberry.argument(description=LAST_HELP)] = None,
        before: str | None = None, order: OrderEnum = queries.Order.OLDEST_FIRST,
    ) -> Connection[LazyTurn]:
        return await info.context.run(
            _read_residual_turns, self, first, after, last=last, before=before, order=order,
            count=functools.partial(info.context.run, queries.count_residual_turns,
                                    str(self.residual_id), as_of=self.as_of))

    inclusion_proof = inclusion_field("contract_residuals", "residual_id")


def _read_residual_turns(sql: SqlConnection, source: Residual, first: int | None = None,
                         after: str | None = None, *, count: Any, last: int | None = None,
                         before: str | None = None,
                         order: OrderEnum = queries.Order.OLDEST_FIRST) -> Any:
    """A residual's page of turns; their count by `count` on the event loop, or (None) on the
    connection of the read that asks for it (thread_reads.ReadScope)."""
    from store.api.turn_types import Turn

    residual_id, as_of = str(source.residual_id), source.as_of
    page = queries.list_residual_turns(sql, residual_id, first, after, last=last,
                                       before=before, order=order, as_of=as_of)
    return connection(page, lambda turn: Turn.of(turn, as_of), count, None if count else (
        lambda counting: queries.count_residual_turns(counting, residual_id, as_of=as_of)))


@fields_of_record(
    queries.ResidualFacets, views={queries.FacetCount: FacetCount},
    description="Counts over the filtered residuals; lists by count desc, value.",
    total="Distinct residuals.", occurrences="Their sightings.")
class ResidualFacets(RecordView):
    """The fields of queries.ResidualFacets."""

    _computed = enum_facets("by_kind", "by_axis")
    facet_reader: strawberry.Private[tuple[Any, int | None]] = (None, None)  # (filter, asOf)

    facet = facet_page_field("residuals")


@strawberry.type
class TaxonomyLabel:
    label: str
    kind: ResidualKind
    axis: ResidualSourceAxis


@strawberry.type
class OrganFamily:
    candidate_organ: str
    family_id: str


@strawberry.type(description="The closed taxonomy and the global label map (ADR-0225).")
class Taxonomy:
    kinds: list[ResidualKind]
    axes: list[ResidualSourceAxis]
    labels: list[TaxonomyLabel]
    families: list[OrganFamily]

    @classmethod
    def of(cls, taxonomy: taxonomy_model.Taxonomy) -> Taxonomy:
        return cls(
            kinds=taxonomy.kinds,
            axes=taxonomy.axes,
            labels=[TaxonomyLabel(label=t.label, kind=t.kind, axis=t.axis)
                    for t in taxonomy.labels],
            families=[OrganFamily(candidate_organ=o, family_id=f)
                      for o, f in taxonomy.families_by_organ],
        )
