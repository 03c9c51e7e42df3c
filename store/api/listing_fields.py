"""The Query fields of every record listing, made from its declaration (`queries.LISTINGS`).

Per listing, in its order: `<one>(id, asOf)` (one record by key, if it names `one`), the list
`<name>(filter, first, after, last, before, order, asOf)` as a Connection with a totalCount
counted in SQL only when asked for, and `<one>Facets(filter, asOf)` (if it declares facets).
Each resolver is one call of the listing's query in a worker thread (`RequestContext.run`),
its records turned into their views by name (`RecordView.of`).
"""

# No `from __future__ import annotations`: the resolvers' annotations are the generated
# types themselves, read by strawberry from the functions.

import dataclasses
import functools
import inspect
import operator
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any

import strawberry
from strawberry.types import Info
from strawberry.types.field import StrawberryField
from strawberry.types.nodes import SelectedField

from store.api.context import RequestContext
from store.api.filter_types import filter_input
from store.api.group_types import Groups, dimension_enum
from store.api.log_types import inclusion_field
from store.api.record_views import RecordView
from store.api.surface_types import Surface, SurfaceFacets
from store.api.thread_reads import read_in_thread
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
    connection,
)
from store.db import queries
from store.db.queries import groups as group_queries
from store.db.queries import search as search_queries
from store.db.schema.text_search import index_of

Ctx = Info[RequestContext, None]
Last = Annotated[int | None, strawberry.argument(description=LAST_HELP)]
OLDEST_FIRST = queries.Order.OLDEST_FIRST
PAGE_HELP = f"Page size, default {queries.DEFAULT_PAGE_SIZE}, at most {queries.MAX_PAGE_SIZE}."
SEARCH_HELP = ("Full-text search of the records' text (docs/graphql.md#searching-text): words, "
               "\"phrases\", prefix*, AND (or a space), OR, NOT between two terms, "
               "parentheses; ANDed with the filter. Each edge's snippet marks the words found "
               "between « and ».")
Search = Annotated[str | None, strawberry.argument(description=SEARCH_HELP)]

# The views written out (with their descriptions and nested fields), by GraphQL name.
_WRITTEN: tuple[type[Any], ...] = (Residual, ResidualFacets, Surface, SurfaceFacets, Turn,
                                   TurnFacets, Assessment, Batch)
VIEWS: dict[str, type[Any]] = {view.__strawberry_definition__.name: view for view in _WRITTEN}


def view_of(name: str) -> type[Any]:
    """The view named `name` (a listing's api_type or facets_type)."""
    try:
        return VIEWS[name]
    except KeyError:
        raise TypeError(f"no GraphQL view named {name!r}") from None


def record_view(listing: queries.RecordListing[Any, Any]) -> type[Any]:
    """The view of a listing's records: written out in VIEWS, or derived from its record."""
    return VIEWS.get(listing.api_type) or derived_view(listing)


def _graphql_type(python_type: Any) -> Any:
    """A record field's type as a view field: a tuple of values as a list."""
    if typing.get_origin(python_type) in (types.UnionType, typing.Union):
        return functools.reduce(operator.or_, map(_graphql_type, typing.get_args(python_type)))
    if typing.get_origin(python_type) is tuple:
        return list[typing.get_args(python_type)[0]]  # type: ignore[misc]
    return python_type


@functools.cache
def derived_view(listing: queries.RecordListing[Any, Any]) -> type[Any]:
    """A view with a field per field of the listing's record (its key an ID), and the
    record's inclusion proof: a new kind's GraphQL type, when none is written out."""
    record_type = listing.record_type
    hints = typing.get_type_hints(record_type)
    annotations: dict[str, Any] = {
        field.name: strawberry.ID if field.name == listing.key else _graphql_type(
            hints[field.name]) for field in dataclasses.fields(record_type)}
    annotations["as_of"] = strawberry.Private[int | None]  # type: ignore[misc]
    namespace = {"__annotations__": annotations, "__module__": __name__,
                 "inclusion_proof": inclusion_field(listing.table.name, listing.key)}
    made: type[Any] = strawberry.type(
        type(listing.api_type, (RecordView,), namespace),
        description=f"One of {listing.name}, as stored.")
    return made


def _one_field(listing: queries.RecordListing[Any, Any], view: type[Any]) -> StrawberryField:
    def read_one(connection: Any, source: Any, id: str, as_of: int | None = None) -> Any:
        stored = listing.get(connection, str(id), as_of=as_of)
        return None if stored is None else view.of(stored, as_of)

    @read_in_thread(read_one)  # a record and its sightings: one read (prepared_operations.py)
    async def one(self: Any, info: Ctx, id: strawberry.ID, as_of: AsOf = None
                  ) -> view | None:  # type: ignore[valid-type]
        return await info.context.run_quick(  # type: ignore[no-any-return]  # a view or None
            read_one, self, id, as_of=as_of)

    return strawberry.field(one, description=listing.one_help)


@dataclasses.dataclass(frozen=True)
class ListedPage:
    """A listing's list field: its listing and view, and what its arguments (converted by
    strawberry, as the resolver receives them) ask the listing for. The resolver and the
    documents answered without graphql-core's execution (prepared_operations.py) read their
    arguments here alike, with the same defaults."""
    listing: queries.RecordListing[Any, Any]
    view: type[Any]

    def reading(self, filter: Any = None, first: int | None = None, after: str | None = None,
                last: int | None = None, before: str | None = None,
                order: queries.Order = OLDEST_FIRST, as_of: int | None = None,
                search: str | None = None) -> tuple[Any, ...]:
        """(where, first, after, last, before, order, as_of): `RecordListing.list`'s own."""
        where = search_queries.searched(filter.to_query() if filter else None, search,
                                        self.listing.table)
        return where, first, after, last, before, order, as_of


def _list_field(listing: queries.RecordListing[Any, Any], view: type[Any]) -> StrawberryField:
    listed = ListedPage(listing, view)

    async def many(self: Any, info: Ctx, filter: Any = None, first: int | None = None,
                   after: str | None = None, last: Last = None, before: str | None = None,
                   order: OrderEnum = OLDEST_FIRST, as_of: AsOf = None, search: Search = None
                   ) -> Connection[view]:  # type: ignore[valid-type]
        reading = listed.reading(filter, first, after, last, before, order, as_of, search)
        where = reading[0]
        plan = None if search is not None else info.context.page_plan(info, listing, view)
        if plan is not None:  # the selection asks for columns only: built from the rows
            built: Any = await info.context.run_quick(plan.read, listing, *reading)
            if built is not None:  # else answered the usual way, as graphql-core answers it
                return built  # type: ignore[no-any-return]  # a PreparedValue, answered as it is
        page, marked = await info.context.reader_for(search)(_listed, listing, *reading)
        count = functools.partial(info.context.run, listing.count, where, as_of=as_of)
        found = connection(page, lambda record: view.of(record, as_of), count)
        if marked is not None:
            for edge, item in zip(found.edges, page.items, strict=True):
                edge.snippet = marked.get(item.seq)
        return found

    _filter_argument(many, listing)
    _search_argument(many, listing)
    many.listed_page = listed  # type: ignore[attr-defined]  # found by prepared_operations.py
    return strawberry.field(many, description=f"{listing.list_help} {PAGE_HELP}")


def _listed(connection: Any, listing: queries.RecordListing[Any, Any], where: Any,
            first: int | None, after: str | None, last: int | None, before: str | None,
            order: queries.Order, as_of: int | None) -> tuple[Any, Any]:
    """A page of `listing` and, with a search, each record's snippet by seq: one read (one
    worker thread, one transaction), not two."""
    page = listing.list(connection, where, first, after, last=last, before=before,
                        order=order, as_of=as_of)
    if not isinstance(where, search_queries.Searched):
        return page, None
    return page, search_queries.snippets(connection, listing.table, where.search,
                                         [item.seq for item in page.items])


def _filter_argument(resolver: Callable[..., Any],
                     listing: queries.RecordListing[Any, Any]) -> None:
    """`resolver`'s filter argument is the listing's filter input; none without a filter."""
    if listing.filter_type is not None:
        made = filter_input(listing.filter_type, listing.filter_help)  # type: ignore[arg-type]
        resolver.__annotations__["filter"] = made | None
        return
    signature = inspect.signature(resolver)
    resolver.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p for p in signature.parameters.values() if p.name != "filter"])


def _search_argument(resolver: Callable[..., Any],
                     listing: queries.RecordListing[Any, Any]) -> None:
    """`resolver` takes `search` only if the listing's records carry text (a text index)."""
    if index_of(listing.table) is not None:
        return
    signature = inspect.signature(resolver)
    resolver.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p for p in signature.parameters.values() if p.name != "search"])


def _facets_field(listing: queries.RecordListing[Any, Any], view: type[Any]) -> StrawberryField:
    # The facets query is looked up by its public name when called, so it can be replaced
    # as a whole (a test replaces one with a runaway statement).
    name = f"{listing.one}_facets"

    def read_facets(connection: Any, source: Any, filter: Any = None, as_of: int | None = None,
                    search: str | None = None, *, counted: bool = True) -> Any:
        where = search_queries.searched(filter.to_query() if filter else None, search,
                                        listing.table)
        if counted:
            query = getattr(queries, name, listing.facet_counts)
            found = query(connection, where, as_of)
        else:  # each `facet` page reads its own: the lists are not counted
            if as_of is not None:  # ... but a bad asOf is refused as every read refuses it
                queries.snapshot_at(connection, as_of)
            found = _uncounted(view)
        built = view.of(found)
        built.facet_reader = (where, as_of)  # its `facet` pages
        return built

    # The lists counted in the read's thread (prepared_operations.py): a selection of `facet`
    # pages has its own readers, and takes the usual path.
    @read_in_thread(read_facets)
    async def facets(self: Any, info: Ctx, filter: Any = None, as_of: AsOf = None,
                     search: Search = None) -> view:  # type: ignore[valid-type]
        return await info.context.run(
            read_facets, self, filter, as_of, search, counted=not _pages_only(info))

    _filter_argument(facets, listing)
    _search_argument(facets, listing)
    return strawberry.field(facets, description=listing.facets_help)


def _pages_only(info: Ctx) -> bool:
    """Whether a facets field selects only `facet` pages (and __typename)."""
    return all(isinstance(selection, SelectedField)
               and selection.name in ("facet", "__typename")
               for field in info.selected_fields for selection in field.selections)


@functools.cache
def _uncounted_record(record_type: type[Any]) -> Any:
    return record_type(**{f.name: 0 if f.type in (int, "int") else []
                          for f in dataclasses.fields(record_type)})


def _uncounted(view: type[Any]) -> Any:
    """An empty record of a facets view's type (the query record of the same name): none of
    it is read."""
    return _uncounted_record(getattr(queries, view.__strawberry_definition__.name))


def _groups_field(listing: queries.RecordListing[Any, Any],
                  grouping: group_queries.Grouping) -> StrawberryField:
    dimension = dimension_enum(listing.api_type, grouping)

    async def groups(self: Any, info: Ctx, by: list[dimension],  # type: ignore[valid-type]
                     filter: Any = None, first: int | None = None, as_of: AsOf = None,
                     search: Search = None) -> Groups:
        where = search_queries.searched(filter.to_query() if filter else None, search,
                                        listing.table)
        names = [str(member.value) for member in by]  # type: ignore[attr-defined]
        return Groups.of(await info.context.run(grouping.groups, names, where, first, as_of))

    _filter_argument(groups, listing)
    _search_argument(groups, listing)
    names = ", ".join(d.name for d in grouping.dimensions)
    return strawberry.field(groups, description=(
        f"{listing.name.capitalize()} counted per combination of 1 to "
        f"{group_queries.MAX_DIMENSIONS} dimensions of `by` ({names}), filtered, largest "
        f"first; `first` groups (default {group_queries.DEFAULT_GROUPS}, at most "
        f"{group_queries.MAX_GROUPS})."))


def listing_fields(listings: tuple[queries.RecordListing[Any, Any], ...]
                   ) -> dict[str, StrawberryField]:
    """The Query fields of `listings`, by Python name, in their order."""
    fields: dict[str, StrawberryField] = {}
    for listing in listings:
        view = record_view(listing)
        if listing.one is not None:
            fields[listing.one] = _one_field(listing, view)
        fields[listing.name] = _list_field(listing, view)
        if listing.facets is not None:
            fields[f"{listing.one}_facets"] = _facets_field(listing,
                                                            view_of(listing.facets_type))
        grouping = group_queries.GROUPINGS.get(listing.name)
        if grouping is not None:
            fields[f"{listing.one}_groups"] = _groups_field(listing, grouping)
    return fields
