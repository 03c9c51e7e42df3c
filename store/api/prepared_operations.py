"""A document of listing pages answered without strawberry's and graphql-core's execution.

The Workbench's ResidualsByTaxonomy and LedgerStatus are documents whose root fields are
listing pages built from their rows (prepared_pages.py), and the ledger. Around those pages
a request still paid strawberry's eight extensions, its argument conversion and
graphql-core's executor: about as much as the page itself. Such a document is answered here
instead, from the same plans, the same arguments and the same reads (the root fields at
once, each in a worker thread, as graphql-core runs them), with every check the usual path
makes before it executes:

- parsed at most MAX_TOKENS tokens, and valid under the schema's rules and its depth and
  alias limits (and without introspection where it is off): found once per query text;
- one operation, the one named (OperationChoice's rule), a query;
- variables that are text (TextVariables), coerced by graphql-core's own
  `get_variable_values`, and an object estimate within the server's bound (ObjectLimit);
- each root field, as graphql-core collects them (@skip and @include by the variables), is
  `__typename`, a listing's list field without `search` whose selection has a page plan, or
  a field whose resolver names its reader (`read_by`: `ledger`; `read_in_thread`: a record
  by id) and whose selection the compiled completions complete plainly (compiled_completion.py,
  as PageExecutor does, and for a record by id the fields below that read in its thread: its
  page of sightings); its arguments coerced by graphql-core (`get_argument_values`) and
  converted by strawberry (`convert_arguments`), as its resolver receives them.

A record by id is read and completed in one worker thread, in one transaction: the record,
then each field below that reads (ReadScope), as the closure reaches it. A failure below it
(the time limit too) is a value its closure does not complete, which the usual path answers.

Anything else — a check that fails, an argument that does not convert, a cursor refused, a
value the plan hands back (None: graphql-core would answer an error), a time limit reached,
any exception — answers nothing here, and the request runs the usual way from the start,
which gives its answer or its error: a read-only request can be run twice. One of several
root reads past the time limit (the deadline passed, whatever the failure it raised) hands
the request back with a time limit of its own, so that graphql-core answers each root field
as it ends (at most twice the limit in all). The
answer is the dict graphql-core's execution gives, field for field and in the same order
(tests/api/test_prepared_operations.py compares the bytes with strawberry's own execution).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
import strawberry
from graphql import (
    DocumentNode,
    FragmentDefinitionNode,
    GraphQLError,
    GraphQLObjectType,
    NoSchemaIntrospectionCustomRule,
    OperationDefinitionNode,
    OperationType,
    parse,
    specified_rules,
)
from graphql.execution.collect_fields import FragmentDetails, collect_fields
from graphql.execution.values import VariableValues, get_argument_values, get_variable_values
from graphql.pyutils import gather_with_cancel
from sqlalchemy import Connection
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types import ExecutionResult
from strawberry.types.arguments import convert_arguments
from strawberry.types.field import StrawberryField

from store.api.context import RequestContext
from store.api.object_estimate import estimate_objects
from store.api.page_executor import compiled_completions, page_plans
from store.api.prepared_pages import PagePlan
from store.api.thread_reads import ReadScope, reading_in
from store.api.validated_documents import validated
from store.api.variable_text import lone_surrogate
from store.db.queries import QueryTimeout

CACHED_DOCUMENTS = 128  # query texts, as ParserCache's; past it the cache starts afresh
# A document's reads for the same variables (a view refreshed, clients watching one page):
# its variables coerced, objects estimated, fields collected and arguments converted once.
# Reads hold no row and no time: only what the document and its variables say.
KEPT_READS = 256  # (document, variables) pairs; past it the cache starts afresh
_NOT_ANSWERED: Any = object()  # a page its plan hands back to the usual path


@dataclass(frozen=True, slots=True)
class _Document:
    """A parsed, valid document's one operation (a query) and its fragments."""
    document: DocumentNode
    operation: OperationDefinitionNode
    fragments: dict[str, FragmentDetails]


@dataclass(frozen=True, slots=True)
class _Read:
    """One root list field's read: its plan, listing and arguments as its resolver reads
    them (ListedPage.reading)."""
    plan: PagePlan
    listing: Any
    reading: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _RootRead:
    """One other root field's read: its resolver's own reader (read_by) with the arguments
    the resolver receives, its value completed by the compiled completion PageExecutor uses
    (compiled_completion.py), which raises where graphql-core must complete it."""
    reader: Callable[..., Awaitable[Any]]
    arguments: dict[str, Any]
    complete: Callable[[Any], Any]
    plain_json: bool  # every leaf it completes is a text, an int, a bool or null


@dataclass(frozen=True, slots=True)
class _ThreadRead:
    """One root field read in a worker thread (read_in_thread): its reader with the arguments
    the resolver receives, its value completed in the same thread by a compiled closure that
    may read more on the same connection (ReadScope)."""
    reader: Callable[..., Any]
    arguments: dict[str, Any]
    complete: Callable[[Any], Any]
    variables: VariableValues
    plain_json: bool  # every leaf it completes is a text, an int, a bool or null


RootReader = Callable[..., Awaitable[Any]]
K = TypeVar("K")
V = TypeVar("V")


def _kept(cache: dict[K, V], limit: int, key: K, make: Callable[[], V]) -> V:
    """`cache[key]`, made by `make()` when missing; at `limit` entries the cache starts
    afresh (ParserCache's way: no order kept per hit)."""
    if key in cache:
        return cache[key]
    made = make()
    if len(cache) >= limit:
        cache.clear()
    cache[key] = made
    return made


def read_by(reader: RootReader) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Marks a root field's resolver as answered, here, by `reader(context, **arguments)`: what
    the resolver returns, without strawberry's Info (the resolver calls the same function)."""
    def marked(resolver: Callable[..., Any]) -> Callable[..., Any]:
        resolver.root_reader = reader  # type: ignore[attr-defined]
        return resolver
    return marked


class PlainResult(ExecutionResult):
    """A result whose data holds only texts, ints, bools, nulls, lists and dicts (each plan's
    or compiled closure's plain_json): its response may be encoded by orjson
    (AuditGraphQL.encode_json)."""


class PreparedOperations:
    """The documents of one schema answered from their pages' rows (see the module)."""

    def __init__(self, schema: strawberry.Schema, *, max_tokens: int, max_objects: int,
                 limit_rules: list[Any], introspection: bool) -> None:
        self.schema = schema
        self.graphql_schema = schema._schema
        query_type = self.graphql_schema.query_type
        assert query_type is not None
        self.query_type: GraphQLObjectType = query_type
        self.max_tokens = max_tokens
        self.max_objects = max_objects
        # The rules strawberry validates with: graphql-core's, then AddValidationRules'
        # (the depth and alias limits), then DisableIntrospection's.
        self.rules: tuple[Any, ...] = (*specified_rules, *limit_rules, *(
            () if introspection else (NoSchemaIntrospectionCustomRule,)))
        self.plans = page_plans(self.graphql_schema)
        self.completions = compiled_completions(self.graphql_schema)
        self._documents: dict[tuple[str, str | None], _Document | None] = {}
        self._kept_reads: dict[tuple[str, str | None, bytes], list[
            tuple[str, _Read | _RootRead | _ThreadRead | None]] | None] = {}

    async def answer(self, query: str | None, variables: Mapping[str, Any] | None,
                     operation_name: str | None, context: RequestContext
                     ) -> ExecutionResult | None:
        """The operation's result, or None: the usual path answers it."""
        if not isinstance(query, str) or not isinstance(context, RequestContext):
            return None
        reads: list[tuple[str, _Read | _RootRead | _ThreadRead | None]] | None = None
        try:
            document = self._document(query, operation_name)
            if document is None:
                return None
            reads = self._kept_reads_of(query, operation_name, document, variables or {})
            if reads is None:
                return None
            # The root fields at once, as graphql-core runs a query's: each read first here,
            # then, if it is not quick, in a worker thread of its own (AuditStore.run_quick).
            values = await gather_with_cancel(*(self._value(read, context)
                                                for _, read in reads))
        except Exception as error:  # the usual path answers it: its value or its error
            past = isinstance(error, QueryTimeout) or time.monotonic() >= context.deadline
            if past and reads is not None and sum(read is not None for _, read in reads) > 1:
                # graphql-core runs each root field to its own end: one past the time limit
                # is answered as such while another answers in time. Rerun past this
                # deadline, every field would fail at once, the first named for the slow
                # one; so the usual path gets a time limit of its own (a request handed
                # back past its limit may take twice the limit, never more). A read in one
                # thread fails below its root as a value not completed, not as the time
                # limit: the deadline says so.
                context.deadline = context.db.deadline()
            return None
        if any(value is _NOT_ANSWERED for value in values):
            return None
        plain = all(read is None or (read.plan.plain_json if isinstance(read, _Read)
                                     else read.plain_json) for _, read in reads)
        data = {name: value for (name, _), value in zip(reads, values, strict=True)}
        return (PlainResult if plain else ExecutionResult)(data=data, errors=None)

    async def _value(self, read: _Read | _RootRead | _ThreadRead | None,
                     context: RequestContext) -> Any:
        """A root field's completed value; _NOT_ANSWERED when its plan hands it back."""
        if read is None:
            return self.query_type.name
        if isinstance(read, _RootRead):  # raises where graphql-core must complete
            return read.complete(await read.reader(context, **read.arguments))
        if isinstance(read, _ThreadRead):  # raises where graphql-core must complete
            run = context.reader_for(read.arguments.get("search"))
            return await run(self._read_in_thread, read)
        built = await context.run_quick(read.plan.read, read.listing, *read.reading)
        return _NOT_ANSWERED if built is None else built.value

    def _read_in_thread(self, connection: Connection, read: _ThreadRead) -> Any:
        with reading_in(ReadScope(connection, read.variables, self._converted)):
            return read.complete(read.reader(connection, None, **read.arguments))

    def _document(self, query: str, operation_name: str | None) -> _Document | None:
        return _kept(self._documents, CACHED_DOCUMENTS, (query, operation_name),
                     lambda: self._parsed(query, operation_name))

    def _parsed(self, query: str, operation_name: str | None) -> _Document | None:
        try:
            document = parse(query, max_tokens=self.max_tokens)
        except GraphQLError:
            return None
        if validated(self.graphql_schema, document, self.rules):
            return None
        operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
        if operation_name is None:
            chosen = operations if len(operations) == 1 else []
        else:
            chosen = [d for d in operations if d.name and d.name.value == operation_name]
        if len(chosen) != 1 or chosen[0].operation is not OperationType.QUERY:
            return None
        fragments: dict[str, FragmentDetails] = {}
        for definition in document.definitions:
            if isinstance(definition, FragmentDefinitionNode):
                if definition.variable_definitions:  # fragment variables: graphql-core's
                    return None
                fragments[definition.name.value] = FragmentDetails(definition)
        return _Document(document, chosen[0], fragments)

    def _kept_reads_of(self, query: str, operation_name: str | None, document: _Document,
                       variables: Mapping[str, Any]
                       ) -> list[tuple[str, _Read | _RootRead | _ThreadRead | None]] | None:
        """`_reads`, kept for the same document and variables (KEPT_READS)."""
        try:
            key = (query, operation_name, orjson.dumps(variables, option=orjson.OPT_SORT_KEYS))
        except TypeError:  # not JSON's values (a lone surrogate, a Python caller's own)
            return self._reads(document, variables, operation_name)
        return _kept(self._kept_reads, KEPT_READS, key,
                     lambda: self._reads(document, variables, operation_name))

    def _reads(self, document: _Document, variables: Mapping[str, Any],
               operation_name: str | None
               ) -> list[tuple[str, _Read | _RootRead | _ThreadRead | None]] | None:
        """Each root field's read (None for __typename), in the response's order; None
        when a field is not a page built from its rows."""
        if lone_surrogate(variables) is not None:
            return None
        schema = self.graphql_schema
        coerced = get_variable_values(schema, document.operation.variable_definitions or (),
                                      dict(variables))
        if isinstance(coerced, list):  # errors
            return None
        if estimate_objects(schema, document.document, operation_name,
                            variables) > self.max_objects:
            return None
        collected = collect_fields(schema, document.fragments, coerced, self.query_type,
                                   document.operation)
        if collected.new_defer_usages or collected.forbidden_directive_instances:
            return None
        reads: list[tuple[str, _Read | _RootRead | _ThreadRead | None]] = []
        for response_name, details in collected.grouped_field_set.items():
            if any(d.defer_usage is not None or d.fragment_variable_values is not None
                   for d in details):
                return None
            node = details[0].node
            name = node.name.value
            if name == "__typename":
                reads.append((response_name, None))
                continue
            field_def = self.query_type.fields.get(name)
            definition = None if field_def is None else (field_def.extensions or {}).get(
                GraphQLCoreConverter.DEFINITION_BACKREF)
            if field_def is None or not isinstance(definition, StrawberryField) or (
                    definition.extensions or definition.base_resolver is None):
                return None
            resolver = definition.base_resolver.wrapped_func
            arguments = get_argument_values(field_def, node, coerced)
            reader = getattr(resolver, "root_reader", None)
            if reader is not None:
                compiled = self.completions.compiled(field_def.type, details,
                                                     document.fragments)
                if compiled is None:  # not a plain selection: graphql-core completes it
                    return None
                reads.append((response_name, _RootRead(reader, self._converted(
                    definition, arguments), *compiled)))
                continue
            thread_reader = getattr(resolver, "thread_reader", None)
            if thread_reader is not None:
                compiled = self.completions.compiled(field_def.type, details,
                                                     document.fragments, reads=True)
                if compiled is None:  # graphql-core completes it
                    return None
                complete, plain_json = compiled
                reads.append((response_name, _ThreadRead(thread_reader, self._converted(
                    definition, arguments), complete, coerced, plain_json)))
                continue
            listed = getattr(resolver, "listed_page", None)
            if listed is None:
                return None
            if arguments.get("search") is not None:  # a search's page has its snippets
                return None
            plan = self.plans.of_field(field_def.type, tuple(d.node for d in details),
                                       document.fragments, listed.listing, listed.view)
            if plan is None:
                return None
            reads.append((response_name, _Read(plan, listed.listing, listed.reading(
                **self._converted(definition, arguments)))))
        return reads

    def _converted(self, definition: StrawberryField, arguments: dict[str, Any]
                   ) -> dict[str, Any]:
        """The arguments as strawberry converts them for the resolver (its Python names)."""
        return convert_arguments(arguments, definition.arguments,
                                 scalar_registry=self.schema.schema_converter.scalar_registry,
                                 config=self.schema.config)
