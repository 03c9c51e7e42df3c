"""The `Query` root (query-only: no Mutation, no Subscription) and the schema with its limits.

The record listings' fields are made from their declarations (`listing_fields`); the log's
and the domain's are written here.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import (
    AddValidationRules,
    DisableIntrospection,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    SchemaExtension,
)
from strawberry.printer import print_schema
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext, Info
from strawberry.types.field import StrawberryField

from store.api.context import RequestContext
from store.api.error_codes import (
    INTERNAL_MESSAGE,
    ErrorCode,
    ErrorCodes,
    code_of,
    coded_rule,
    masked_message,
)
from store.api.journal_types import JournalFields
from store.api.listing_fields import listing_fields
from store.api.log_index import LOG_INDEX_SCALAR, LogIndex
from store.api.log_types import Changes, Ledger
from store.api.object_estimate import DEFAULT_MAX_OBJECTS
from store.api.object_limit import ObjectLimit
from store.api.operation_choice import OperationChoice
from store.api.page_executor import PageExecutor
from store.api.prepared_operations import PreparedOperations, read_by
from store.api.registry_types import TeachingRegistryView
from store.api.types import (
    AsOf,
    Taxonomy,
)
from store.api.validated_documents import ValidatedDocuments
from store.api.variable_text import TextVariables
from store.db import queries
from store.db.damage import DAMAGE, damage_said
from store.db.queries import ledger as ledger_queries
from store.model.taxonomy import taxonomy

MAX_DEPTH = 12  # residuals > edges > node > occurrences > edges > node > assessment > batch > ...
MAX_TOKENS = 5_000  # GraphiQL's introspection query fits; generated abuse does not
MAX_ALIASES = 30
MASKED_MESSAGE = INTERNAL_MESSAGE


async def ledger_of(context: RequestContext, as_of: int | None = None) -> Ledger:
    """The `ledger` field's value: the newest tree head, or the head of tree size `as_of`."""
    at = () if as_of is None else (as_of,)  # without asOf, the call it always was
    status = await context.run(queries.ledger_status, *at)
    return Ledger(tree_size=LogIndex(status.tree_size), root_hash=status.root_hash,
                  origin=status.origin)


class _LogAndDomainFields:
    """The Query fields besides the record listings'."""

    @strawberry.field(description="The transparency log's newest tree head, or the head of "
                                  "tree size asOf.")
    @read_by(ledger_of)  # a document of pages and the ledger runs no executor
    async def ledger(self, info: Info[RequestContext, None], as_of: AsOf = None) -> Ledger:
        return await ledger_of(info.context, as_of)

    @strawberry.field(description="What was appended between the trees of fromSize and "
                                  "toSize leaves (any sizes the log has passed; toSize default: "
                                  "the newest), with the consistency proof between them: what "
                                  "changed since an auditor last looked, provably complete. "
                                  f"Pages of at most {ledger_queries.MAX_CHANGES} leaves, each "
                                  "with its own proof; nextFromSize starts the next.")
    async def changes(self, info: Info[RequestContext, None], from_size: LogIndex,
                      to_size: LogIndex | None = None) -> Changes:
        found = await info.context.run(ledger_queries.changes, from_size, to_size)
        return Changes.of(found)

    @strawberry.field(description="The teaching corpora and packs this server checks surfaces "
                                  "against, with their file hashes.")
    def teaching_registry(self, info: Info[RequestContext, None]) -> TeachingRegistryView:
        return TeachingRegistryView.of(info.context.registry())

    @strawberry.field(description="ResidualKind, ResidualSourceAxis and the label map.")
    def taxonomy(self) -> Taxonomy:
        return _TAXONOMY


@functools.cache
def query_type(listings: tuple[queries.RecordListing[Any, Any], ...]) -> type[Any]:
    """The `Query` root: the fields of each listing in turn (`turn` by either identity), the
    journals', then the log's and the domain's."""
    rest = {name: value for fields in (JournalFields, _LogAndDomainFields)
            for name, value in vars(fields).items() if isinstance(value, StrawberryField)}
    namespace = {**listing_fields(listings), **rest, "__module__": __name__}
    made: type[Any] = strawberry.type(type("Query", (), namespace),
                                      description="Read-only views of the audit store.")
    return made


logger = logging.getLogger(__name__)
_TAXONOMY = Taxonomy.of(taxonomy())  # domain constants: built once


def is_masked(error: GraphQLError) -> bool:
    """Whether an error is this code's defect (INTERNAL): masked, and logged by the server;
    GraphQL's own and the query layer's messages go through, a store that cannot be read is
    one warning line (ErrorCodes)."""
    code = code_of(error)
    return code is ErrorCode.INTERNAL and masked_message(error, code) is not None


class AuditSchema(strawberry.Schema):
    # Documents of listing pages answered without graphql-core's execution (None: every
    # document runs through strawberry).
    prepared: PreparedOperations | None = None

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # Log only what is masked: a bad cursor or page size is the caller's, not a bug; a
        # damaged store is the store's, one line each (no traceback).
        unexpected = [error for error in errors if is_masked(error)]
        for error in [e for e in unexpected if isinstance(e.original_error, DAMAGE)]:
            logger.warning("GraphQL %s: %s", ".".join(map(str, error.path or ())),
                           damage_said(error.original_error))  # type: ignore[arg-type]
        unexpected = [e for e in unexpected if not isinstance(e.original_error, DAMAGE)]
        if unexpected:
            super().process_errors(unexpected, execution_context)


# The depth and alias limits' validation rules, made once: the limiter extensions make a
# new rule class per instance, i.e. per request, and the validation cache (keyed by the
# rules) would never hit.
_LIMIT_RULES = [
    coded_rule(rule, ErrorCode.LIMIT_EXCEEDED) for rule in (
        *QueryDepthLimiter(max_depth=MAX_DEPTH).validation_rules,
        *MaxAliasesLimiter(max_alias_count=MAX_ALIASES).validation_rules)
]


def build_schema(*, introspection: bool = True, max_objects: int = DEFAULT_MAX_OBJECTS,
                 listings: tuple[queries.RecordListing[Any, Any], ...] | None = None,
                 plain_leaves: bool = True) -> strawberry.Schema:
    """The schema serving `listings` (default: every one in `queries.LISTINGS`).
    `plain_leaves`: complete plain leaf fields in one pass (PageExecutor) and answer documents
    of listing pages from their rows (PreparedOperations); False: strawberry's own execution,
    field by field (the same bytes, slower)."""
    # Factories, not instances: strawberry builds fresh extensions for every request.
    # ParserCache (a bounded LRU, 128 documents) skips re-parsing a document already seen,
    # e.g. the Workbench's operations, and ValidatedDocuments re-validating it.
    extensions: list[type[SchemaExtension] | Callable[[], SchemaExtension]] = [
        functools.partial(AddValidationRules, _LIMIT_RULES),
        functools.partial(MaxTokensLimiter, max_token_count=MAX_TOKENS),
        TextVariables,
        OperationChoice,
        functools.partial(ObjectLimit, max_objects=max_objects),
        ErrorCodes,  # codes every error, masks what is not the caller's
        ParserCache,
        ValidatedDocuments,
    ]
    if not introspection:
        extensions.append(DisableIntrospection)
    query = query_type(tuple(queries.LISTINGS.values()) if listings is None else listings)
    schema = AuditSchema(query=query, extensions=extensions,
                         config=StrawberryConfig(scalar_map=LOG_INDEX_SCALAR),
                         execution_context_class=PageExecutor if plain_leaves else None)
    if plain_leaves:
        schema.prepared = PreparedOperations(schema, max_tokens=MAX_TOKENS,
                                             max_objects=max_objects, limit_rules=_LIMIT_RULES,
                                             introspection=introspection)
    return schema


def schema_sdl() -> str:
    """The SDL `graphql/schema.graphql` must equal (introspection does not change it)."""
    return print_schema(build_schema()) + "\n"
