"""A field's value and its whole selection completed by closures made once per document.

graphql-core completes a value field by field: per object it collects the selection, makes a
path and a resolve info per field, calls its resolver, checks for awaitables and completes the
result; per request it does that work again for every row of a page. When a field's return
type and everything selected under it are *plain* — object types without `is_type_of`,
lists, leaves; fields that read an attribute (strawberry's default resolver) or call a
synchronous resolver taking only `self` (`nodes`, a turn's evidence payloads); `__typename`;
no arguments, no directives, no deferred or fragment-variable selections — the selection is
compiled once into one closure per type that builds the response's dicts and lists directly.

A selection may also hold fields that read the database, when their resolvers say how
(thread_reads.py: a record by id, a record's page of sightings, a connection's count known
with its page): such a selection is compiled only for a caller that runs the closure inside
one worker thread's read (prepared_operations.py). The whole value is then read in one
transaction and completed in one pass; PageExecutor, on the event loop, never gets such a
closure.
The closures are cached by the field nodes of the (parser-cached) document, so a Workbench
document is compiled on its first request and reused by every later one.

What a closure does not plainly complete — null where null is not allowed, a value that is
an exception, a leaf that does not coerce, an item list that is not a list or tuple, a
resolver that raises or returns an awaitable — raises `_NotPlain`: the caller then completes
the same value with graphql-core (store/api/page_executor.py), so its value or its error is
the one graphql-core gives. Nothing a closure reads has side effects, so completing a value
twice answers as completing it once.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from operator import attrgetter
from typing import Any, Generic, TypeVar

from graphql import (
    GRAPHQL_MAX_INT,
    GRAPHQL_MIN_INT,
    FieldNode,
    FragmentSpreadNode,
    GraphQLBoolean,
    GraphQLEnumType,
    GraphQLID,
    GraphQLInt,
    GraphQLLeafType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLString,
    InlineFragmentNode,
    SelectionSetNode,
    Undefined,
    is_leaf_type,
)
from graphql.execution.collect_fields import (
    FieldDetailsList,
    FragmentDetails,
    does_fragment_condition_match,
)
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.field import StrawberryField

from store.api.thread_reads import known_read, thread_read

Complete = Callable[[Any], Any]  # a value -> its completed response value (or _NotPlain)
T = TypeVar("T")

# The built-in scalars whose coercion returns a value of exactly this type as it is
# (graphql-core's serialize_string, serialize_id, serialize_boolean; Int: within 32 bits).
_UNCHANGED: dict[GraphQLScalarType, type] = {GraphQLString: str, GraphQLID: str,
                                             GraphQLBoolean: bool, GraphQLInt: int}
_MIN_INT, _MAX_INT = GRAPHQL_MIN_INT, GRAPHQL_MAX_INT
# The schema's own scalars that complete to a text (DateTime) or an int (LogIndex).
_TEXT_OR_INT_SCALARS = frozenset({"DateTime", "LogIndex"})
CACHED_SELECTIONS = 2048  # compiled selections kept; past it the cache starts afresh


class _NotPlain(Exception):
    """A value the compiled closure does not complete plainly: graphql-core completes it."""


class _NotCompiled(Exception):
    """A selection the compiler does not cover (graphql-core completes it every time)."""


class SelectionCache(Generic[T]):
    """What is made once per (return type, field nodes) of a parser-cached document. The nodes
    are kept, so no id in a key is reused while it is cached; past CACHED_SELECTIONS entries
    the cache starts afresh."""

    def __init__(self) -> None:
        self._entries: dict[tuple[int, tuple[int, ...]], tuple[tuple[FieldNode, ...], T]] = {}

    def made(self, return_type: Any, nodes: tuple[FieldNode, ...], make: Callable[[], T]) -> T:
        key = (id(return_type), tuple(map(id, nodes)))
        cached = self._entries.get(key)
        if cached is not None and all(a is b for a, b in zip(cached[0], nodes, strict=True)):
            return cached[1]
        made = make()
        if len(self._entries) >= CACHED_SELECTIONS:
            self._entries.clear()
        self._entries[key] = (nodes, made)
        return made


def plain_leaf(leaf_type: Any) -> bool:
    """Whether `leaf_type`'s values complete to texts, ints or bools only (an enum's names too):
    a response of such leaves may be written by orjson (response_json.py); not a float, nor a
    JSON scalar's structure."""
    return (isinstance(leaf_type, GraphQLEnumType) or leaf_type in _UNCHANGED
            or getattr(leaf_type, "name", None) in _TEXT_OR_INT_SCALARS)


class CompiledCompletions:
    """The compiled completion of (return type, field nodes), made on first use."""

    def __init__(self, schema: GraphQLSchema) -> None:
        self.schema = schema
        # (the closure, whether it reads the database: runs only inside a ReadScope, whether
        # every leaf it completes is a plain_leaf)
        self._cache: SelectionCache[tuple[Complete, bool, bool] | None] = SelectionCache()

    def of(self, return_type: GraphQLOutputType, field_details_list: FieldDetailsList,
           fragments: dict[str, FragmentDetails], *, reads: bool = False) -> Complete | None:
        """The closure completing a value of `return_type` selected by `field_details_list`,
        or None when graphql-core must complete it. With `reads`, the closure may read the
        database, and must be called inside `reading_in` (it raises _NotPlain outside)."""
        found = self.compiled(return_type, field_details_list, fragments, reads=reads)
        return None if found is None else found[0]

    def compiled(self, return_type: GraphQLOutputType, field_details_list: FieldDetailsList,
                 fragments: dict[str, FragmentDetails], *, reads: bool = False
                 ) -> tuple[Complete, bool] | None:
        """`of`'s closure and whether it completes every leaf to a text, an int, a bool or
        null (plain_leaf: its value's JSON may be written by orjson), in one lookup."""
        nodes = tuple(details.node for details in field_details_list)

        def make() -> tuple[Complete, bool, bool] | None:
            try:
                if any(details.defer_usage is not None or details.fragment_variable_values
                       is not None for details in field_details_list):
                    raise _NotCompiled
                compiler = _Compiler(self.schema, fragments)
                return compiler.value(return_type, nodes), compiler.reads, compiler.plain_json
            except _NotCompiled:
                return None

        made = self._cache.made(return_type, nodes, make)
        if made is None or (made[1] and not reads):
            return None
        return made[0], made[2]


def selected_fields(schema: GraphQLSchema, fragments: dict[str, FragmentDetails],
                    object_type: GraphQLObjectType, nodes: tuple[FieldNode, ...]
                    ) -> dict[str, tuple[FieldNode, ...]] | None:
    """The fields `nodes` select on `object_type`, by response name, as graphql-core collects
    them; None for a selection it collects otherwise (directives, fragment variables)."""
    grouped: dict[str, list[FieldNode]] = {}
    visited: set[str] = set()
    try:
        compiler = _Compiler(schema, fragments)
        for node in nodes:
            if node.selection_set is not None:
                compiler._collect(object_type, node.selection_set, grouped, visited)
    except _NotCompiled:
        return None
    return {name: tuple(found) for name, found in grouped.items()}


def completion(schema: GraphQLSchema, return_type: GraphQLOutputType) -> Complete:
    """The closure completing a leaf value of `return_type` (nullable or not) as graphql-core
    does; it raises for a value graphql-core would answer with an error."""
    return _Compiler(schema, {}).value(return_type, ())


def selection_completion(schema: GraphQLSchema, fragments: dict[str, FragmentDetails],
                         return_type: GraphQLOutputType, nodes: tuple[FieldNode, ...]
                         ) -> tuple[Complete, bool] | None:
    """The closure completing a value of `return_type` selected by `nodes` (an object's
    fields, a list's items) as graphql-core does, and whether every leaf it completes is a
    plain_leaf; None when graphql-core must complete it or a field below reads the database.
    The closure raises for a value graphql-core would answer with an error."""
    compiler = _Compiler(schema, fragments)
    try:
        made = compiler.value(return_type, nodes)
    except _NotCompiled:
        return None
    return None if compiler.reads else (made, compiler.plain_json)


class _Compiler:
    def __init__(self, schema: GraphQLSchema, fragments: dict[str, FragmentDetails]) -> None:
        self.schema = schema
        self.fragments = fragments
        self.reads = False  # a field below reads the database (thread_reads.py)
        self.plain_json = True  # every leaf below is a plain_leaf

    def value(self, return_type: GraphQLOutputType, nodes: tuple[FieldNode, ...]) -> Complete:
        if isinstance(return_type, GraphQLNonNull):
            inner = self._nullable(return_type.of_type, nodes)

            def non_null(value: Any) -> Any:
                if value is None or value is Undefined:
                    raise _NotPlain
                return inner(value)

            return non_null
        nullable = self._nullable(return_type, nodes)

        def maybe_null(value: Any) -> Any:
            return None if value is None or value is Undefined else nullable(value)

        return maybe_null

    def _nullable(self, return_type: GraphQLOutputType, nodes: tuple[FieldNode, ...]
                  ) -> Complete:
        """The closure for a value that is neither null nor undefined."""
        if isinstance(return_type, GraphQLList):
            item = self.value(return_type.of_type, nodes)

            def items(value: Any) -> Any:
                if type(value) is not list and type(value) is not tuple:
                    raise _NotPlain
                return [item(each) for each in value]

            return items
        if isinstance(return_type, GraphQLObjectType) and return_type.is_type_of is None:
            return self._object(return_type, nodes)
        if is_leaf_type(return_type):
            if not plain_leaf(return_type):
                self.plain_json = False
            return _leaf(return_type)
        raise _NotCompiled  # an interface or a union: its runtime type is resolved per value

    def _object(self, object_type: GraphQLObjectType, nodes: tuple[FieldNode, ...]
                ) -> Complete:
        grouped: dict[str, list[FieldNode]] = {}
        visited: set[str] = set()
        for node in nodes:
            if node.selection_set is not None:
                self._collect(object_type, node.selection_set, grouped, visited)
        entries: list[tuple[str, Callable[[Any], Any] | None, Complete | str]] = []
        for response_name, field_nodes in grouped.items():
            entries.append((response_name, *self._field(object_type, tuple(field_nodes))))
        return _object_closure(entries)

    def _collect(self, object_type: GraphQLObjectType, selection_set: SelectionSetNode,
                 grouped: dict[str, list[FieldNode]], visited: set[str]) -> None:
        """graphql-core's collect_fields for a selection without directives."""
        for selection in selection_set.selections:
            if selection.directives:  # @include, @skip, @defer: they depend on variables
                raise _NotCompiled
            if isinstance(selection, FieldNode):
                name = selection.alias.value if selection.alias else selection.name.value
                grouped.setdefault(name, []).append(selection)
            elif isinstance(selection, InlineFragmentNode):
                if does_fragment_condition_match(self.schema, selection, object_type):
                    self._collect(object_type, selection.selection_set, grouped, visited)
            elif isinstance(selection, FragmentSpreadNode):
                fragment = self.fragments.get(selection.name.value)
                if fragment is None or not does_fragment_condition_match(
                        self.schema, fragment.definition, object_type):
                    continue
                if fragment.variable_signatures:
                    raise _NotCompiled
                if selection.name.value in visited:
                    continue
                visited.add(selection.name.value)
                self._collect(object_type, fragment.definition.selection_set, grouped,
                              visited)
            else:
                raise _NotCompiled

    def _field(self, parent_type: GraphQLObjectType, nodes: tuple[FieldNode, ...]
               ) -> tuple[Callable[[Any], Any] | None, Complete | str]:
        """(how the field's raw value is read, its closure); (None, the type's name) for
        __typename."""
        name = nodes[0].name.value
        if name == "__typename":
            return None, parent_type.name
        field_def = parent_type.fields.get(name)
        if field_def is None:
            raise _NotCompiled
        definition = (field_def.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
        if not isinstance(definition, StrawberryField) or definition.extensions:
            raise _NotCompiled
        resolver = definition.base_resolver
        reader = getattr(resolver and resolver.wrapped_func, "thread_reader", None)
        if reader is not None:
            self.reads = True
            return thread_read(field_def, definition, nodes[0], reader, _NotPlain), self.value(
                field_def.type, nodes)
        if field_def.args or any(node.arguments for node in nodes):
            raise _NotCompiled
        known = getattr(resolver and resolver.wrapped_func, "known_read", None)
        if known is not None:
            self.reads = True
            return known_read(known, _NotPlain), self.value(field_def.type, nodes)
        read: Callable[[Any], Any]
        if getattr(field_def.resolve, "_is_default", False):  # a basic field: no resolver
            if definition.default_resolver is not getattr or definition.base_resolver:
                raise _NotCompiled
            read = attrgetter(definition.python_name)
        else:
            read = _method(definition)
        return read, self.value(field_def.type, nodes)


def _method(definition: StrawberryField) -> Callable[[Any], Any]:
    """A synchronous resolver of `self` alone (no arguments, info, root nor parent), called
    as strawberry calls it: its value, or _NotPlain for an awaitable."""
    resolver = definition.base_resolver
    if (resolver is None or resolver.is_async or resolver.arguments
            or resolver.info_parameter is not None or resolver.root_parameter is not None
            or resolver.parent_parameter is not None or resolver.self_parameter is None):
        raise _NotCompiled

    def call(source: Any) -> Any:
        found = resolver(source)
        if inspect.isawaitable(found):
            if inspect.iscoroutine(found):
                found.close()
            raise _NotPlain
        return found

    return call


def _object_closure(entries: list[tuple[str, Callable[[Any], Any] | None, Complete | str]]
                    ) -> Complete:
    def complete_object(value: Any) -> dict[str, Any]:
        if isinstance(value, Exception):
            raise _NotPlain
        completed: dict[str, Any] = {}
        for response_name, read, complete in entries:
            if read is None:
                completed[response_name] = complete  # __typename
            else:
                completed[response_name] = complete(read(value))  # type: ignore[operator]
        return completed

    return complete_object


def _leaf(leaf_type: GraphQLLeafType) -> Complete:
    """graphql-core's complete_leaf_value, with the values that coerce to themselves (and a
    strawberry enum's members, by their names) taken as they are."""
    unchanged = _UNCHANGED.get(leaf_type) if isinstance(leaf_type, GraphQLScalarType) else None
    enum_class = getattr(leaf_type, "wrapped_cls", None)
    names: dict[Any, Any] = {}
    coerce = leaf_type.coerce_output_value

    def leaf(raw: Any) -> Any:
        kind = type(raw)
        if kind is unchanged and (kind is not int or _MIN_INT <= raw <= _MAX_INT):
            return raw
        if kind is enum_class and raw in names:
            return names[raw]
        if isinstance(raw, Exception):
            raise _NotPlain
        try:
            coerced = coerce(raw)
        except Exception:
            raise _NotPlain from None
        if coerced is None or coerced is Undefined:
            raise _NotPlain
        if kind is enum_class:  # a member's name never changes
            names[raw] = coerced
        return coerced

    return leaf
