"""The `Query` root (query-only: no Mutation, no Subscription) and the schema with its limits."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

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
from store.api.log_types import Ledger
from store.api.object_estimate import DEFAULT_MAX_OBJECTS
from store.api.object_limit import ObjectLimit
from store.api.registry_types import TeachingRegistryView
from store.api.surface_types import (
    GroundingSourceEnum,
    Surface,
    SurfaceFacets,
    SurfaceFormEnum,
    SurfaceVerificationEnum,
)
from store.api.turn_types import NormativeClearanceEnum, Turn, TurnFacets
from store.api.types import (
    Assessment,
    Batch,
    Connection,
    Residual,
    ResidualFacets,
    ResidualKindEnum,
    ResidualSourceAxisEnum,
    Taxonomy,
    connection,
)
from store.api.variable_text import TextVariables
from store.db import queries
from store.model.taxonomy import taxonomy

MAX_DEPTH = 12  # residuals > edges > node > occurrences > edges > node > assessment > batch > ...
MAX_TOKENS = 5_000  # GraphiQL's introspection query fits; generated abuse does not
MAX_ALIASES = 30
MASKED_MESSAGE = "Internal error."


def _fields_of(filter_input: Any) -> dict[str, Any]:
    """A filter input's fields by name: the query layer's filter has the same ones."""
    return {f.name: getattr(filter_input, f.name) for f in dataclasses.fields(filter_input)}


@strawberry.input(description="Any-of lists, ANDed across fields; null or [] = no constraint.")
class ResidualFilter:
    organ: list[str] | None = None
    family_id: list[str] | None = None
    kind: list[ResidualKindEnum] | None = None
    axis: list[ResidualSourceAxisEnum] | None = None
    code: list[str] | None = None

    def to_query(self) -> queries.ResidualFilter:
        return queries.ResidualFilter(**_fields_of(self))


@strawberry.input(description="Any-of lists, ANDed across fields; null or [] = no constraint.")
class AssessmentFilter:
    organ: list[str] | None = None
    family_id: list[str] | None = None
    runnable: bool | None = None
    source_ref: list[str] | None = None
    batch_id: list[int] | None = None

    def to_query(self) -> queries.AssessmentFilter:
        return queries.AssessmentFilter(**_fields_of(self))


@strawberry.input(description="Any-of lists, ANDed across fields; null or [] = no constraint.")
class SurfaceFilter:
    grounding_source: list[GroundingSourceEnum] | None = None
    corpus_id: list[str] | None = None
    chain_id: list[str] | None = None
    intent: list[str] | None = None
    subject: list[str] | None = None
    verification: list[SurfaceVerificationEnum] | None = None

    def to_query(self) -> queries.SurfaceFilter:
        return queries.SurfaceFilter(**_fields_of(self))


@strawberry.input(description="Any-of lists, ANDed across fields; null or [] = no constraint. "
                              "Verification, corpus, chain and form are the emitted surface's.")
class TurnFilter:
    grounding_source: list[GroundingSourceEnum] | None = None
    verification: list[SurfaceVerificationEnum] | None = None
    epistemic_state: list[str] | None = None
    normative_clearance: list[NormativeClearanceEnum] | None = None
    corpus_id: list[str] | None = None
    chain_id: list[str] | None = None
    surface_form: list[SurfaceFormEnum] | None = None

    def to_query(self) -> queries.TurnFilter:
        return queries.TurnFilter(**_fields_of(self))


Ctx = Info[RequestContext, None]
PAGE_HELP = f"Page size, default {queries.DEFAULT_PAGE_SIZE}, at most {queries.MAX_PAGE_SIZE}."


@strawberry.type(description="Read-only views of the audit store.")
class Query:
    @strawberry.field(description="One residual by its residual_id (64 hex digits).")
    async def residual(self, info: Ctx, id: strawberry.ID) -> Residual | None:
        stored = await info.context.run(queries.residual_by_id, str(id))
        return None if stored is None else Residual.of(stored)

    @strawberry.field(description=f"Residuals in append order. {PAGE_HELP}")
    async def residuals(
        self, info: Ctx, filter: ResidualFilter | None = None, first: int | None = None,
        after: str | None = None,
    ) -> Connection[Residual]:
        where = filter.to_query() if filter else None
        page = await info.context.run(queries.list_residuals, where, first, after)
        count = functools.partial(info.context.run, queries.count_residuals, where)
        return connection(page, Residual.of, count)

    @strawberry.field(description="Counts by kind, axis, organ, family and code, filtered.")
    async def residual_facets(
        self, info: Ctx, filter: ResidualFilter | None = None
    ) -> ResidualFacets:
        where = filter.to_query() if filter else None
        return ResidualFacets.of(await info.context.run(queries.residual_facets, where))

    @strawberry.field(description="One surface by its surface_id (64 hex digits).")
    async def surface(self, info: Ctx, id: strawberry.ID) -> Surface | None:
        stored = await info.context.run(queries.surface_by_id, str(id))
        return None if stored is None else Surface.of(stored)

    @strawberry.field(description=f"Surfaces with their provenance, in append order. {PAGE_HELP}")
    async def surfaces(
        self, info: Ctx, filter: SurfaceFilter | None = None, first: int | None = None,
        after: str | None = None,
    ) -> Connection[Surface]:
        where = filter.to_query() if filter else None
        page = await info.context.run(queries.list_surfaces, where, first, after)
        count = functools.partial(info.context.run, queries.count_surfaces, where)
        return connection(page, Surface.of, count)

    @strawberry.field(description="Counts by grounding source, corpus, intent and verification.")
    async def surface_facets(
        self, info: Ctx, filter: SurfaceFilter | None = None
    ) -> SurfaceFacets:
        where = filter.to_query() if filter else None
        return SurfaceFacets.of(await info.context.run(queries.surface_facets, where))

    @strawberry.field(description="One turn by its turn_key (64 hex digits).")
    async def turn(self, info: Ctx, id: strawberry.ID) -> Turn | None:
        stored = await info.context.run(queries.turn_by_key, str(id))
        return None if stored is None else Turn.of(stored)

    @strawberry.field(description="CORE turns in append order, with the surface each emitted: "
                                  f"which turns were grounded by what. {PAGE_HELP}")
    async def turns(
        self, info: Ctx, filter: TurnFilter | None = None, first: int | None = None,
        after: str | None = None,
    ) -> Connection[Turn]:
        where = filter.to_query() if filter else None
        page = await info.context.run(queries.list_turns, where, first, after)
        count = functools.partial(info.context.run, queries.count_turns, where)
        return connection(page, Turn.of, count)

    @strawberry.field(description="Turns counted by grounding source, verification, epistemic "
                                  "state, normative clearance and corpus.")
    async def turn_facets(self, info: Ctx, filter: TurnFilter | None = None) -> TurnFacets:
        where = filter.to_query() if filter else None
        return TurnFacets.of(await info.context.run(queries.turn_facets, where))

    @strawberry.field(description="One assessment by its assessment_id.")
    async def assessment(self, info: Ctx, id: strawberry.ID) -> Assessment | None:
        stored = await info.context.run(queries.assessment_by_id, str(id))
        return None if stored is None else Assessment.of(stored)

    @strawberry.field(description=f"Assessments in append order. {PAGE_HELP}")
    async def assessments(
        self, info: Ctx, filter: AssessmentFilter | None = None, first: int | None = None,
        after: str | None = None,
    ) -> Connection[Assessment]:
        where = filter.to_query() if filter else None
        page = await info.context.run(queries.list_assessments, where, first, after)
        count = functools.partial(info.context.run, queries.count_assessments, where)
        return connection(page, Assessment.of, count)

    @strawberry.field(description=f"Ingest batches in append order. {PAGE_HELP}")
    async def batches(
        self, info: Ctx, first: int | None = None, after: str | None = None
    ) -> Connection[Batch]:
        page = await info.context.run(queries.list_batches, first, after)
        count = functools.partial(info.context.run, queries.count_batches)
        return connection(page, Batch.of, count)

    @strawberry.field(description="The transparency log's newest tree head.")
    async def ledger(self, info: Ctx) -> Ledger:
        status = await info.context.run(queries.ledger_status)
        return Ledger(tree_size=status.tree_size, root_hash=status.root_hash,
                      origin=status.origin)

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
