"""A page's node built from its row: the columns its selection reads and the dict it becomes.

prepared_pages.py plans a listing's connection (its count, pageInfo, edges and nodes); this
module plans each node's fields. A field is read from one column of the row (a leaf, or a
list or an object one column holds, completed by the compiled completion of its selection),
or is an object of several columns: a record joined to the row (a turn's surface, non-null)
or one a view's `FromValues` makes of the record's values (a turn's verdicts). NodeRows
writes, once per column list, the function that builds the node's dict from a row read by
the columns' places; a value it cannot complete as graphql-core would raises _NotPrepared.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from graphql import (
    GRAPHQL_MAX_INT,
    GRAPHQL_MIN_INT,
    FieldNode,
    GraphQLBoolean,
    GraphQLID,
    GraphQLInt,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLString,
    get_nullable_type,
    is_leaf_type,
)
from graphql.execution.collect_fields import FragmentDetails
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.field import StrawberryField

from store.api.compiled_completion import (
    completion,
    plain_leaf,
    selected_fields,
    selection_completion,
)
from store.api.record_views import (
    FromValue,
    FromValues,
    RecordView,
    record_path,
    view_converter,
)
from store.db.queries.row_records import RowRecord

_UNCHANGED: dict[Any, str] = {GraphQLString: "str", GraphQLID: "str", GraphQLInt: "int"}


# Two signals between this module and prepared_pages.py (which imports them), never errors
# a caller sees: each hands the field to the usual path.
class _NotPrepared(Exception):
    """A page the rows alone do not answer as graphql-core would: the resolver's usual path
    answers it."""


class _Unplanned(Exception):
    """A selection the plans do not answer (the usual path always does)."""


# A node's field: (response name, column (None: a constant or a nested object), slow
# completion, fast kind: a constant's value, or the _Nested object's entries).
Entry = tuple[str, str | None, Callable[[Any], Any] | None, Any]


@dataclass(frozen=True, slots=True)
class _Nested:
    """An object in a node read from several of the row's columns (its entries)."""
    fields: tuple[Entry, ...]


def _columns(fields: Sequence[Entry]) -> frozenset[str]:
    found: set[str] = set()
    for _, column, _, fast in fields:
        if isinstance(fast, _Nested):
            found |= _columns(fast.fields)
        elif column is not None:
            found.add(column)
    return frozenset(found)


def _signature(fields: Sequence[Entry]) -> tuple[Any, ...]:
    """What a node's entries read, by response name: two selections of one node agree on it."""
    return tuple((name, _signature(fast.fields) if isinstance(fast, _Nested) else column)
                 for name, column, _, fast in fields)


class NodeRows:
    """Builds a node's response dict from a page's row, read by the columns' places."""

    def __init__(self, fields: list[Entry]) -> None:
        self.fields = fields
        self.signature = _signature(fields)
        # What a list read by key reads for it (RecordListing.by_keys): these columns alone.
        self.columns = _columns(fields)
        self._built: dict[tuple[str, ...], Callable[[Sequence[Any]], dict[str, Any]]] = {}

    def by_position(self, columns: Sequence[str]) -> Callable[[Sequence[Any]], dict[str, Any]]:
        key = tuple(columns)
        built = self._built.get(key)
        if built is None:
            built = self._built.setdefault(key, self._write(key))
        return built

    def _write(self, columns: tuple[str, ...]) -> Callable[[Sequence[Any]], dict[str, Any]]:
        places = {name: index for index, name in enumerate(columns)}
        namespace: dict[str, Any] = {"MIN": GRAPHQL_MIN_INT, "MAX": GRAPHQL_MAX_INT}

        def written(fields: Sequence[Entry]) -> str:
            items = []
            for name, column, slow, fast in fields:
                number = len(namespace)
                if isinstance(fast, _Nested):
                    items.append(f"{name!r}: {written(fast.fields)}")
                    continue
                if column is None:
                    namespace[f"constant_{number}"] = fast
                    items.append(f"{name!r}: constant_{number}")
                    continue
                place = places.get(column)
                if place is None:  # the usual path reads it by name and fails: let it
                    raise _NotPrepared
                namespace[f"slow_{number}"] = slow
                value = f"r[{place}]"
                if fast == "str":
                    read = f"(v if type(v := {value}) is str else slow_{number}(v))"
                elif fast == "int":
                    read = (f"(v if type(v := {value}) is int and MIN <= v <= MAX "
                            f"else slow_{number}(v))")
                elif isinstance(fast, dict):  # an enum's stored values -> GraphQL names
                    namespace[f"names_{number}"] = fast
                    read = f"(names_{number}.get(v := {value}) or slow_{number}(v))"
                else:
                    read = f"slow_{number}({value})"
                items.append(f"{name!r}: {read}")
            return "{" + ", ".join(items) + "}"

        # Response names are GraphQL names and constants are passed in: nothing else is written.
        exec("def build(r):\n    return " + written(self.fields) + "\n", namespace)
        build: Callable[[Sequence[Any]], dict[str, Any]] = namespace["build"]
        return build


class NodePlanner:
    """Plans the nodes of one listing's page (its record read off the row, its view) for a
    document's fragments; `plain_json` stays True while every leaf met is a plain_leaf."""

    def __init__(self, schema: GraphQLSchema, fragments: dict[str, FragmentDetails],
                 record: RowRecord[Any], view: type[Any]) -> None:
        self.schema = schema
        self.fragments = fragments
        self.record = record
        self.view = view
        self.plain_json = True

    def fields(self, object_type: Any, nodes: tuple[FieldNode, ...]
                ) -> list[tuple[str, str, tuple[FieldNode, ...]]]:
        """(response name, field name, its nodes) of the selection; no arguments."""
        named = get_nullable_type(object_type)
        if not isinstance(named, GraphQLObjectType) or named.is_type_of is not None:
            raise _Unplanned
        grouped = selected_fields(self.schema, self.fragments, named, nodes)
        if grouped is None:
            raise _Unplanned
        found = []
        for response_name, field_nodes in grouped.items():
            if any(node.arguments for node in field_nodes):
                raise _Unplanned
            found.append((response_name, field_nodes[0].name.value, field_nodes))
        return found

    def node_rows(self, node_type: Any, nodes: tuple[FieldNode, ...]) -> NodeRows:
        node_object = _object_of(node_type, self.view)
        return NodeRows(self._node_fields(node_object, nodes, self.view,
                                          self.record.record_type, ()))

    def _entries(self, object_type: GraphQLObjectType, nodes: tuple[FieldNode, ...],
                 entry: Callable[[str, tuple[FieldNode, ...]], tuple[Any, ...]]
                 ) -> list[Entry]:
        """The entries of an object's selection: its __typename, and `entry(field name, its
        nodes)` of each other field."""
        entries: list[Entry] = []
        for response_name, name, field_nodes in self.fields(object_type, nodes):
            if name == "__typename":
                entries.append((response_name, None, _no_slow, object_type.name))
            else:
                entries.append((response_name, *entry(name, field_nodes)))
        return entries

    def _node_fields(self, node_object: GraphQLObjectType, nodes: tuple[FieldNode, ...],
                     view: type[Any], record_type: type[Any], at: tuple[str, ...]
                     ) -> list[Entry]:
        """The entries of a node's selection: `view`'s fields, read from the record (of
        `record_type`, nested in the row's record at `at`)."""
        return self._entries(node_object, nodes, lambda name, field_nodes: self._field(
            node_object, name, field_nodes, view, record_type, at))

    def _field(self, node_object: GraphQLObjectType, name: str, nodes: tuple[FieldNode, ...],
               view: type[Any], record_type: type[Any], at: tuple[str, ...]
               ) -> tuple[str | None, Callable[[Any], Any] | None, Any]:
        """(column, slow completion, fast kind) of a node's field read from one column, or
        (None, None, _Nested) of an object read from several: a record nested in the row's
        (a turn's surface) or a computed `FromValues` (a turn's verdicts)."""
        field_def, strawberry_field = _plain_field(node_object, name)
        python_name = strawberry_field.python_name
        computed = getattr(view, "_computed", {}).get(python_name)
        if isinstance(computed, FromValues):
            if not isinstance(field_def.type, GraphQLNonNull):
                raise _Unplanned
            made_object = _object_of(field_def.type, computed.make)
            return None, None, _Nested(tuple(self._entries(
                made_object, nodes, lambda inner, inner_nodes: self._made_field(
                    made_object, inner, inner_nodes, computed, at))))
        if computed is not None and not isinstance(computed, FromValue):
            raise _Unplanned
        try:
            path = at + (computed.path if computed is not None
                         else record_path(record_type, python_name, view))
            nested = None if computed is not None else self.record.nested_at(path)
            if nested is not None:
                inner_view = strawberry_field.type
                if (not isinstance(field_def.type, GraphQLNonNull)
                        or not isinstance(inner_view, type)
                        or not issubclass(inner_view, RecordView)):
                    raise _Unplanned  # a nullable one's null: the usual path's
                return None, None, _Nested(tuple(self._node_fields(
                    _object_of(field_def.type, inner_view), nodes, inner_view,
                    nested.record_type, path)))
            column, record_convert = self.record.column_of(path)
        except (TypeError, KeyError):
            raise _Unplanned from None
        # A computed field's value is its function's: the view converts nothing after it.
        to_view = (view_converter(strawberry_field.type) if computed is None
                   else _computing(computed.compute))
        return self._column_value(field_def, nodes, column, record_convert, to_view)

    def _made_field(self, made_object: GraphQLObjectType, name: str,
                    nodes: tuple[FieldNode, ...], computed: FromValues, at: tuple[str, ...]
                    ) -> tuple[str, Callable[[Any], Any], Any]:
        """A field of an object `computed` makes from values the record holds: read from its
        column, as the record converts it (the object is made of them as they are)."""
        field_def, strawberry_field = _plain_field(made_object, name)
        place = computed.paths.get(strawberry_field.python_name)
        if place is None:
            raise _Unplanned
        try:
            column, record_convert = self.record.column_of(at + place)
        except KeyError:
            raise _Unplanned from None
        return self._column_value(field_def, nodes, column, record_convert, None)

    def _column_value(self, field_def: Any, nodes: tuple[FieldNode, ...], column: str,
                      record_convert: Callable[[Any], Any] | None,
                      to_view: Callable[[Any, Any], Any] | None
                      ) -> tuple[str, Callable[[Any], Any], Any]:
        """(column, slow completion, fast kind) of a field whose value is its column's,
        converted by the record and the view, then completed: a leaf, or a list or an object
        completed by the compiled completion of its selection (`nodes`)."""
        leaf_type: Any = get_nullable_type(field_def.type)
        if is_leaf_type(leaf_type):
            complete = completion(self.schema, field_def.type)
            if not plain_leaf(leaf_type):
                self.plain_json = False
        else:
            compiled = selection_completion(self.schema, self.fragments, field_def.type, nodes)
            if compiled is None:
                raise _Unplanned
            complete, plain = compiled
            if not plain:
                self.plain_json = False

        def slow(value: Any) -> Any:
            try:
                if record_convert is not None:
                    value = record_convert(value)
                if to_view is not None:
                    value = to_view(value, None)  # a plain selection reads no as_of
                return complete(value)
            except Exception:
                raise _NotPrepared from None

        fast: Any = None
        if not is_leaf_type(leaf_type) or leaf_type is GraphQLBoolean:
            return column, slow, None
        if record_convert is None and to_view is None:
            fast = _UNCHANGED.get(leaf_type)
        elif isinstance(record_convert, type) and issubclass(record_convert, enum.Enum):
            try:
                fast = {member.value: slow(member.value) for member in record_convert}
            except _NotPrepared:
                raise _Unplanned from None
        return column, slow, fast


def _plain_field(object_type: GraphQLObjectType, name: str) -> tuple[Any, StrawberryField]:
    """The field `name` of `object_type` and its strawberry field, when it is read off its
    source as it is (no arguments, extensions nor resolver); _Unplanned otherwise."""
    field_def = object_type.fields.get(name)
    strawberry_field = None if field_def is None else (field_def.extensions or {}).get(
        GraphQLCoreConverter.DEFINITION_BACKREF)
    if (field_def is None or field_def.args or not isinstance(strawberry_field, StrawberryField)
            or strawberry_field.extensions or strawberry_field.base_resolver is not None
            or not getattr(field_def.resolve, "_is_default", False)):
        raise _Unplanned
    return field_def, strawberry_field


def _object_of(field_type: Any, view: Any) -> GraphQLObjectType:
    """The object type of a field whose values are `view`s (strawberry's type of that
    class); _Unplanned for another."""
    node_object = get_nullable_type(field_type)
    definition = getattr(node_object, "extensions", {}).get(
        GraphQLCoreConverter.DEFINITION_BACKREF)
    if getattr(definition, "origin", None) is not view:
        raise _Unplanned
    node: GraphQLObjectType = node_object
    return node


def _computing(compute: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda value, as_of: compute(value)


def _no_slow(value: Any) -> Any:
    raise _NotPrepared


