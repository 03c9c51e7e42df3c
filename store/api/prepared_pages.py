"""A listing's page answered from its rows alone, when the selection asks only for columns.

A Workbench list (`residuals(filter, first) { totalCount pageInfo { … } edges { cursor
node { residualId residualKind … } } }`) costs graphql-core and the views far more than its
SQL: per row a record, its view, an edge, then the completion of every field. When the
selection under a listing's connection is only `totalCount`, `pageInfo`, `edges` (`cursor`,
`node`, `snippet`), `nodes` and `__typename`, and every field of the node is a leaf read
from one column of the row (converted as the record and its view convert it), or computed
from that column's value alone (a view's `FromValue`, e.g. a turn's promptExcerpt), or a
list or object that one column holds (a JSON column's texts or records: a surface's
checkedAgainst, completed by the compiled completion of its selection), or an object of
several columns (a record joined to the row, a turn's surface, non-null; one a view's
`FromValues` makes of the record's values, a turn's verdicts) whose fields are such, the
connection's response value is built here straight from the rows: one dict per row, written
out once per column list (as row_records.py writes a record's builder), and the connection's
dict around them. The page is the one `RecordListing.list` cuts (same statements, cursors and
paging; a list paged by key, turns, from the rows it reads by key), its count the one
`RecordListing.count` gives, all in one read.

Each value is completed as graphql-core completes it: a column read as it is when it is
already of its field's type (a text for a String or ID, an int within 32 bits for an Int); an
enum column's stored values mapped to their GraphQL names, the map made by completing each
member once; any other value through the record's converter, the view's converter and
graphql-core's coercion of the leaf (compiled_completion.completion). A value graphql-core
would answer with an error (null where null is not allowed, a value that does not convert or
coerce), a count past 32 bits, a failed count: no value (None), and the resolver answers by
its usual path, so the answer or its error is the one graphql-core gives. Only the fields a
request selects are read: a column it does not ask for is not converted (its JSON is not
decoded), and a list read by key (turns) does not read it at all (`NodeRows.columns`).

PageExecutor (page_executor.py) makes the plans available to a request's resolvers
(`RequestContext.page_plans`) and returns a `PreparedValue` as it is; strawberry's own
executor never sees one.
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
    GraphQLResolveInfo,
    GraphQLSchema,
    GraphQLString,
    get_nullable_type,
    is_leaf_type,
)
from graphql.execution.collect_fields import FragmentDetails
from sqlalchemy import Connection
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.field import StrawberryField

from store.api.compiled_completion import (
    SelectionCache,
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
from store.db import queries
from store.db.queries.records import Page
from store.db.queries.row_records import RowRecord

_UNCHANGED: dict[Any, str] = {GraphQLString: "str", GraphQLID: "str", GraphQLInt: "int"}


class _NotPrepared(Exception):
    """A page the rows alone do not answer as graphql-core would: the resolver's usual path
    answers it."""


@dataclass(frozen=True, slots=True)
class PreparedValue:
    """A field's completed response value: PageExecutor returns it as it is."""
    value: dict[str, Any]


class _Unplanned(Exception):
    """A selection this module does not answer (the usual path always does)."""


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


@dataclass(frozen=True, slots=True)
class PagePlan:
    """How a connection's response value is built from a page of rows and its count."""
    rows: NodeRows
    counts: bool  # totalCount is selected
    shape: Callable[[Page[dict[str, Any]], int | None], dict[str, Any]]
    # Every value it builds is a text, an int, a bool or null: no leaf of a JSON or other
    # scalar that may complete to a float or a structure (the response's encoding reads it).
    plain_json: bool = False

    def read(self, connection: Connection, listing: queries.RecordListing[Any, Any], where: Any,
             first: int | None, after: str | None, last: int | None, before: str | None,
             order: queries.Order, as_of: int | None) -> PreparedValue | None:
        """The page and its count, in one read (a worker thread's transaction); None when
        the usual path must answer (what graphql-core would answer with an error)."""
        return self.read_with(
            lambda build: listing.list(connection, where, first, after, last=last,
                                       before=before, order=order, as_of=as_of, build=build),
            lambda: listing.count(connection, where, as_of=as_of))

    def read_with(self, page_of: Callable[[NodeRows], Page[Any]],
                  count: Callable[[], int]) -> PreparedValue | None:
        """The value of a page `page_of(row builder)` reads (a page of the listing, however
        cut) and of its `count` (called only when totalCount is selected), read by the
        caller's connection; None when the usual path must answer."""
        try:
            page = page_of(self.rows)
            total = None
            if self.counts:
                try:
                    total = count()
                except Exception:  # the usual path raises it at totalCount: let it
                    raise _NotPrepared from None
                if not GRAPHQL_MIN_INT <= total <= GRAPHQL_MAX_INT:
                    raise _NotPrepared
            return PreparedValue(self.shape(page, total))
        except _NotPrepared:
            return None


class PagePlans:
    """The page plans of one schema, by the field nodes of a (parser-cached) document."""

    def __init__(self, schema: GraphQLSchema) -> None:
        self.schema = schema
        self._cache: SelectionCache[PagePlan | None] = SelectionCache()

    def of(self, info: GraphQLResolveInfo[Any], fragments: dict[str, FragmentDetails],
           listing: queries.RecordListing[Any, Any], view: type[Any]) -> PagePlan | None:
        return self.of_field(info.return_type, tuple(info.field_nodes), fragments, listing,
                             view)

    def of_field(self, return_type: Any, nodes: tuple[FieldNode, ...],
                 fragments: dict[str, FragmentDetails],
                 listing: queries.RecordListing[Any, Any], view: type[Any]) -> PagePlan | None:
        """The plan of a list field of `return_type` selected by `nodes`, or None."""
        def make() -> PagePlan | None:
            try:
                return _Planner(self.schema, fragments, listing, view).connection(
                    return_type, nodes)
            except _Unplanned:
                return None

        return self._cache.made(return_type, nodes, make)


@dataclass(frozen=True, slots=True)
class PagePlanner:
    """A request's way to its schema's plans: the plans and the document's fragments."""
    plans: PagePlans
    fragments: dict[str, FragmentDetails]


class _Planner:
    def __init__(self, schema: GraphQLSchema, fragments: dict[str, FragmentDetails],
                 listing: queries.RecordListing[Any, Any], view: type[Any]) -> None:
        self.schema = schema
        self.fragments = fragments
        self.listing = listing
        self.view = view
        if not isinstance(listing.record, RowRecord):
            raise _Unplanned
        self.record: RowRecord[Any] = listing.record
        self.plain_json = True  # until a leaf of another type is met

    def _fields(self, object_type: Any, nodes: tuple[FieldNode, ...]
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

    def connection(self, return_type: Any, nodes: tuple[FieldNode, ...]) -> PagePlan:
        connection_type = get_nullable_type(return_type)
        parts: list[tuple[str, Callable[[Page[Any], int | None], Any]]] = []
        counts = False
        rows: NodeRows | None = None
        for response_name, name, field_nodes in self._fields(connection_type, nodes):
            if name == "__typename":
                parts.append((response_name, _constant(connection_type.name)))
            elif name == "totalCount":
                counts = True
                parts.append((response_name, lambda page, count: count))
            elif name == "pageInfo":
                parts.append((response_name, self._page_info(
                    connection_type.fields[name].type, field_nodes)))
            elif name in ("edges", "nodes"):
                item_type = get_nullable_type(connection_type.fields[name].type).of_type
                if name == "nodes":
                    rows = self._same(rows, self._node_rows(item_type, field_nodes))
                    parts.append((response_name, lambda page, count: list(page.items)))
                else:
                    edge, rows = self._edge(item_type, field_nodes, rows)
                    parts.append((response_name, edge))
            else:
                raise _Unplanned
        if rows is None:  # no node selected: nothing to build per row but the page
            rows = NodeRows([])

        def shape(page: Page[dict[str, Any]], count: int | None) -> dict[str, Any]:
            return {response_name: part(page, count) for response_name, part in parts}

        return PagePlan(rows, counts, shape, self.plain_json)

    def _same(self, rows: NodeRows | None, made: NodeRows) -> NodeRows:
        """A node selected twice (edges' node and nodes) must select the same fields."""
        if rows is not None and rows.signature != made.signature:
            raise _Unplanned
        return made if rows is None else rows

    def _page_info(self, field_type: Any, nodes: tuple[FieldNode, ...]
                   ) -> Callable[[Page[Any], int | None], Any]:
        page_info_type = get_nullable_type(field_type)
        reads = {"hasNextPage": lambda page: page.has_next_page,
                 "hasPreviousPage": lambda page: page.has_previous_page,
                 "startCursor": lambda page: page.start_cursor,
                 "endCursor": lambda page: page.end_cursor}
        entries = []
        for response_name, name, _ in self._fields(page_info_type, nodes):
            if name == "__typename":
                entries.append((response_name, _constant(page_info_type.name)))
            elif name in reads:
                entries.append((response_name, reads[name]))
            else:
                raise _Unplanned
        return lambda page, count: {key: read(page) for key, read in entries}

    def _edge(self, edge_type: Any, nodes: tuple[FieldNode, ...], rows: NodeRows | None
              ) -> tuple[Callable[[Page[Any], int | None], Any], NodeRows | None]:
        edge_object = get_nullable_type(edge_type)
        items = []
        for response_name, name, field_nodes in self._fields(edge_object, nodes):
            if name == "__typename":
                items.append(f"{response_name!r}: {edge_object.name!r}")
            elif name == "cursor":
                items.append(f"{response_name!r}: cursor")
            elif name == "snippet":  # null without a search (a search takes the usual path)
                items.append(f"{response_name!r}: None")
            elif name == "node":
                rows = self._same(rows, self._node_rows(edge_object.fields[name].type,
                                                        field_nodes))
                items.append(f"{response_name!r}: node")
            else:
                raise _Unplanned
        namespace: dict[str, Any] = {}
        # Response names are GraphQL names, type names GraphQL names: repr()'d, nothing else.
        exec("def edges(page, count):\n    return [{" + ", ".join(items) + "} for cursor, node"
             " in zip(page.cursors, page.items)]\n", namespace)
        edges: Callable[[Page[Any], int | None], Any] = namespace["edges"]
        return edges, rows

    def _node_rows(self, node_type: Any, nodes: tuple[FieldNode, ...]) -> NodeRows:
        node_object = _object_of(node_type, self.view)
        return NodeRows(self._node_fields(node_object, nodes, self.view,
                                          self.record.record_type, ()))

    def _node_fields(self, node_object: GraphQLObjectType, nodes: tuple[FieldNode, ...],
                     view: type[Any], record_type: type[Any], at: tuple[str, ...]
                     ) -> list[Entry]:
        """The entries of a node's selection: `view`'s fields, read from the record (of
        `record_type`, nested in the row's record at `at`)."""
        fields: list[Entry] = []
        for response_name, name, field_nodes in self._fields(node_object, nodes):
            if name == "__typename":
                fields.append((response_name, None, _no_slow, node_object.name))
                continue
            fields.append((response_name, *self._field(node_object, name, field_nodes, view,
                                                       record_type, at)))
        return fields

    def _field(self, node_object: GraphQLObjectType, name: str, nodes: tuple[FieldNode, ...],
               view: type[Any], record_type: type[Any], at: tuple[str, ...]
               ) -> tuple[str | None, Callable[[Any], Any] | None, Any]:
        """(column, slow completion, fast kind) of a node's field read from one column, or
        (None, None, _Nested) of an object read from several: a record nested in the row's
        (a turn's surface) or a computed `FromValues` (a turn's verdicts)."""
        field_def = node_object.fields.get(name)
        strawberry_field = None if field_def is None else (field_def.extensions or {}).get(
            GraphQLCoreConverter.DEFINITION_BACKREF)
        if (field_def is None or field_def.args
                or not isinstance(strawberry_field, StrawberryField) or strawberry_field.extensions
                or strawberry_field.base_resolver is not None
                or not getattr(field_def.resolve, "_is_default", False)):
            raise _Unplanned
        python_name = strawberry_field.python_name
        computed = getattr(view, "_computed", {}).get(python_name)
        if isinstance(computed, FromValues):
            return None, None, _Nested(tuple(self._made(field_def, nodes, computed, at)))
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

    def _made(self, field_def: Any, nodes: tuple[FieldNode, ...], computed: FromValues,
              at: tuple[str, ...]) -> list[Entry]:
        """The entries of an object `computed` makes from values the record holds: each read
        from its column, as the record converts it (the object is made of them as they are)."""
        made_object = get_nullable_type(field_def.type)
        definition = getattr(made_object, "extensions", {}).get(
            GraphQLCoreConverter.DEFINITION_BACKREF)
        if (not isinstance(field_def.type, GraphQLNonNull)
                or getattr(definition, "origin", None) is not computed.make):
            raise _Unplanned
        entries: list[Entry] = []
        for response_name, name, field_nodes in self._fields(made_object, nodes):
            if name == "__typename":
                entries.append((response_name, None, _no_slow, made_object.name))
                continue
            inner = made_object.fields.get(name)
            strawberry_field = None if inner is None else (inner.extensions or {}).get(
                GraphQLCoreConverter.DEFINITION_BACKREF)
            if (inner is None or inner.args or not isinstance(strawberry_field, StrawberryField)
                    or strawberry_field.base_resolver is not None
                    or not getattr(inner.resolve, "_is_default", False)):
                raise _Unplanned
            place = computed.paths.get(strawberry_field.python_name)
            if place is None:
                raise _Unplanned
            try:
                column, record_convert = self.record.column_of(at + place)
            except KeyError:
                raise _Unplanned from None
            entries.append((response_name, *self._column_value(
                inner, field_nodes, column, record_convert, None)))
        return entries

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


def _object_of(field_type: Any, view: type[Any]) -> GraphQLObjectType:
    """The object type of a field whose values are `view`s; _Unplanned for another."""
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


def _constant(value: Any) -> Callable[..., Any]:
    """A part of the response that is always `value` (a `__typename`)."""
    return lambda *_: value
