"""Group-by pages (`/residuals/groups?by=kind,organ`, and for surfaces and turns): a list's
filtered records counted per combination of up to three dimensions, largest first, capped
(the groups query layer: GraphQL's residualGroups, surfaceGroups, turnGroups); each row a
link to the list filtered to its values.

`by` names dimensions as the API does or in the filter's spelling (`kind`, `organ`,
`ingest_day`, `groundingSource`), comma-separated or repeated; `first` caps the rows (1 to
500, default 50); the list's filter parameters and `asOf` as on the list.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from starlette.datastructures import QueryParams
from starlette.requests import Request

from store.console.histograms import bucket_bounds, narrowed
from store.console.kinds import LIST_KINDS, ListKind
from store.console.lists import parsed_filter
from store.console.page_json import Links
from store.console.parameters import (
    ParameterError,
    filter_fields,
    integer,
    parameter_value,
    query_string,
)
from store.db.queries.groups import (
    DEFAULT_GROUPS,
    GROUPINGS,
    MAX_DIMENSIONS,
    MAX_GROUPS,
    Grouping,
    TimeBucket,
)

if TYPE_CHECKING:
    from store.console.pages import Console, Head

GROUPED = ("residuals", "surfaces", "turns")
OWN = ("by", "first", "asOf")
# A dimension's values as a list filter takes them: the filter parameter, per listing.
FILTERED_BY: dict[str, dict[str, str]] = {
    "residuals": {"KIND": "kind", "AXIS": "axis", "ORGAN": "organ", "FAMILY": "familyId",
                  "CODE": "code"},
    "surfaces": {"GROUNDING_SOURCE": "groundingSource", "CORPUS": "corpusId",
                 "CHAIN": "chainId", "INTENT": "intent", "FORM": "surfaceForm",
                 "VERIFICATION": "verification"},
    "turns": {"KIND": "kind", "GROUNDING_SOURCE": "groundingSource",
              "VERIFICATION": "verification", "CORPUS": "corpusId", "CHAIN": "chainId",
              "EPISTEMIC_STATE": "epistemicState", "CLEARANCE": "normativeClearance",
              "TRACE_INTEGRITY": "traceIntegrity"},
}
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _fields(kind: ListKind) -> dict[str, Any]:
    assert kind.input_class is not None, kind.name  # a grouped list has a filter input
    return dict(filter_fields(kind.input_class).fields)


def _dimension_name(text: str) -> str:
    """`groundingSource`, `grounding_source`, `GROUNDING_SOURCE` → GROUNDING_SOURCE."""
    return _CAMEL.sub("_", text.strip()).upper()


def _by(query: QueryParams, grouping: Grouping, listing: str) -> list[str]:
    given = [part.strip() for value in query.getlist("by") for part in value.split(",")
             if part.strip()]
    if not given:
        return [grouping.dimensions[0].name]
    # A filter parameter names its dimension too: familyId is FAMILY, corpusId is CORPUS.
    by_parameter = {param: dimension for dimension, param in FILTERED_BY[listing].items()}
    names = [by_parameter.get(part) or _dimension_name(part[:80]) for part in given]
    known = [d.name for d in grouping.dimensions]
    for name in names:
        if name not in known:
            raise ParameterError("by", f"no dimension {name!r}; one of {', '.join(known)}")
    if len(names) > MAX_DIMENSIONS:
        raise ParameterError("by", f"at most {MAX_DIMENSIONS} dimensions, got {len(names)}")
    if len(set(names)) != len(names):
        raise ParameterError("by", f"a dimension given twice: {', '.join(names)}")
    return names


def _filter_params(query: QueryParams) -> list[tuple[str, str]]:
    for name in ("order", "last", "after", "before"):
        if name in query:
            raise ParameterError(name, "not a parameter of a group page; it takes by, first, "
                                 "asOf and the list's filter")
    return [(k, v) for k, v in query.multi_items() if k not in ("by", "first") and v != ""]


def groups_reader(name: str) -> Callable[[Connection, Request, Head, Console], dict[str, Any]]:
    kind = LIST_KINDS[name]
    grouping = GROUPINGS[name]

    def read(connection: Connection, request: Request, head: Head,
             console: Console) -> dict[str, Any]:
        query = request.query_params
        by = _by(query, grouping, name)
        first_text = query.get("first") or None
        first = (DEFAULT_GROUPS if first_text is None
                 else integer(first_text, "first", 1, MAX_GROUPS))
        kept = _filter_params(query)
        where = parsed_filter(kind, QueryParams(kept))
        found = grouping.groups(connection, by, where, first, head.as_of)
        base = request.scope.get("root_path", "")
        filtered: dict[str, list[str]] = {}
        for k, v in kept:
            filtered.setdefault(k, []).append(v)
        dimensions = [grouping.dimension(d) for d in by]
        fields = _fields(kind)
        spelled = [FILTERED_BY[name].get(d) for d in by]
        rows = [{"values": [_shown(v, fields.get(p) if p else None)
                            for v, p in zip(group.values, spelled, strict=True)],
                 "raw": group.values,
                 "count": group.count, "occurrences": group.occurrences,
                 "href": _row_href(base, kind, filtered, by, group.values)}
                for group in found.groups]
        here = {**filtered, "by": [",".join(d.lower() for d in by)]}
        return {
            "title": f"{kind.title} grouped", "kind": kind, "groups": found, "rows": rows,
            "dimensions": [{"name": d.name, "label": d.name.lower(), "help": d.help}
                           for d in dimensions],
            "choices": [{"name": d.name, "label": d.name.lower(), "help": d.help,
                         "selected": d.name in by,
                         "href": _groups_href(base, kind, filtered, _toggled(by, d.name))}
                        for d in grouping.dimensions],
            "sightings": "sightings" if name != "turns" else None,
            "list_href": f"{base}/{kind.name}{query_string(filtered)}",
            "more": None if not found.has_more or first >= MAX_GROUPS else
            f"{base}/{kind.name}/groups{query_string({**here, 'first': [str(MAX_GROUPS)]})}",
            "omitted": {},
        }

    return read


def _shown(value: Any, field: Any) -> str:
    """As the page shows a group's value: an enum by its GraphQL name, as the list's
    filter and facets spell it."""
    if value is None:
        return "(none)"
    return str(value) if field is None else parameter_value(field.type, value)


def _toggled(by: list[str], name: str) -> list[str]:
    if name in by:
        return [d for d in by if d != name] or by
    return [*by, name][-MAX_DIMENSIONS:]


def _groups_href(base: str, kind: ListKind, filtered: dict[str, list[str]],
                 by: list[str]) -> str:
    return (f"{base}/{kind.name}/groups"
            f"{query_string({**filtered, 'by': [','.join(d.lower() for d in by)]})}")


def _row_href(base: str, kind: ListKind, filtered: dict[str, list[str]], by: list[str],
              values: tuple[Any, ...]) -> str | None:
    """The list filtered to a group's values; None when one of them is null or has no
    filter parameter (the list could not show exactly that group)."""
    fields = _fields(kind)
    params = dict(filtered)
    for dimension, value in zip(by, values, strict=True):
        if value is None:
            return None
        bucket = next((b for b in TimeBucket if dimension == f"INGEST_{b.name}"), None)
        if bucket is not None:
            params.update(narrowed(params, "ingestedFrom", "ingestedTo",
                                   *bucket_bounds(bucket, str(value))))
            continue
        param = FILTERED_BY[kind.name].get(dimension)
        if param is None or param not in fields:
            return None
        params[param] = [parameter_value(fields[param].type, value)]
    return f"{base}/{kind.name}{query_string(params)}"


def groups_json(context: dict[str, Any], links: Links) -> dict[str, Any]:
    """A group page as JSON: the dimensions, each group's values and counts, and its link."""
    found = context["groups"]
    return {
        "kind": context["kind"].name, "by": [d["name"] for d in context["dimensions"]],
        "total": found.total, "occurrences": found.occurrences,
        "groupCount": found.group_count, "hasMore": found.has_more,
        "groups": [{"values": dict(zip((d["label"] for d in context["dimensions"]),
                                       (None if raw is None else shown for shown, raw
                                        in zip(row["values"], row["raw"], strict=True)),
                                       strict=True)),
                    "count": row["count"], "occurrences": row["occurrences"],
                    "href": row["href"]} for row in context["rows"]],
        "list": context["list_href"], "more": context["more"],
    }
