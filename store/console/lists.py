"""List pages: a filtered, ordered keyset page of one kind, its count and facets (each value a
link adding or removing that filter), order and page links, and its exports."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from starlette.datastructures import QueryParams
from starlette.requests import Request

from store.console.charts import histogram
from store.console.glossary import explain
from store.console.histograms import columns as histogram_columns
from store.console.histograms import core_time_histogram, ingest_histogram
from store.console.kinds import LIST_KINDS, ListKind
from store.console.list_facets import facet_in_full, shown_facets, slow_facets
from store.console.list_links import PAGING as _PAGING
from store.console.list_links import list_href as _href
from store.console.list_links import toggled as _toggled
from store.console.list_links import without as _without
from store.console.page_json import Links
from store.console.parameters import (
    IS_NULL,
    PAGE_OPTIONS,
    ParameterError,
    batch_filter,
    filter_fields,
    filter_input,
    page_options,
    query_string,
)
from store.db.queries import Order
from store.db.queries.search import Searched, searched, snippets
from store.db.schema.tables import metadata
from store.db.schema.text_search import index_of

if TYPE_CHECKING:
    from store.console.pages import Console, Head

__all__ = ["LIST_KINDS", "list_json", "list_reader", "parsed_filter"]


def _params(query: QueryParams) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, value in query.multi_items():
        if value != "":
            found.setdefault(name, []).append(value)
    return found


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
                return [facet_in_full(connection, base, kind, params, fields, shown_in_full,
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
            return shown_facets(base, kind, params, counted, fields,
                                {name: value_counts.get(name, len(values))
                                 for name, values in counted.items()})

        deferred = kind.facet_seconds is not None
        context: dict[str, Any] = {
            "facets": None if deferred else facets(connection),
            "deferred": {"facets": (facets, kind.facet_seconds,
                                    partial(slow_facets, kind=kind, params=params, head=head))}
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
