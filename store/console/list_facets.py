"""A list page's facets: each facet's values with their counts, each a link adding or
removing that filter; one facet shown in full, a page of values at a time; and why the facets
were left out when counting them took too long."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphql import GraphQLList, get_nullable_type
from sqlalchemy import Connection, inspect

from store.console import kinds
from store.console.glossary import explain
from store.console.kinds import ListKind, python_name
from store.console.list_links import PAGING as _PAGING
from store.console.list_links import list_href as _href
from store.console.list_links import toggled as _toggled
from store.console.list_links import without as _without
from store.console.parameters import (
    IS_NULL,
    PAGE_OPTIONS,
    ParameterError,
    filter_fields,
    nullable_fields,
    parameter_value,
)
from store.db import queries
from store.db.queries.errors import CursorError

if TYPE_CHECKING:
    from store.console.pages import Head

# The values of a facet shown in full, a page.
FACET_PAGE = 100


def fields_type(kind: ListKind) -> Any:
    """The GraphQL filter input a kind's parameters are read through."""
    assert kind.input_class is not None, kind.name
    return filter_fields(kind.input_class)


def slow_facets(connection: Connection, *, kind: ListKind, params: dict[str, list[str]],
                head: Head) -> str:
    """Why this list's facets may take long (said if they are left out)."""
    if not kind.facet_index:  # no index counts them: every matching row is read
        return (f"every matching {kind.title.lower()[:-1]} is counted (about 2 s of CPU a "
                f"million {kind.title.lower()}): narrow the filter, e.g. to a batch range or "
                "a journal")
    others = [name for name in params if name not in PAGE_OPTIONS
              and name not in kind.facet_index]
    if others:
        return (f"the filter on {', '.join(others)} reads every matching row; "
                f"{', '.join(kind.facet_index)} alone are counted from an index")
    if head.as_of is not None and head.as_of < head.newest_size:
        return ("as of an older tree head, the rows appended since are counted off one by "
                "one")
    indexed = any(tuple(index["column_names"]) == kind.facet_index_columns
                  for index in inspect(connection).get_indexes(kind.table))
    if not indexed:
        return (f"this store has no index on {kind.table} ({', '.join(kind.facet_index_columns)})"
                " yet, so every row is read: `core-audit db upgrade` adds it")
    return "the server is busy: try again"


def facet_in_full(connection: Connection, base: str, kind: ListKind,
                  params: dict[str, list[str]], fields: dict[str, Any], name: str, where: Any,
                  as_of: int | None, after: str | None) -> dict[str, Any]:
    """One facet with every value, a page of FACET_PAGE at a time (from the facet cursor
    `after`), counted without its own filter."""
    listing = queries.LISTINGS.get(kind.name)
    field = python_name(name)
    if listing is None or listing.combos is None or field not in listing.facet_fields:
        counted = kind.facets(connection, where, as_of).fields
        if name not in counted:
            raise ParameterError("facet", f"{name[:80]!r} is not a facet of this page; one of "
                                 + ", ".join(counted))
        values, value_count, cursor = counted[name], len(counted[name]), None
    else:
        try:
            page = listing.facet_page(connection, field, where, FACET_PAGE, after, as_of)
        except CursorError:  # named as this page names the facet's cursor
            raise ParameterError("facetAfter", "malformed facet cursor (use the link's)"
                                 ) from None
        values, value_count, cursor = page.values, page.value_count, page.end_cursor
    shown = shown_facets(base, kind, params, {name: values}, fields, {name: value_count},
                         limit=FACET_PAGE)[0]
    shown["all"] = True
    shown["back"] = _href(base, kind, _without(params, "facet", "facetAfter"))
    shown["next"] = None if cursor is None else _href(
        base, kind, {**_without(params, "facetAfter"), "facetAfter": [cursor]})
    return shown


def shown_facets(base: str, kind: ListKind, params: dict[str, list[str]],
                 counted: dict[str, list[Any]], fields: dict[str, Any],
                 value_counts: dict[str, int], *, limit: int | None = None) -> list[dict[str, Any]]:
    """Each facet's first `limit` values, each a link adding or removing its filter (a null
    one: `isNull`, where the field can be null), and "show all" when it has more."""
    limit = kinds.FACET_ROWS if limit is None else limit
    facets = []
    nullable = set(nullable_fields(fields_type(kind))) if fields else set()
    for name, values in counted.items():
        shown = []
        listed = name not in fields or isinstance(get_nullable_type(fields[name].type),
                                                  GraphQLList)
        for facet in values[:limit]:
            if facet.value is None:
                shown.append({
                    "text": "(none)", "count": facet.count, "none": True,
                    "selected": name in params.get(IS_NULL, []),
                    "href": _href(base, kind, _toggled(params, IS_NULL, name))
                    if name in nullable else None})
                continue
            value = (parameter_value(fields[name].type, facet.value) if name in fields
                     else str(facet.value))
            shown.append({
                "text": value if len(value) <= _WIDE else value[:_WIDE - 1] + "…",
                "count": facet.count, "selected": value in params.get(name, []),
                "href": _href(base, kind, _toggled(params, name, value, single=not listed)),
                "explanation": explain(name, facet.value) or (
                    value if len(value) > _WIDE else None)})
        count = value_counts.get(name, len(values))
        facets.append({
            "param": name, "values": shown, "value_count": count,
            "show_all": _href(base, kind, {**_without(params, *_PAGING), "facet": [name]})
            if count > len(shown) else None})
    return facets


_WIDE = 40  # a facet value longer than this (a journal's id) is cut, whole in its title
