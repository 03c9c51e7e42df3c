"""The Starlette app: /graphql (GET and POST), /healthz, /events (server-sent events: a new
tree head), the log's C2SP tiles under /log/, host check, body limit, opt-in CORS.

GraphiQL, when on, is our own page over vendored assets (store/api/graphiql_page.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from cross_web import AsyncHTTPRequestAdapter, HTTPException
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLRequestData
from strawberry.http.base import BaseRequestProtocol

from store.api.body_limit import DEFAULT_MAX_BODY_BYTES, BodySizeLimit
from store.api.context import RegistryProvider, RequestContext
from store.api.events import TreeHeadWatcher, events_endpoint
from store.api.graphiql_page import graphiql_assets, graphiql_page
from store.api.health import health_check
from store.api.log_tiles import log_routes
from store.api.object_estimate import DEFAULT_MAX_OBJECTS
from store.api.request_body import bad_request, error_response, read_graphql_request
from store.api.schema import build_schema
from store.api.trusted_documents import DocumentRefused, TrustedDocuments
from store.console import console_routes
from store.db.audit_store import AuditStore
from store.model.teaching_surface import default_registry

LOCAL_HOSTS = ("127.0.0.1", "localhost")


class AuditGraphQL(GraphQL[RequestContext, None]):
    """strawberry's ASGI view, with a fresh RequestContext (deadline, loaders) per request,
    strict request bodies, GraphQL-shaped 4xx bodies and, if given, only trusted documents."""

    def __init__(self, db: AuditStore, *, graphiql: bool, introspection: bool,
                 registry: RegistryProvider, max_objects: int = DEFAULT_MAX_OBJECTS,
                 trusted_documents: TrustedDocuments | None = None) -> None:
        super().__init__(
            build_schema(introspection=introspection, max_objects=max_objects),
            graphql_ide="graphiql" if graphiql else None,
            allow_queries_via_get=True,
        )
        self.db = db
        self.registry = registry
        self.trusted_documents = trusted_documents

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        try:
            response = await self.run(Request(scope, receive))
        except HTTPException as exc:  # strawberry's own answers are plain text: not GraphQL
            response = error_response(exc.status_code, exc.reason)
        await response(scope, receive, send)

    def should_render_graphql_ide(self, request: BaseRequestProtocol) -> bool:
        # A GET naming an operation (a trusted document's documentId too) asks for its
        # result, whatever Accept says: never GraphiQL's page nor a 404 for it.
        params = request.query_params
        if params.get("documentId") is not None or params.get("query") is not None:
            return False
        return bool(super().should_render_graphql_ide(request))

    async def render_graphql_ide(self, request: Request) -> Response:
        return graphiql_page()  # strawberry's own page loads its scripts from a CDN

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> RequestContext:
        return RequestContext(self.db, self.registry)

    async def parse_http_body(self, request: AsyncHTTPRequestAdapter) -> GraphQLRequestData:
        body = await read_graphql_request(request)
        query = body.query
        if self.trusted_documents is not None:
            try:
                query = self.trusted_documents.admit(body.query, body.document_id)
            except DocumentRefused as exc:
                raise bad_request(str(exc), exc.status) from None
        elif body.document_id is not None:
            raise bad_request("documentId: this server has no trusted documents; send the "
                              "document as query")
        return GraphQLRequestData(query=query, variables=body.variables,
                                  operation_name=body.operation_name,
                                  extensions=body.extensions)


def create_app(
    db: AuditStore,
    *,
    host: str = "127.0.0.1",
    graphiql: bool = True,
    introspection: bool = True,
    cors_origins: Sequence[str] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    close_db_on_shutdown: bool = True,
    registry: RegistryProvider = default_registry,
    allowed_hosts: Sequence[str] = (),
    max_objects: int = DEFAULT_MAX_OBJECTS,
    trusted_documents: TrustedDocuments | None = None,
    console: bool = True,
) -> Starlette:
    """An app serving `db`; it answers only for 127.0.0.1, localhost, `host` and
    `allowed_hosts` (Starlette patterns: `*.example.com`, or `*` for any). `console`: the
    auditor's console (read-only HTML pages, store/console/) at / beside /graphql."""
    graphql_app = AuditGraphQL(db, graphiql=graphiql, introspection=introspection,
                               registry=registry, max_objects=max_objects,
                               trusted_documents=trusted_documents)
    trusted_hosts = sorted({*LOCAL_HOSTS, host, *allowed_hosts})
    middleware = [
        Middleware(TrustedHostMiddleware, allowed_hosts=trusted_hosts),
        Middleware(BodySizeLimit, max_bytes=max_body_bytes),
    ]
    if cors_origins:
        # Only on request: a browser app on another origin is a deliberate choice.
        middleware.append(Middleware(
            CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["GET", "POST"],
            allow_headers=["content-type"],
        ))

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        if close_db_on_shutdown:
            db.close()

    return Starlette(
        routes=[
            Route("/graphql", graphql_app, methods=["GET", "POST"]),
            Route("/healthz", health_check(db), methods=["GET"]),
            Route("/events", events_endpoint(TreeHeadWatcher(db)), methods=["GET"]),
            log_routes(db),
            *([graphiql_assets()] if graphiql else []),
            *(console_routes(db, graphiql=graphiql) if console else []),
        ],
        middleware=middleware,
        lifespan=lifespan,
    )
