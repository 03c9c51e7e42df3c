"""A listing's page answered from its rows alone, when the selection asks only for columns.

A Workbench list (`residuals(filter, first) { totalCount pageInfo { … } edges { cursor
node { residualId residualKind … } } }`) costs graphql-core and the views far more than its
SQL: per row a record, its view, an edge, then the completion of every field. When the
selection under a listing's connection is only `totalCount`, `pageInfo`, `edges` (`cursor`,
`node`, `snippet`), `nodes` and `__typename`, and every field of the node is one its row
answers (node_rows.py: a leaf read from one column, converted as the record and its view
convert it, or computed from that column's value alone, a view's `FromValue` such as a
turn's promptExcerpt; a list or an object one column holds; an object of several columns,
a turn's surface or verdicts), the connection's response value is built here straight
from the rows: one dict per row, written out once per column list (as row_records.py writes a
record's builder), and the connection's dict around them. The page is the one
`RecordListing.list` cuts (same statements, cursors and paging; a list paged by key, turns,
from the rows it reads by key), its count the one `RecordListing.count` gives, all in one
read.

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import (
    GRAPHQL_MAX_INT,
    GRAPHQL_MIN_INT,
    FieldNode,
    GraphQLResolveInfo,
    GraphQLSchema,
    get_nullable_type,
)
from graphql.execution.collect_fields import FragmentDetails
from sqlalchemy import Connection

from store.api.compiled_completion import SelectionCache
from store.api.node_rows import NodePlanner, NodeRows, _NotPrepared, _Unplanned
from store.db import queries
from store.db.queries.records import Page
from store.db.queries.row_records import RowRecord


@dataclass(frozen=True, slots=True)
class PreparedValue:
    """A field's completed response value: PageExecutor returns it as it is."""
    value: dict[str, Any]


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
        if not isinstance(listing.record, RowRecord):
            raise _Unplanned
        self.nodes = NodePlanner(schema, fragments, listing.record, view)

    def connection(self, return_type: Any, nodes: tuple[FieldNode, ...]) -> PagePlan:
        connection_type = get_nullable_type(return_type)
        parts: list[tuple[str, Callable[[Page[Any], int | None], Any]]] = []
        counts = False
        rows: NodeRows | None = None
        for response_name, name, field_nodes in self.nodes.fields(connection_type, nodes):
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
                    rows = self._same(rows, self.nodes.node_rows(item_type, field_nodes))
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

        return PagePlan(rows, counts, shape, self.nodes.plain_json)

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
        for response_name, name, _ in self.nodes.fields(page_info_type, nodes):
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
        for response_name, name, field_nodes in self.nodes.fields(edge_object, nodes):
            if name == "__typename":
                items.append(f"{response_name!r}: {edge_object.name!r}")
            elif name == "cursor":
                items.append(f"{response_name!r}: cursor")
            elif name == "snippet":  # null without a search (a search takes the usual path)
                items.append(f"{response_name!r}: None")
            elif name == "node":
                rows = self._same(rows, self.nodes.node_rows(edge_object.fields[name].type,
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

def _constant(value: Any) -> Callable[..., Any]:
    """A part of the response that is always `value` (a `__typename`)."""
    return lambda *_: value
