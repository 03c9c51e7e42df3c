"""graphql-core's executor, completing a page's plain fields in one pass.

A page is lists of records whose fields are mostly plain columns: `residualId`, `seq`,
`residualKind`. graphql-core resolves each of them as a field of its own (a path, a resolve
info, a resolver call, an awaitable check, value completion): ~5 µs a field, most of a page's
time. For a selection set on an object type, `PageExecutor` works out once which fields are
plain (a strawberry field without resolver, extensions, arguments or directives, read with
getattr): a leaf (scalar or enum) is read and coerced as graphql-core would
(`coerce_output_value`); an object (an edge's `node`) has its selection run on it at once. A
list's object items (`edges`, `nodes`) go straight to their selection too. Anything else —
other fields, and a plain value that is null where null is not allowed, an exception, or does
not coerce — goes through graphql-core's own `execute_field` and `complete_value`, so its
value or error is the one graphql-core gives. Field order, and so the response's bytes, stay
the same (tests/api/test_page_executor.py compares both paths).

Before all that, a value whose whole selection is plain is completed by the closure
store/api/compiled_completion.py compiled for it once per document (a page, its rows and
their fields in one call); what that closure does not complete plainly, graphql-core does.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, NamedTuple
from weakref import WeakKeyDictionary

from graphql import (
    GRAPHQL_MAX_INT,
    GRAPHQL_MIN_INT,
    GraphQLBoolean,
    GraphQLID,
    GraphQLInt,
    GraphQLLeafType,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLResolveInfo,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLString,
    Undefined,
    get_nullable_type,
    is_leaf_type,
    is_non_null_type,
)
from graphql.execution.collect_fields import FieldDetailsList, GroupedFieldSet
from graphql.pyutils import AwaitableOrValue, Path, gather_with_cancel
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.field import StrawberryField

from store.api.compiled_completion import CompiledCompletions
from store.api.context import RequestContext
from store.api.prepared_pages import PagePlanner, PagePlans, PreparedValue
from store.api.search_arguments import malformed_search


class PlainLeaf(NamedTuple):
    """A field read as `getattr(source, attribute)` and coerced by `leaf_type`."""
    attribute: str
    leaf_type: GraphQLLeafType
    nullable: bool
    unchanged: type | None  # values of exactly this type coerce to themselves
    enum_class: type | None  # a strawberry enum's Python class: its members coerce to a name
    enum_names: dict[Any, str]  # those names, filled as members are met


# The built-in scalars whose coercion returns a value of exactly this type as it is
# (graphql-core's serialize_string, serialize_id, serialize_boolean; Int: within 32 bits).
_UNCHANGED: dict[GraphQLScalarType, type] = {GraphQLString: str, GraphQLID: str,
                                             GraphQLBoolean: bool, GraphQLInt: int}


class PlainObject(NamedTuple):
    """A field read as `getattr(source, attribute)` whose value is an object of `object_type`
    (which has no is_type_of check): its selection runs on the value at once."""
    attribute: str
    return_type: GraphQLOutputType
    object_type: GraphQLObjectType


# (response name, its field nodes, what it plainly is; None: graphql-core executes it)
PlanEntry = tuple[str, FieldDetailsList, PlainLeaf | PlainObject | None]


def plain_field(parent_type: GraphQLObjectType, field_details_list: FieldDetailsList
                ) -> PlainLeaf | PlainObject | None:
    """The plain leaf or object a selected field is, or None when graphql-core must execute
    it (a resolver, arguments, directives, a list, an interface, __typename)."""
    node = field_details_list[0].node
    field_def = parent_type.fields.get(node.name.value)  # None: __typename, introspection
    if field_def is None or field_def.args or any(
            details.node.arguments or details.node.directives for details in field_details_list):
        return None
    definition = (field_def.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
    if not (isinstance(definition, StrawberryField) and definition.is_basic_field
            and definition.default_resolver is getattr
            and getattr(field_def.resolve, "_is_default", False)):
        return None
    named = get_nullable_type(field_def.type)
    if is_leaf_type(named):
        return PlainLeaf(definition.python_name, named, not is_non_null_type(field_def.type),
                         _UNCHANGED.get(named) if isinstance(named, GraphQLScalarType) else None,
                         getattr(named, "wrapped_cls", None), {})
    if isinstance(named, GraphQLObjectType) and named.is_type_of is None:
        return PlainObject(definition.python_name, field_def.type, named)
    return None


class PageExecutor(StrawberryGraphQLCoreExecutionContext):
    """strawberry's executor with a selection set's plain fields completed in one pass."""

    @classmethod
    def build(cls, *args: Any, **kwargs: Any) -> Any:
        """graphql-core's executor, or its request errors: a malformed `search` one of them
        (store/api/search_arguments.py)."""
        built = super().build(*args, **kwargs)
        if isinstance(built, list):
            return built
        refused = malformed_search(built.operation, built.fragment_definitions,
                                   built.variable_values.coerced)
        return built if refused is None else [refused]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # id(grouped field set) -> (it, its plan): kept alive with its plan, so no id is reused.
        self._plans: dict[int, tuple[GroupedFieldSet, list[PlanEntry] | None]] = {}
        # id(output type) -> the object type whose selection completes a value of it at once
        self._objects: dict[int, GraphQLObjectType | None] = {}
        manager = self.middleware_manager
        self._plain = manager is None or not manager.middlewares  # a middleware sees each field
        self._compiled = compiled_completions(self.schema)
        context = self.context_value
        if self._plain and isinstance(context, RequestContext):
            context.page_plans = PagePlanner(page_plans(self.schema), self.fragments)

    def _plan(self, parent_type: GraphQLObjectType, grouped_field_set: GroupedFieldSet
              ) -> list[PlanEntry] | None:
        cached = self._plans.get(id(grouped_field_set))
        if cached is not None and cached[0] is grouped_field_set:
            return cached[1]
        entries = [(name, details, plain) for (name, details), plain in zip(
            grouped_field_set.items(), _plain_fields(parent_type, grouped_field_set),
            strict=True)]
        plan = entries if any(plain is not None for _, _, plain in entries) else None
        self._plans[id(grouped_field_set)] = (grouped_field_set, plan)
        return plan

    def execute_fields(
        self,
        parent_type: GraphQLObjectType,
        source_value: Any,
        path: Path | None,
        grouped_field_set: GroupedFieldSet,
        position_context: Any,
    ) -> AwaitableOrValue[dict[str, Any]]:
        plan = self._plan(parent_type, grouped_field_set) if self._plain else None
        if plan is None:
            return super().execute_fields(parent_type, source_value, path, grouped_field_set,
                                          position_context)
        # graphql-core's execute_fields, with plain fields completed in place.
        results: dict[str, Any] = {}
        is_awaitable = self.is_awaitable
        awaitable_fields: list[str] = []
        try:
            for response_name, field_details_list, plain in plan:
                if type(plain) is PlainLeaf:
                    value = _leaf_value(source_value, plain)
                    if value is not _EXECUTE:
                        results[response_name] = value
                        continue
                field_path = Path(path, response_name, parent_type.name)
                result: Any = _EXECUTE
                if type(plain) is PlainObject:
                    result = self._object_field(plain, source_value, field_details_list,
                                                field_path, position_context)
                if result is _EXECUTE:
                    result = self.execute_field(parent_type, source_value, field_details_list,
                                                field_path, position_context)
                if result is not Undefined:
                    results[response_name] = result
                    if is_awaitable(result):
                        awaitable_fields.append(response_name)
        except Exception:
            if awaitable_fields:
                self.settle_in_background([results[field] for field in awaitable_fields])
            raise
        if not awaitable_fields:
            return results
        return _awaited(results, awaitable_fields)

    def _object_field(self, plain: PlainObject, source: Any,
                      field_details_list: FieldDetailsList, path: Path,
                      position_context: Any) -> Any:
        """execute_field's result for a plain object field: its value's selection completed
        at once (_EXECUTE for a value that is not plainly an object: execute_field's)."""
        try:
            value = getattr(source, plain.attribute)
        except Exception:
            return _EXECUTE
        if value is None or value is Undefined or isinstance(value, Exception) or (
                self.is_awaitable(value)):
            return _EXECUTE
        try:
            completed = self.collect_and_execute_subfields(
                plain.object_type, field_details_list, path, value, position_context)
        except Exception as raw_error:
            self.handle_field_error(raw_error, plain.return_type, field_details_list, path)
            return None
        if self.is_awaitable(completed):
            return self._await_field(completed, plain.return_type, field_details_list, path)
        return completed

    async def _await_field(self, completed: Awaitable[Any], return_type: GraphQLOutputType,
                           field_details_list: FieldDetailsList, path: Path) -> Any:
        """execute_field's await_completed: a field error becomes null or propagates."""
        try:
            return await completed
        except Exception as raw_error:
            self.handle_field_error(raw_error, return_type, field_details_list, path)
            return None

    def complete_value(self, return_type: GraphQLOutputType,
                       field_details_list: FieldDetailsList, info: GraphQLResolveInfo[Any],
                       path: Path, result: Any, position_context: Any
                       ) -> AwaitableOrValue[Any]:
        if type(result) is PreparedValue:  # a page built from its rows (prepared_pages.py)
            return result.value
        # A value whose whole selection is plain: completed by its compiled closure, or by
        # graphql-core when the closure meets what it does not complete plainly.
        if self._plain:
            complete = self._compiled.of(return_type, field_details_list, self.fragments)
            if complete is not None:
                try:
                    return complete(result)
                except Exception:  # graphql-core completes it: its value or its error
                    pass
        # An object (a page's edge or node) of an object type without is_type_of: what
        # graphql-core's complete_value, complete_object_value come to, in one call.
        object_type = self._objects.get(id(return_type), _UNKNOWN)
        if object_type is _UNKNOWN:
            object_type = self._objects[id(return_type)] = _object_type(return_type)
        if object_type is not None and result is not None and result is not Undefined and (
                not isinstance(result, Exception)):
            return self.collect_and_execute_subfields(
                object_type, field_details_list, path, result, position_context)
        return super().complete_value(return_type, field_details_list, info, path, result,
                                      position_context)


# (id(parent type), ids of the field nodes) -> (the nodes, what each field plainly is): worked
# out once per parsed document, not per request; the type and nodes are kept, so no id is
# reused while cached (a document is parsed once for every schema that runs it).
_PLAINS: dict[tuple[int, tuple[int, ...]], tuple[GraphQLObjectType, tuple[Any, ...],
                                                 list[PlainLeaf | PlainObject | None]]] = {}
CACHED_SELECTIONS = 2048  # past it the cache starts afresh


def _plain_fields(parent_type: GraphQLObjectType, grouped_field_set: GroupedFieldSet
                  ) -> list[PlainLeaf | PlainObject | None]:
    """plain_field of each field of the set, in its order."""
    nodes = tuple(details.node for group in grouped_field_set.values() for details in group)
    key = (id(parent_type), tuple(map(id, nodes)))
    found = _PLAINS.get(key)
    if found is not None and found[0] is parent_type and all(
            a is b for a, b in zip(found[1], nodes, strict=True)):
        return found[2]
    plains = [plain_field(parent_type, group) for group in grouped_field_set.values()]
    if len(_PLAINS) >= CACHED_SELECTIONS:
        _PLAINS.clear()
    _PLAINS[key] = (parent_type, nodes, plains)
    return plains


_COMPILED: WeakKeyDictionary[GraphQLSchema, CompiledCompletions] = WeakKeyDictionary()
_PAGE_PLANS: WeakKeyDictionary[GraphQLSchema, PagePlans] = WeakKeyDictionary()


def page_plans(schema: GraphQLSchema) -> PagePlans:
    """The schema's page plans, shared by all its requests (and prepared_operations.py)."""
    found = _PAGE_PLANS.get(schema)
    if found is None:
        found = _PAGE_PLANS[schema] = PagePlans(schema)
    return found


def compiled_completions(schema: GraphQLSchema) -> CompiledCompletions:
    """The schema's compiled completions, shared by all its requests (and
    prepared_operations.py)."""
    found = _COMPILED.get(schema)
    if found is None:
        found = _COMPILED[schema] = CompiledCompletions(schema)
    return found


def _object_type(return_type: GraphQLOutputType) -> GraphQLObjectType | None:
    """The object type (without is_type_of) a value of `return_type` completes as."""
    named = get_nullable_type(return_type)
    if isinstance(named, GraphQLObjectType) and named.is_type_of is None:
        return named
    return None


_UNKNOWN: Any = object()
_MIN_INT, _MAX_INT = GRAPHQL_MIN_INT, GRAPHQL_MAX_INT
_EXECUTE = object()  # a leaf value graphql-core must complete itself (null, error, no coercion)


def _leaf_value(source: Any, leaf: PlainLeaf) -> Any:
    """The completed value of a plain leaf, or _EXECUTE when it is not plainly one."""
    try:
        raw = getattr(source, leaf.attribute)
    except Exception:
        return _EXECUTE
    if raw is None:
        return None if leaf.nullable else _EXECUTE
    kind = type(raw)
    if kind is leaf.unchanged and (kind is not int or _MIN_INT <= raw <= _MAX_INT):
        return raw
    if kind is leaf.enum_class and raw in leaf.enum_names:
        return leaf.enum_names[raw]
    if raw is Undefined or isinstance(raw, Exception):
        return _EXECUTE
    try:
        coerced = leaf.leaf_type.coerce_output_value(raw)
    except Exception:
        return _EXECUTE
    if coerced is None or coerced is Undefined:
        return _EXECUTE
    if kind is leaf.enum_class:  # a member's name never changes
        leaf.enum_names[raw] = coerced
    return coerced


async def _awaited(results: dict[str, Any], awaitable_fields: list[str]) -> dict[str, Any]:
    """The results with their awaitable fields awaited, as graphql-core's execute_fields does."""
    if len(awaitable_fields) == 1:
        field = awaitable_fields[0]
        results[field] = await results[field]
    else:
        awaited = await gather_with_cancel(*(results[field] for field in awaitable_fields))
        results.update(zip(awaitable_fields, awaited, strict=True))
    return results
