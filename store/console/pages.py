"""The console's HTTP side: routes (every page also as JSON, page_json.py), the tree head as
ETag, immutable as-of pages, a small cache of rendered pages, security headers, and error pages
(400 naming the parameter, 404, 503; JSON for a JSON request).

Every read runs through `AuditStore.run` (a worker thread, the request's time limit), as the
GraphQL resolvers' do; one page's reads share one connection.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape
from sqlalchemy import Connection, func, select
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from store import __version__
from store.console.page_json import Links, Shape, json_body, wants_json
from store.console.parameters import ParameterError, as_of_of
from store.console.request_bounds import (
    MAX_CACHE_BYTES,
    PageTooLarge,
    QueryTooLong,
    check_page,
    check_request,
    printable,
)
from store.db.audit_store import AuditStore
from store.db.damage import DAMAGE, damage_said
from store.db.log.stored_log import LeafBlocks, latest_head, stored_origin
from store.db.queries import QueryError, QueryTimeout, snapshot_at
from store.db.queries.search import MARK_CLOSE, MARK_OPEN
from store.db.read_threads import ReadsBusy
from store.db.schema.tables import checkpoint_cosignatures, checkpoints
from store.errors import StoreError

logger = logging.getLogger(__name__)
HERE = Path(__file__).resolve().parent
# Self only: the page's own script and style sheet; no inline script or style, no framing.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer"}
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"  # a newer tree head changes the page: ask each time, 304 if not
NAV = (("/", "Overview"), ("/residuals", "Residuals"), ("/assessments", "Assessments"),
       ("/surfaces", "Surfaces"), ("/turns", "Turns"), ("/batches", "Batches"),
       ("/log", "Log"), ("/keys", "Keys"))


class NotFound(StoreError):
    """No such record (or not yet, at the asOf given)."""


@dataclass(frozen=True, slots=True)
class Head:
    """The tree the page shows: the newest head, or the asOf one; and what the store has
    signed (`signed`: its origin, kept checkpoints and cosignatures), which record pages and
    proof downloads also show."""

    size: int
    root: str
    newest_size: int
    newest_root: str
    as_of: int | None
    as_of_batch: int | None
    signed: str = ""

    @property
    def etag(self) -> str:
        return f'"{__version__}-{self.size}-{self.root[:32]}-{self.signed}"'

    @property
    def cache_control(self) -> str:
        # Below the newest head nothing a page shows can change: no checkpoint signs an old
        # head and the origin is chosen before signing. At the newest, one may be signed.
        settled = self.as_of is not None and self.as_of < self.newest_size
        return IMMUTABLE if settled else REVALIDATE


def signed_state(connection: Connection) -> str:
    """A short digest of the origin, the kept checkpoints and their cosignatures: it changes
    when one is chosen, signed or cosigned (all three append-only)."""
    newest, cosignatures = connection.execute(select(
        func.coalesce(func.max(checkpoints.c.checkpoint_id), 0),
        select(func.count()).select_from(checkpoint_cosignatures).scalar_subquery())).one()
    state = f"{stored_origin(connection)}\n{newest}\n{cosignatures}"
    return hashlib.sha256(state.encode("utf-8")).hexdigest()[:12]


def _head(connection: Connection, as_of: int | None) -> Head:
    newest = latest_head(connection)
    snapshot = snapshot_at(connection, as_of)
    signed = signed_state(connection)
    if snapshot is None:
        return Head(newest.size, newest.root_hex, newest.size, newest.root_hex, None, None,
                    signed)
    return Head(snapshot.tree_size, snapshot.root_hash, newest.size, newest.root_hex, as_of,
                snapshot.batch_id or None, signed)


Read = Callable[[Connection, Request, Head, "Console"], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Page:
    template: str
    read: Read
    shape: Shape  # the page as JSON: what its template shows, from the same context
    as_of: bool = True  # takes asOf
    takes: tuple[str, ...] | None = None  # the parameters it takes (None: its reader checks)


class RenderedPages:
    """Rendered bodies by (ETag, URL): a page is a function of the tree head and its URL. At
    most `capacity` pages of at most `max_bytes` all together, the least recently used
    dropped first; a page over an eighth of `max_bytes` is not kept."""

    def __init__(self, capacity: int = 256, max_bytes: int = MAX_CACHE_BYTES) -> None:
        self.capacity = capacity
        self.max_bytes = max_bytes
        self.size = 0  # the bytes of the bodies kept (their keys' URLs are capped too)
        self._pages: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> bytes | None:
        with self._lock:
            found = self._pages.get(key)
            if found is not None:
                self._pages.move_to_end(key)
            return found

    def put(self, key: tuple[str, str], body: bytes) -> None:
        if self.capacity <= 0 or len(body) > self.max_bytes // 8:
            return
        with self._lock:
            replaced = self._pages.pop(key, None)
            self.size -= 0 if replaced is None else len(replaced)
            self._pages[key] = body
            self.size += len(body)
            while len(self._pages) > self.capacity or self.size > self.max_bytes:
                _, dropped = self._pages.popitem(last=False)
                self.size -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._pages.clear()
            self.size = 0


def marked(snippet: str | None) -> Markup:
    """A search snippet as HTML: escaped first, then its « » marks made <mark> elements."""
    escaped = escape(snippet or "")
    return Markup(str(escaped).replace(MARK_OPEN, "<mark>").replace(MARK_CLOSE, "</mark>"))


class Console:
    """The console over one store: its routes, templates, leaf-hash blocks and page cache."""

    def __init__(self, db: AuditStore, *, graphiql: bool = True, cache_pages: int = 256,
                 cache_bytes: int = MAX_CACHE_BYTES) -> None:
        self.db = db
        self.graphiql = graphiql
        self.blocks = LeafBlocks()
        self.rendered = RenderedPages(cache_pages, cache_bytes)
        environment = Environment(loader=FileSystemLoader(HERE / "templates"),
                                  autoescape=select_autoescape(default=True),
                                  trim_blocks=True, lstrip_blocks=True)
        environment.filters["thousands"] = thousands
        environment.filters["marked"] = marked
        self.templates = Jinja2Templates(env=environment)

    def routes(self) -> list[BaseRoute]:
        from store.console import (
            exports,
            group_page,
            lists,
            log_page,
            overview,
            proofs,
            record_keys,
            records,
        )

        pages: list[tuple[str, Page]] = [
            ("/", Page("overview.html", overview.read_overview, overview.overview_json,
                       takes=("asOf",))),
            ("/log", Page("log.html", log_page.read_log, log_page.log_json, as_of=False)),
            ("/keys", Page("keys.html", log_page.read_keys, log_page.keys_json, as_of=False)),
            *((f"/{name}/groups", Page("groups.html", group_page.groups_reader(name),
                                       group_page.groups_json))
              for name in group_page.GROUPED),
            *((f"/{name}", Page("list.html", lists.list_reader(name), lists.list_json))
              for name in lists.LIST_KINDS),
            *((f"/{name}/{{key}}", Page("record.html", records.record_reader(name),
                                        records.record_json))
              for name in record_keys.RECORD_KINDS),
        ]
        # Every page also as JSON at its path + ".json" ("/.json" for the overview), before
        # the record pages' "/{key}" would take "groups.json" or "KEY.json" as a key.
        json_routes = [Route(path + ".json",
                             self._endpoint(page, as_json=True), methods=["GET", "HEAD"])
                       for path, page in pages]
        return [
            *json_routes,
            *(Route(path, self._endpoint(page), methods=["GET", "HEAD"]) for path, page in pages),
            Route("/proofs/consistency.json", self._endpoint_raw(proofs.consistency_download),
                  methods=["GET", "HEAD"]),
            Route("/proofs/{kind}/{key}.json", self._endpoint_raw(proofs.proof_download),
                  methods=["GET", "HEAD"]),
            Route("/proofs/{kind}/{key}.tlog-proof",
                  self._endpoint_raw(proofs.bundle_download), methods=["GET", "HEAD"]),
            Route("/export/{kind}.{format}", exports.export_endpoint(self),
                  methods=["GET", "HEAD"]),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="console-static"),
        ]

    # --- rendering -------------------------------------------------------------------------

    def render(self, request: Request, template: str, context: dict[str, Any], head: Head | None,
               status: int = 200) -> bytes:
        base = request.scope.get("root_path", "")
        here = request.url.path.removeprefix(base) or "/"
        links = Links(base, None if head is None else head.as_of)
        values = {
            "base": base, "here": here, "nav": NAV, "graphiql": self.graphiql,
            "title": context.get("title", "core-audit"), "as_of": None, "as_of_batch": None,
            "at": links.at, "head_size": head.newest_size if head else "—",
            "head_root": head.newest_root if head else "", "here_now": base + here,
            "json_href": _json_href(request, base, here),
            **context}
        if head is not None and head.as_of is not None:
            values.update(as_of=head.as_of, as_of_batch=head.as_of_batch)
        return self.templates.get_template(template).render(values).encode("utf-8")

    def error_page(self, request: Request, status: int, message: str,
                   parameter: str | None = None) -> Response:
        headings = {400: "Bad request", 404: "Not found", 503: "Unavailable",
                    500: "Server error"}
        if _asks_json(request):
            error = {"status": status, "error": headings.get(status, "Error"),
                     "message": printable(message),
                     "parameter": None if parameter is None else printable(parameter)}
            return Response(json.dumps(error, ensure_ascii=False), status,
                            media_type="application/json",
                            headers={**HEADERS, "Cache-Control": "no-store", "Vary": "Accept"})
        # What the request gave is named, never echoed raw: a NUL or an escape sequence in a
        # parameter is spelled \x00, \x1b (HTML escaping leaves control characters as they are).
        base = request.scope.get("root_path", "")
        here = quote(request.url.path.removeprefix(base) or "/", safe="/:@!$&'()*+,;=-._~")
        body = self.render(request, "error.html", {
            "title": headings.get(status, "Error"), "status": status,
            "heading": headings.get(status, "Error"), "message": printable(message),
            "parameter": None if parameter is None else printable(parameter),
            "here": here, "here_now": base + here, "json_href": None}, None)
        return Response(body, status, media_type="text/html; charset=utf-8",
                        headers={**HEADERS, "Cache-Control": "no-store"})

    async def guarded(self, request: Request, answer: Callable[[], Any]) -> Response:
        """`answer()`'s response, or the error page for what it raised: never a traceback."""
        try:
            check_request(request)
            response: Response = await answer()
            return response
        except QueryTooLong as exc:
            return self.error_page(request, 400, str(exc))
        except PageTooLarge as exc:
            return self.error_page(request, 503, str(exc))
        except ParameterError as exc:
            return self.error_page(request, 400, str(exc), exc.parameter)
        except NotFound as exc:
            return self.error_page(request, 404, str(exc))
        except ReadsBusy as exc:  # loaded, not slow: narrowing the filter would not help
            return self.error_page(request, 503, f"{exc}. Try again.")
        except QueryTimeout as exc:
            return self.error_page(request, 503, f"{exc} Narrow the filter, or try again.")
        except QueryError as exc:
            parameter = str(exc).split(":", 1)[0] if ":" in str(exc) else None
            return self.error_page(request, 400, str(exc), parameter)
        except DAMAGE as exc:  # the store's fault, not the page's: one line, no traceback
            said = damage_said(exc)
            logger.warning("console page %s: %s", request.url.path, said)
            return self.error_page(request, 503, said[0].upper() + said[1:])
        except Exception:
            logger.exception("console page %s failed", request.url.path)
            return self.error_page(request, 500, "The page could not be built; the server's "
                                   "log has the details.")

    def _endpoint(self, page: Page, *, as_json: bool = False) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            async def answer() -> Response:
                if page.takes is not None:
                    check_request(request, page.takes)
                as_of = as_of_of(request.query_params) if page.as_of else None
                deadline = self.db.deadline()
                head = await self.db.run(deadline, _head, as_of)
                json_wanted = as_json or wants_json(request)
                # One URL, two representations (Accept): each its own ETag.
                etag = head.etag[:-1] + '-json"' if json_wanted else head.etag
                headers = {**HEADERS, "ETag": etag, "Cache-Control": head.cache_control,
                           "Vary": "Accept"}
                if request.headers.get("if-none-match") == etag:
                    return Response(status_code=304, headers=headers)
                key = (etag, str(request.url))
                body = self.rendered.get(key)
                if body is None:
                    context = await self.db.run(deadline, page.read, request, head, self)
                    await self._run_deferred(context, deadline)
                    if json_wanted:
                        body = check_page(json_body(page.shape, context, request, head))
                    else:
                        body = check_page(self.render(request, page.template, context, head))
                    if not context["omitted"]:  # a page cut short is not kept
                        self.rendered.put(key, body)
                media = "application/json" if json_wanted else "text/html; charset=utf-8"
                return Response(body, media_type=media, headers=headers)

            return await self.guarded(request, answer)

        return endpoint

    async def _run_deferred(self, context: dict[str, Any], deadline: float) -> None:
        """Reads a page may go without: each under a limit of its own (and the request's);
        one that runs past it is left out, its name in `omitted` with why (`explain`'s
        answer), the page still served."""
        context.setdefault("omitted", {})
        for name, (read, seconds, explain) in context.pop("deferred", {}).items():
            try:
                context[name] = await self.db.run(min(deadline, time.monotonic() + seconds),
                                                  read)
            except ReadsBusy:  # it never ran: the server was loaded, not the read slow
                context[name] = None
                context["omitted"][name] = (
                    f"the server's {self.db.reads.count} read thread(s) stayed busy for "
                    f"{seconds} s; reload the page to try again")
            except QueryTimeout:
                context[name] = None
                why = await self.db.run(deadline, explain)
                context["omitted"][name] = f"they took longer than {seconds} s: {why}"

    def _endpoint_raw(self, read: Callable[[Connection, Request, Head, Console], Response]
                      ) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            async def answer() -> Response:
                as_of = as_of_of(request.query_params)
                deadline = self.db.deadline()
                head = await self.db.run(deadline, _head, as_of)
                response = await self.db.run(deadline, read, request, head, self)
                response.headers.update({**HEADERS, "ETag": head.etag,
                                         "Cache-Control": head.cache_control})
                return response

            return await self.guarded(request, answer)

        return endpoint


def _asks_json(request: Request) -> bool:
    return request.url.path.endswith(".json") or wants_json(request)


def _json_href(request: Request, base: str, here: str) -> str:
    """This page's JSON: its path + ".json" ("/.json" for the overview), same parameters."""
    query = request.url.query
    return f"{base}{here}.json" + (f"?{query}" if query else "")


def thousands(value: Any) -> str:
    """A count as the pages write it: 216,029 (anything else as it is)."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
