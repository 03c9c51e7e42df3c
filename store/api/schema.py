"""The `Query` root (query-only: no Mutation, no Subscription) and the schema with its limits."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import (
    AddValidationRules,
    DisableIntrospection,
    MaskErrors,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    SchemaExtension,
    ValidationCache,
)
from strawberry.printer import print_schema
from strawberry.types import ExecutionContext, Info

from store.api.context import RequestContext
from store.api.filter_types import AssessmentFilter, ResidualFilter, SurfaceFilter, TurnFilter
from store.api.log_types import Changes, Ledger
from store.api.object_estimate import DEFAULT_MAX_OBJECTS
from store.api.object_limit import ObjectLimit
from store.api.operation_choice import OperationChoice
from store.api.registry_types import TeachingRegistryView
from store.api.surface_types import Surface, SurfaceFacets
from store.api.turn_types import Turn, TurnFacets
from store.api.types import (
    LAST_HELP,
    AsOf,
    Assessment,
    Batch,
    Connection,
    OrderEnum,
    Residual,
    ResidualFacets,
    Taxonomy,
    connection,
)
from store.api.variable_text import TextVariables
from store.db import queries
from store.db.queries import ledger as ledger_queries
from store.model.taxonomy import taxonomy

MAX_DEPTH = 12  # residuals > edges > node > occurrences > edges > node > assessment > batch > ...
MAX_TOKENS = 5_000  # GraphiQL's introspection query fits; generated abuse does not
MAX_ALIASES = 30
MASKED_MESSAGE = "Internal error."


Ctx = Info[RequestContext, None]
PAGE_HELP = f"Page size, default {queries.DEFAULT_PAGE_SIZE}, at most {queries.MAX_PAGE_SIZE}."


def _kwargs(first: int | None, after: str | None, last: int | None, before: str | None,
            order: queries.Order, as_of: int | None) -> dict[str, Any]:
    """A list field's arguments as the query layer's list functions take them."""
    return {"first": first, "after": after, "last": last, "before": before, "order": order,
            "as_of": as_of}


Last = Annotated[int | None, strawberry.argument(description=LAST_HELP)]
OLDEST_FIRST = queries.Order.OLDEST_FIRST


@strawberry.type(description="Read-only views of the audit store.")
class Query:
    @strawberry.field(description="One residual by its residual_id (64 hex digits).")
    async def residual(self, info: Ctx, id: strawberry.ID, as_of: AsOf = None
                       ) -> Residual | None:
        stored = await info.context.run(queries.residual_by_id, str(id), as_of=as_of)
        return None if stored is None else Residual.of(stored, as_of)

    @strawberry.field(description=f"Residuals, in `order`. {PAGE_HELP}")
    async def residuals(
        self, info: Ctx, filter: ResidualFilter | None = None, first: int | None = None,
        after: str | None = None, last: Last = None, before: str | None = None,
        order: OrderEnum = OLDEST_FIRST, as_of: AsOf = None,
    ) -> Connection[Residual]:
        where = filter.to_query() if filter else None
        page = await info.context.run(queries.list_residuals, where,
                                      **_kwargs(first, after, last, before, order, as_of))
        count = functools.partial(info.context.run, queries.count_residuals, where, as_of=as_of)
        return connection(page, lambda r: Residual.of(r, as_of), count)

    @strawberry.field(description="Counts by kind, axis, organ, family and code, filtered.")
    async def residual_facets(
        self, info: Ctx, filter: ResidualFilter | None = None, as_of: AsOf = None
    ) -> ResidualFacets:
        where = filter.to_query() if filter else None
        return ResidualFacets.of(await info.context.run(queries.residual_facets, where, as_of))

    @strawberry.field(description="One surface by its surface_id (64 hex digits).")
    async def surface(self, info: Ctx, id: strawberry.ID, as_of: AsOf = None) -> Surface | None:
        stored = await info.context.run(queries.surface_by_id, str(id), as_of=as_of)
        return None if stored is None else Surface.of(stored, as_of)

    @strawberry.field(description=f"Surfaces with their provenance, in `order`. {PAGE_HELP}")
    async def surfaces(
        self, info: Ctx, filter: SurfaceFilter | None = None, first: int | None = None,
        after: str | None = None, last: Last = None, before: str | None = None,
        order: OrderEnum = OLDEST_FIRST, as_of: AsOf = None,
    ) -> Connection[Surface]:
        where = filter.to_query() if filter else None
        page = await info.context.run(queries.list_surfaces, where,
                                      **_kwargs(first, after, last, before, order, as_of))
        count = functools.partial(info.context.run, queries.count_surfaces, where, as_of=as_of)
        return connection(page, lambda s: Surface.of(s, as_of), count)

    @strawberry.field(description="Counts by grounding source, corpus, intent and verification.")
    async def surface_facets(
        self, info: Ctx, filter: SurfaceFilter | None = None, as_of: AsOf = None
    ) -> SurfaceFacets:
        where = filter.to_query() if filter else None
        return SurfaceFacets.of(await info.context.run(queries.surface_facets, where, as_of))

    @strawberry.field(description="One turn by its turn_key (64 hex digits).")
    async def turn(self, info: Ctx, id: strawberry.ID, as_of: AsOf = None) -> Turn | None:
        stored = await info.context.run(queries.turn_by_key, str(id), as_of=as_of)
        return None if stored is None else Turn.of(stored, as_of)

    @strawberry.field(description="CORE turns in `order` (not MOST_SEEN), with the surface each "
                                  f"emitted: which turns were grounded by what. {PAGE_HELP}")
    async def turns(
        self, info: Ctx, filter: TurnFilter | None = None, first: int | None = None,
        after: str | None = None, last: Last = None, before: str | None = None,
        order: OrderEnum = OLDEST_FIRST, as_of: AsOf = None,
    ) -> Connection[Turn]:
        where = filter.to_query() if filter else None
        page = await info.context.run(queries.list_turns, where,
                                      **_kwargs(first, after, last, before, order, as_of))
        count = functools.partial(info.context.run, queries.count_turns, where, as_of=as_of)
        return connection(page, lambda t: Turn.of(t, as_of), count)

    @strawberry.field(description="Turns counted by grounding source, verification, epistemic "
                                  "state, normative clearance and corpus.")
    async def turn_facets(self, info: Ctx, filter: TurnFilter | None = None,
                          as_of: AsOf = None) -> TurnFacets:
        where = filter.to_query() if filter else None
        return TurnFacets.of(await info.context.run(queries.turn_facets, where, as_of))

    @strawberry.field(description="One assessment by its assessment_id.")
    async def assessment(self, info: Ctx, id: strawberry.ID, as_of: AsOf = None
                         ) -> Assessment | None:
        stored = await info.context.run(queries.assessment_by_id, str(id), as_of=as_of)
        return None if stored is None else Assessment.of(stored, as_of)

    @strawberry.field(description=f"Assessments in `order` (not MOST_SEEN). {PAGE_HELP}")
    async def assessments(
        self, info: Ctx, filter: AssessmentFilter | None = None, first: int | None = None,
        after: str | None = None, last: Last = None, before: str | None = None,
        order: OrderEnum = OLDEST_FIRST, as_of: AsOf = None,
    ) -> Connection[Assessment]:
        where = filter.to_query() if filter else None
        page = await info.context.run(queries.list_assessments, where,
                                      **_kwargs(first, after, last, before, order, as_of))
        count = functools.partial(info.context.run, queries.count_assessments, where,
                                  as_of=as_of)
        return connection(page, lambda a: Assessment.of(a, as_of), count)

    @strawberry.field(description=f"Ingest batches in `order` (not MOST_SEEN). {PAGE_HELP}")
    async def batches(
        self, info: Ctx, first: int | None = None, after: str | None = None,
        last: Last = None, before: str | None = None, order: OrderEnum = OLDEST_FIRST,
        as_of: AsOf = None,
    ) -> Connection[Batch]:
        page = await info.context.run(queries.list_batches,
                                      **_kwargs(first, after, last, before, order, as_of))
        count = functools.partial(info.context.run, queries.count_batches, as_of=as_of)
        return connection(page, Batch.of, count)

    @strawberry.field(description="The transparency log's newest tree head, or the head of "
                                  "tree size asOf.")
    async def ledger(self, info: Ctx, as_of: AsOf = None) -> Ledger:
        at = () if as_of is None else (as_of,)  # without asOf, the call it always was
        status = await info.context.run(queries.ledger_status, *at)
        return Ledger(tree_size=status.tree_size, root_hash=status.root_hash,
                      origin=status.origin)

    @strawberry.field(description="What was appended between the tree heads of fromSize and "
                                  "toSize leaves (0 or a recorded head's size; toSize default: "
                                  "the newest), with the consistency proof between them: what "
                                  "changed since an auditor last looked, provably complete. "
                                  f"At most {ledger_queries.MAX_CHANGES} leaves an answer.")
    async def changes(self, info: Ctx, from_size: int, to_size: int | None = None) -> Changes:
        found = await info.context.run(ledger_queries.changes, from_size, to_size)
        return Changes.of(found)

    @strawberry.field(description="The teaching corpora and packs this server checks surfaces "
                                  "against, with their file hashes.")
    def teaching_registry(self, info: Ctx) -> TeachingRegistryView:
        return TeachingRegistryView.of(info.context.registry())

    @strawberry.field(description="ResidualKind, ResidualSourceAxis and the label map.")
    def taxonomy(self) -> Taxonomy:
        return _TAXONOMY


_TAXONOMY = Taxonomy.of(taxonomy())  # domain constants: built once


def is_masked(error: GraphQLError) -> bool:
    """Mask unexpected exceptions; let GraphQL's own and the query layer's messages through."""
    original = error.original_error
    return original is not None and not isinstance(original, (queries.QueryError, GraphQLError))


class AuditSchema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # Log only what is masked: a bad cursor or page size is the caller's, not a bug.
        unexpected = [error for error in errors if is_masked(error)]
        if unexpected:
            super().process_errors(unexpected, execution_context)


# The depth and alias limits' validation rules, made once: the limiter extensions make a
# new rule class per instance, i.e. per request, and the validation cache (keyed by the
# rules) would never hit.
_LIMIT_RULES = [
    *QueryDepthLimiter(max_depth=MAX_DEPTH).validation_rules,
    *MaxAliasesLimiter(max_alias_count=MAX_ALIASES).validation_rules,
]


def build_schema(*, introspection: bool = True,
                 max_objects: int = DEFAULT_MAX_OBJECTS) -> strawberry.Schema:
    # Factories, not instances: strawberry builds fresh extensions for every request.
    # ParserCache and ValidationCache (bounded LRUs, 128 documents) skip re-parsing and
    # re-validating a document already seen, e.g. the Workbench's operations.
    extensions: list[type[SchemaExtension] | Callable[[], SchemaExtension]] = [
        functools.partial(AddValidationRules, _LIMIT_RULES),
        functools.partial(MaxTokensLimiter, max_token_count=MAX_TOKENS),
        TextVariables,
        OperationChoice,
        functools.partial(ObjectLimit, max_objects=max_objects),
        functools.partial(MaskErrors, should_mask_error=is_masked, error_message=MASKED_MESSAGE),
        ParserCache,
        ValidationCache,
    ]
    if not introspection:
        extensions.append(DisableIntrospection)
    return AuditSchema(query=Query, extensions=extensions)


def schema_sdl() -> str:
    """The SDL `graphql/schema.graphql` must equal (introspection does not change it)."""
    return print_schema(build_schema()) + "\n"
