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

from store.console.charts import histogram
from store.console.glossary import explain
from store.console.histograms import columns as histogram_columns
from store.console.histograms import core_time_histogram, ingest_histogram
from store.console.kinds import LIST_KINDS, ListKind
from store.console.page_json import Links
from store.console.parameters import (
    PAGE_OPTIONS,
    batch_filter,
    filter_fields,
    filter_input,
    page_options,
    parameter_value,
    query_string,
)

if TYPE_CHECKING:
    from store.console.pages import Console, Head

__all__ = ["LIST_KINDS", "list_json", "list_reader", "parsed_filter"]

# Filter-changing links start the list over: a cursor belongs to one filter.
_PAGING = ("after", "before", "first", "last")


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


def parsed_filter(kind: ListKind, query: QueryParams) -> Any:
    """The query filter the page's parameters make (None: no filter); ParameterError."""
    if kind.input_class is None:
        return batch_filter(query, kind.lists)
    given = filter_input(query, kind.input_class)
    return None if given is None else given.to_query()


def list_reader(name: str) -> Callable[[Connection, Request, Head, Console], dict[str, Any]]:
    kind = LIST_KINDS[name]

    def read(connection: Connection, request: Request, head: Head,
             console: Console) -> dict[str, Any]:
        query = request.query_params
        where = parsed_filter(kind, query)
        options = page_options(query, kind.orders)
        page = kind.page(connection, where, options.first, options.after, last=options.last,
                         before=options.before, order=options.order, as_of=options.as_of)
        total = kind.count(connection, where, options.as_of)
        base = request.scope.get("root_path", "")
        params = _params(query)
        fields = {} if kind.input_class is None else filter_fields(kind.input_class).fields

        def facets(connection: Connection) -> list[dict[str, Any]]:
            counted = kind.facets(connection, where, options.as_of).fields
            for name in counted.keys() & params.keys():
                # A field's own values counted without its own filter: one can be added.
                others = QueryParams([(k, v) for k, v in query.multi_items() if k != name])
                counted[name] = kind.facets(connection, parsed_filter(kind, others),
                                            options.as_of).fields[name]
            return _facets(base, kind, params, counted, fields)

        deferred = kind.facet_seconds is not None
        context: dict[str, Any] = {
            "facets": None if deferred else facets(connection),
            "deferred": {"facets": (facets, kind.facet_seconds,
                                    partial(_slow_facets, kind=kind, params=params, head=head))}
            if deferred else {},
            "facet_names": ", ".join(kind.facet_index),
            "grouped": f"{base}/{kind.name}/groups"
                       f"{query_string(_without(params, *_PAGING, 'order'))}"
            if kind.name in HISTOGRAMS else None,
            "title": kind.title, "kind": kind, "total": total,
            "rows": [[_cell(column.cell(record)) for column in kind.columns]
                     for record in page.items],
            "active": [{"param": n, "value": v,
                        "href": _href(base, kind, _toggled(params, n, v))}
                       for n, values in params.items() if n not in PAGE_OPTIONS
                       for v in values],
            "orders": [(order.name.lower().replace("_", " "),
                        _href(base, kind, {**_without(params, *_PAGING),
                                           "order": [order.name]}),
                        order is options.order) for order in kind.orders],
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
    for row in context["rows"]:
        shaped: dict[str, Any] = {}
        for heading, cell in zip(headings, row, strict=True):
            shaped[heading] = cell["value"]
            if cell["href"]:
                shaped[f"{heading}_href"] = links.at(cell["href"])
        rows.append(shaped)
    return {
        "kind": kind.name, "title": kind.title, "total": context["total"],
        "columns": headings, "rows": rows,
        "filters": [{"param": f["param"], "value": f["value"], "remove": f["href"]}
                    for f in context["active"]],
        "facets": context["facets"],
        "facetsOmitted": context["omitted"].get("facets"),
        "orders": [{"order": label, "href": href, "current": current}
                   for label, href, current in context["orders"]],
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
            counted: dict[str, list[Any]], fields: dict[str, Any]) -> list[dict[str, Any]]:
    facets = []
    for name, values in counted.items():
        shown = []
        listed = name not in fields or isinstance(get_nullable_type(fields[name].type),
                                                  GraphQLList)
        for facet in values[:30]:
            if facet.value is None:
                shown.append({"text": "(none)", "count": facet.count, "href": None})
                continue
            value = (parameter_value(fields[name].type, facet.value) if name in fields
                     else str(facet.value))
            shown.append({
                "text": value, "count": facet.count,
                "selected": value in params.get(name, []),
                "href": _href(base, kind, _toggled(params, name, value, single=not listed)),
                "explanation": explain(name, facet.value)})
        facets.append({"param": name, "values": shown})
    return facets
