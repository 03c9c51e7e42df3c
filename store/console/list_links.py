"""A list page's links: its parameters with a filter added or removed, or without some (the
paging, say), as the list page and its facets make them."""

from __future__ import annotations

from store.console.kinds import ListKind
from store.console.parameters import query_string

# Filter-changing links start the list over: a cursor belongs to one filter (and a facet
# shown in full goes back to every facet).
PAGING = ("after", "before", "first", "last", "facet", "facetAfter")


def list_href(base: str, kind: ListKind, params: dict[str, list[str]]) -> str:
    return f"{base}/{kind.name}{query_string(params)}"


def without(params: dict[str, list[str]], *names: str) -> dict[str, list[str]]:
    return {k: v for k, v in params.items() if k not in names}


def toggled(params: dict[str, list[str]], name: str, value: str, *, single: bool = False
            ) -> dict[str, list[str]]:
    """With `value` of `name` added, or removed if it was there (`single`: replacing)."""
    changed = without(params, *PAGING)
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
