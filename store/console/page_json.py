"""Every console page as JSON (datasette's `.json`): the page's path + `.json`, or its own
path with `Accept: application/json`, same parameters. A page's JSON is built by its view's
`*_json` shape from the context its template renders, so it says what the page shows; the
envelope (`page`, `url`, `html`, `treeSize`, `rootHash`, `asOf`) is the same on every page.
Links are the page's own: with the root path, and `asOf` kept on an as-of page."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

if TYPE_CHECKING:
    from store.console.pages import Head

JSON_FORMAT = "core-audit-console/1"


@dataclass(frozen=True, slots=True)
class Links:
    """How a page's links are spelled: under the root path `base`, at tree size `as_of`."""

    base: str
    as_of: int | None = None

    def at(self, path: str) -> str:
        """A console path, kept at the page's tree size."""
        if self.as_of is None:
            return self.base + path
        return f"{self.base}{path}{'&' if '?' in path else '?'}asOf={self.as_of}"

    def plain(self, path: str) -> str:
        """A console path under the root path, as given (it says its own tree size)."""
        return self.base + path


Shape = Callable[[dict[str, Any], Links], dict[str, Any]]


def wants_json(request: Request) -> bool:
    """Whether the request's Accept asks for JSON first (a browser asks for HTML first)."""
    accept = request.headers.get("accept", "")
    first = accept.split(",", 1)[0].split(";", 1)[0].strip().lower()
    return first == "application/json"


def json_body(shape: Shape, context: dict[str, Any], request: Request, head: Head) -> bytes:
    base = request.scope.get("root_path", "")
    here = request.url.path.removeprefix(base) or "/"
    page = here.removesuffix(".json") or "/"
    query = request.url.query
    suffix = f"?{query}" if query else ""
    envelope = {
        "format": JSON_FORMAT, "page": page, "url": base + _json_path(page) + suffix,
        "html": base + page + suffix,
        "treeSize": head.size, "rootHash": head.root, "asOf": head.as_of,
        "newestTreeSize": head.newest_size,
    }
    body = {**envelope, **shape(context, Links(base, head.as_of))}
    return json.dumps(body, ensure_ascii=False, indent=1, default=_plain).encode("utf-8")


def _json_path(page: str) -> str:
    return "/.json" if page == "/" else page + ".json"


def _plain(value: Any) -> Any:
    """What json.dumps cannot write itself: enums by name, dataclasses as dicts."""
    import dataclasses

    if hasattr(value, "name") and hasattr(value, "value"):
        return value.name
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON: {type(value).__name__}")
