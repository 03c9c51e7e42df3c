"""The Starlette app: /graphql (GET and POST), /healthz, host check, body limit, opt-in CORS.

GraphiQL, when on, is our own page over vendored assets (store/api/graphiql_page.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL

from store.api.body_limit import DEFAULT_MAX_BODY_BYTES, BodySizeLimit
from store.api.context import RegistryProvider, RequestContext
from store.api.graphiql_page import graphiql_assets, graphiql_page
from store.api.schema import build_schema
from store.db.database import Database
from store.model.teaching_surface import default_registry

LOCAL_HOSTS = ("127.0.0.1", "localhost")


class AuditGraphQL(GraphQL[RequestContext, None]):
    """strawberry's ASGI view, with a fresh RequestContext (deadline, loaders) per request."""

    def __init__(self, db: Database, *, graphiql: bool, introspection: bool,
                 registry: RegistryProvider) -> None:
        super().__init__(
            build_schema(introspection=introspection),
            graphql_ide="graphiql" if graphiql else None,
            allow_queries_via_get=True,
        )
        self.db = db
        self.registry = registry

    async def render_graphql_ide(self, request: Request) -> Response:
        return graphiql_page()  # strawberry's own page loads its scripts from a CDN

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> RequestContext:
        return RequestContext(self.db, self.registry)


async def healthz(_: Request) -> Response:
    return JSONResponse({"status": "ok"})


def create_app(
    db: Database,
    *,
    host: str = "127.0.0.1",
    graphiql: bool = True,
    introspection: bool = True,
    cors_origins: Sequence[str] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    close_db_on_shutdown: bool = True,
    registry: RegistryProvider = default_registry,
) -> Starlette:
    """An app serving `db`; it answers only for 127.0.0.1, localhost and `host`."""
    graphql_app = AuditGraphQL(db, graphiql=graphiql, introspection=introspection,
                               registry=registry)
    middleware = [
        Middleware(TrustedHostMiddleware, allowed_hosts=sorted({*LOCAL_HOSTS, host})),
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
            Route("/healthz", healthz, methods=["GET"]),
            *([graphiql_assets()] if graphiql else []),
        ],
        middleware=middleware,
        lifespan=lifespan,
    )
