"""List pages: a filtered, ordered keyset page of one kind, its count and facets (each value a
link adding or removing that filter), order and page links, and its exports."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from graphql import GraphQLList, get_nullable_type
from sqlalchemy import Connection, inspect
from starlette.datastructures import QueryParams
from starlette.requests import Request

from store.console import kinds
from store.console.charts import histogram
from store.console.glossary import explain
from store.console.histograms import columns as histogram_columns
from store.console.histograms import core_time_histogram, ingest_histogram
from store.console.kinds import LIST_KINDS, ListKind, python_name
from store.console.page_json import Links
from store.console.parameters import (
    IS_NULL,
    PAGE_OPTIONS,
    ParameterError,
    batch_filter,
    filter_fields,
    filter_input,
    nullable_fields,
    page_options,
    parameter_value,
    query_string,
)
from store.db import queries
from store.db.queries import Order
from store.db.queries.errors import CursorError
from store.db.queries.search import Searched, searched, snippets
from store.db.schema.tables import metadata
from store.db.schema.text_search import index_of

if TYPE_CHECKING:
    from store.console.pages import Console, Head

__all__ = ["LIST_KINDS", "list_json", "list_reader", "parsed_filter"]

# Filter-changing links start the list over: a cursor belongs to one filter (and a facet
# shown in full goes back to every facet).
_PAGING = ("after", "before", "first", "last", "facet", "facetAfter")
# The values of a facet shown in full, a page.
FACET_PAGE = 100


def _params(query: QueryParams) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, value in query.multi_items():
        if value != "":
            found.setdefault(name, []).append(value)
    return found


def _href(base: str, kind: ListKind, params: dict[str, list[str]]) -> str:
    return f"{base}/{kind.name}{query_string(params)}"


def _without(params: dict[str, list[str]], *names: str) -> dict[str, list[str]]:
    return {k: v for k, v in params.items() if k not in names}


def _toggled(params: dict[str, list[str]], name: str, value: str, *, single: bool = False
             ) -> dict[str, list[str]]:
    """With `value` of `name` added, or removed if it was there (`single`: replacing)."""
    changed = _without(params, *_PAGING)
    values = list(changed.get(name, []))
    if value in values:
        values.remove(value)
    elif single:
        values = [value]
    else:
        values.append(value)
    if values:
        changed[name] = values
    else:
        changed.pop(name, None)
    return changed


def fields_type(kind: ListKind) -> Any:
    """The GraphQL filter input a kind's parameters are read through."""
    assert kind.input_class is not None, kind.name
    return filter_fields(kind.input_class)


def parsed_filter(kind: ListKind, query: QueryParams) -> Any:
    """The query filter the page's parameters make, its `search` included (None: no
    filter); ParameterError."""
    if kind.input_class is None:
        where = batch_filter(query, kind.lists)
    else:
        given = filter_input(query, kind.input_class)
        where = None if given is None else given.to_query()
    text = query.get("search") or None
    if text is None:
        return where
    records = metadata.tables[kind.table]
    if index_of(records) is None:
        raise ParameterError("search", f"{kind.title.lower()} carry no text to search")
    return searched(where, text, records)


def _searched_orders(kind: ListKind, searching: bool) -> list[Order]:
    """RANK only while searching: it orders a search's matches."""
    return [o for o in kind.orders if searching or o is not Order.RANK]


def list_reader(name: str) -> Callable[[Connection, Request, Head, Console], dict[str, Any]]:
    kind = LIST_KINDS[name]

    def read(connection: Connection, request: Request, head: Head,
             console: Console) -> dict[str, Any]:
        query = request.query_params
        where = parsed_filter(kind, query)
        search = where.search if isinstance(where, Searched) else None
        orders = _searched_orders(kind, search is not None)
        options = page_options(query, orders)
        page = kind.page(connection, where, options.first, options.after, last=options.last,
                         before=options.before, order=options.order, as_of=options.as_of)
        total = kind.count(connection, where, options.as_of)
        base = request.scope.get("root_path", "")
        params = _params(query)
        fields = {} if kind.input_class is None else filter_fields(kind.input_class).fields

        def without(name: str) -> Any:
            """The filter without `name`'s own values (its null included)."""
            return parsed_filter(kind, QueryParams([
                (k, v) for k, v in query.multi_items()
                if k != name and not (k == IS_NULL and v == name)]))

        def facets(connection: Connection) -> list[dict[str, Any]]:
            shown_in_full = _single(query, "facet")
            if shown_in_full is not None:
                return [_facet_in_full(connection, base, kind, params, fields, shown_in_full,
                                       without(shown_in_full), options.as_of,
                                       _single(query, "facetAfter"))]
            found = kind.facets(connection, where, options.as_of)
            counted, value_counts = found.fields, dict(found.value_counts)
            constrained = set(params) | set(params.get(IS_NULL, []))
            for name in counted.keys() & constrained:
                # A field's own values counted without its own filter: one can be added.
                again = kind.facets(connection, without(name), options.as_of)
                counted[name] = again.fields[name]
                value_counts[name] = again.value_count(name)
            return _facets(base, kind, params, counted, fields,
                           {name: value_counts.get(name, len(values))
                            for name, values in counted.items()})

        deferred = kind.facet_seconds is not None
        context: dict[str, Any] = {
            "facets": None if deferred else facets(connection),
            "deferred": {"facets": (facets, kind.facet_seconds,
                                    partial(_slow_facets, kind=kind, params=params, head=head))}
            if deferred else {},
            "facet_names": ", ".join(kind.facet_index) or "every facet",
            "grouped": f"{base}/{kind.name}/groups"
                       f"{query_string(_without(params, *_PAGING, 'order'))}"
            if kind.name in HISTOGRAMS else None,
            "title": kind.title, "kind": kind, "total": total,
            "rows": [[_cell(column.cell(record)) for column in kind.columns]
                     for record in page.items],
            # With a search: per row, its text around the words found, marked « » (the
            # template escapes it, then makes the marks <mark>).
            "search": query.get("search") or "",
            "searchable": index_of(metadata.tables[kind.table]) is not None,
            "kept": [(n, v) for n, values in _without(params, *_PAGING, "search").items()
                     for v in values],
            "snippets": None if search is None else list(snippets(
                connection, metadata.tables[kind.table], search,
                [record.seq for record in page.items]).values()),
            "active": [{"param": v if n == IS_NULL else n, "value": "(none)" if n == IS_NULL
                        else v, "href": _href(base, kind, _toggled(params, n, v))}
                       for n, values in params.items() if n not in PAGE_OPTIONS
                       for v in values],
            "orders": [(order.name.lower().replace("_", " "),
                        _href(base, kind, {**_without(params, *_PAGING),
                                           "order": [order.name]}),
                        order is options.order) for order in orders
                       if order.column is None],
            "headings": [_heading(base, kind, params, column, options.order)
                         for column in kind.columns],
            "previous": _href(base, kind, {**_without(params, *_PAGING),
                                           "before": [page.start_cursor or ""],
                                           "last": [str(options.first or options.last or 50)]})
            if page.has_previous_page and page.start_cursor else None,
            "next": _href(base, kind, {**_without(params, *_PAGING),
                                       "after": [page.end_cursor or ""],
                                       "first": [str(options.first or options.last or 50)]})
            if page.has_next_page and page.end_cursor else None,
            "exports": [] if kind.export is None else [
                (label, f"{base}/export/{kind.name}.{fmt}"
                        f"{query_string(_without(params, *_PAGING, 'order'))}")
                for label, fmt in (("CSV", "csv"), ("JSONL", "jsonl"))],
        }
        # The histogram over time above the list: under a limit of its own, as facets are.
        if name in HISTOGRAMS:
            context["deferred"]["histogram"] = (
                partial(_histogram, kind=kind, where=where, as_of=options.as_of, base=base,
                        params=params),
                HISTOGRAM_SECONDS, partial(_slow_histogram, kind=kind))
        return context

    return read


HISTOGRAMS = ("residuals", "surfaces", "turns")
HISTOGRAM_SECONDS = 0.5


def _histogram(connection: Connection, *, kind: ListKind, where: Any, as_of: int | None,
               base: str, params: dict[str, list[str]]) -> dict[str, Any]:
    if kind.name == "turns":
        found = core_time_histogram(connection, where, as_of, kind.title)
    else:
        found = ingest_histogram(connection, kind.name, where, as_of, kind.title)

    def href(bounds: dict[str, list[str]]) -> str:
        return _href(base, kind, {**_without(params, *_PAGING), **bounds})

    bars = histogram_columns(found, params, href)
    return {"histogram": found, "bars": bars,
            "chart": histogram(found.title.lower(), bars, f"no {kind.title.lower()} match")}


def _slow_histogram(connection: Connection, *, kind: ListKind) -> str:
    return (f"counting every matching {kind.title.lower()[:-1]} per bucket of time; narrow "
            "the filter (a batch or time range)")


def _slow_facets(connection: Connection, *, kind: ListKind, params: dict[str, list[str]],
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


def _single(query: QueryParams, name: str) -> str | None:
    values = [v for v in query.getlist(name) if v != ""]
    if len(values) > 1:
        raise ParameterError(name, f"give it once, got {len(values)} values")
    return values[0] if values else None


def _heading(base: str, kind: ListKind, params: dict[str, list[str]], column: Any,
             current: Order) -> dict[str, Any]:
    """A column's heading: a link sorting the list by it (again: the other way), and which
    way it is sorted now (aria-sort), if by it."""
    orders = [order for order in column.orders if order in kind.orders]
    if not orders:
        return {"text": column.heading, "href": None, "sort": None}
    sorted_now = current in orders
    following = orders[(orders.index(current) + 1) % len(orders)] if sorted_now else orders[0]
    direction = None
    if sorted_now:
        direction = "descending" if current.descending or current in (
            Order.NEWEST_FIRST, Order.MOST_SEEN) else "ascending"
    return {"text": column.heading, "sort": direction,
            "href": _href(base, kind, {**_without(params, *_PAGING),
                                       "order": [following.name]})}


def _facet_in_full(connection: Connection, base: str, kind: ListKind,
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
    shown = _facets(base, kind, params, {name: values}, fields, {name: value_count},
                    limit=FACET_PAGE)[0]
    shown["all"] = True
    shown["back"] = _href(base, kind, _without(params, "facet", "facetAfter"))
    shown["next"] = None if cursor is None else _href(
        base, kind, {**_without(params, "facetAfter"), "facetAfter": [cursor]})
    return shown


def _cell(cell: Any) -> dict[str, Any]:
    return {"text": cell.text, "href": cell.href, "mono": cell.mono,
            "value": cell.text if cell.value is None and cell.text != "—" else cell.value,
            "title": None if cell.field is None else explain(cell.field, cell.text)}


def list_json(context: dict[str, Any], links: Links) -> dict[str, Any]:
    """A list page as JSON: what it shows, each row a record by its column headings (whole
    values where the page shortens them; `<heading>_href` where a cell links)."""
    kind: ListKind = context["kind"]
    headings = [column.heading for column in kind.columns]
    rows = []
    snippets = context.get("snippets")
    for index, row in enumerate(context["rows"]):
        shaped: dict[str, Any] = {}
        for heading, cell in zip(headings, row, strict=True):
            shaped[heading] = cell["value"]
            if cell["href"]:
                shaped[f"{heading}_href"] = links.at(cell["href"])
        if snippets is not None:  # with a search: the words found, between « and »
            shaped["found"] = snippets[index]
        rows.append(shaped)
    return {
        "search": context.get("search") or None,
        "kind": kind.name, "title": kind.title, "total": context["total"],
        "columns": headings, "rows": rows,
        "filters": [{"param": f["param"], "value": f["value"], "remove": f["href"]}
                    for f in context["active"]],
        "facets": context["facets"],
        "facetsOmitted": context["omitted"].get("facets"),
        "orders": [{"order": label, "href": href, "current": current}
                   for label, href, current in context["orders"]],
        "sortBy": [{"column": h["text"], "href": h["href"], "sorted": h["sort"]}
                   for h in context["headings"] if h["href"]],
        "previous": context["previous"], "next": context["next"],
        "exports": [{"format": label, "href": href} for label, href in context["exports"]],
        "histogram": _histogram_json(context.get("histogram")),
        "histogramOmitted": context["omitted"].get("histogram"),
    }


def _histogram_json(found: dict[str, Any] | None) -> dict[str, Any] | None:
    if found is None:
        return None
    shown = found["histogram"]
    return {"title": shown.title, "time": shown.time, "bucket": shown.bucket,
            "untimed": shown.untimed, "from": shown.bounds[0], "to": shown.bounds[1],
            "bars": [{"label": b.label, "from": b.start, "to": b.end, "count": b.count,
                      "href": bar.href}
                     for b, bar in zip(shown.buckets, found["bars"], strict=True)]}


def _facets(base: str, kind: ListKind, params: dict[str, list[str]],
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
