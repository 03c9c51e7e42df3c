"""The Starlette app: /graphql (GET and POST), /healthz, /events (server-sent events: a new
tree head), the log's C2SP tiles under /log/, host check, body limit, opt-in CORS.

GraphiQL, when on, is our own page over vendored assets (store/api/graphiql_page.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import cast

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
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.http.base import BaseRequestProtocol
from strawberry.schema.exceptions import CannotGetOperationTypeError
from strawberry.types import ExecutionResult

from store.api.body_limit import DEFAULT_MAX_BODY_BYTES, BodySizeLimit
from store.api.context import RegistryProvider, RequestContext
from store.api.error_codes import ErrorCode, graphql_response
from store.api.events import TreeHeadWatcher, events_endpoint
from store.api.graphiql_page import graphiql_assets, graphiql_page
from store.api.health import health_check
from store.api.log_tiles import log_routes
from store.api.media_types import GRAPHQL_RESPONSE, response_media_type, response_status
from store.api.media_types import JSON as JSON_MEDIA_TYPE
from store.api.object_estimate import DEFAULT_MAX_OBJECTS
from store.api.prepared_operations import PlainResult, PreparedOperations
from store.api.request_body import bad_request, error_response, read_graphql_request
from store.api.response_json import PlainResponse, response_json
from store.api.schema import build_schema
from store.api.trusted_documents import DocumentRefused, TrustedDocuments
from store.console import console_routes
from store.db.audit_store import AuditStore
from store.model.teaching_surface import default_registry

LOCAL_HOSTS = ("127.0.0.1", "localhost")


def _strawberry_code(refusal: HTTPException) -> ErrorCode:
    """The code of a refusal by strawberry's own view (it raises them by status)."""
    if isinstance(refusal.__cause__, CannotGetOperationTypeError):  # an unknown operationName
        return ErrorCode.OPERATION_NOT_DETERMINED
    return ErrorCode.NOT_FOUND if refusal.status_code == 404 else ErrorCode.INVALID_REQUEST


class AuditGraphQL(GraphQL[RequestContext, None]):
    """strawberry's ASGI view, with a fresh RequestContext (deadline, loaders) per request,
    strict request bodies, GraphQL-shaped 4xx bodies and, if given, only trusted documents."""

    def __init__(self, db: AuditStore, *, graphiql: bool, introspection: bool,
                 registry: RegistryProvider, max_objects: int = DEFAULT_MAX_OBJECTS,
                 trusted_documents: TrustedDocuments | None = None,
                 console: bool = False) -> None:
        super().__init__(
            build_schema(introspection=introspection, max_objects=max_objects),
            graphql_ide="graphiql" if graphiql else None,
            allow_queries_via_get=True,
        )
        self.db = db
        self.registry = registry
        self.trusted_documents = trusted_documents
        self.console = console  # served beside it: GraphiQL links back to it

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        request = Request(scope, receive)
        accept = request.headers.get("accept")
        media_type = response_media_type(accept)
        try:
            if media_type is None and not (request.method == "GET"
                                           and "text/html" in (accept or "")):
                raise bad_request(f"accept: this server answers {GRAPHQL_RESPONSE} or "
                                  f"{JSON_MEDIA_TYPE}, not {accept}", ErrorCode.NOT_ACCEPTABLE)
            response = await self.run(request)
        except HTTPException as exc:  # strawberry's own answers are plain text: not GraphQL
            code = getattr(exc, "code", None) or _strawberry_code(exc)
            response = error_response(code.status, exc.reason, code,
                                      media_type or JSON_MEDIA_TYPE)
        await response(scope, receive, send)

    async def execute_single(self, request: Request, request_adapter: AsyncHTTPRequestAdapter,
                             sub_response: Response, context: RequestContext,
                             root_value: None, request_data: GraphQLRequestData
                             ) -> ExecutionResult:
        # A document of listing pages is answered from their rows (prepared_operations.py);
        # anything it does not answer runs through strawberry, from the start.
        prepared: PreparedOperations | None = getattr(self.schema, "prepared", None)
        if prepared is not None:
            answered = await prepared.answer(request_data.query, request_data.variables,
                                             request_data.operation_name, context)
            if answered is not None:
                return answered
        return await super().execute_single(request, request_adapter, sub_response, context,
                                            root_value, request_data)

    async def get_sub_response(self, request: Request | WebSocket) -> Response:
        sub_response = await super().get_sub_response(request)
        # What create_response sends the answer as, chosen from the request's Accept.
        sub_response.media_type = response_media_type(request.headers.get("accept"))
        return sub_response

    async def process_result(self, request: Request, result: ExecutionResult
                             ) -> GraphQLHTTPResponse:
        response = graphql_response(result.data, result.errors or [])
        if isinstance(result, PlainResult):  # texts, ints, bools and nulls only
            response = PlainResponse(response)
        return cast(GraphQLHTTPResponse, response)

    def encode_json(self, data: object) -> str | bytes:
        return response_json(data)  # strawberry's bytes, by orjson where they are the same

    def create_response(self, response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse],
                        sub_response: Response) -> Response:
        response = super().create_response(response_data, sub_response)
        media_type = sub_response.media_type or JSON_MEDIA_TYPE
        assert isinstance(response_data, dict)  # batching is refused while parsing
        response.status_code = response_status(response_data, media_type)
        # The spec's own example: "application/graphql-response+json; charset=utf-8".
        response.headers["content-type"] = (media_type if media_type == JSON_MEDIA_TYPE
                                            else f"{media_type}; charset=utf-8")
        return response

    def should_render_graphql_ide(self, request: BaseRequestProtocol) -> bool:
        # A GET naming an operation (a trusted document's documentId too) asks for its
        # result, whatever Accept says: never GraphiQL's page nor a 404 for it.
        params = request.query_params
        if params.get("documentId") is not None or params.get("query") is not None:
            return False
        return bool(super().should_render_graphql_ide(request))

    async def render_graphql_ide(self, request: Request) -> Response:
        # strawberry's own page loads its scripts from a CDN
        return graphiql_page(console=self.console)

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
                raise bad_request(str(exc), ErrorCode.FORBIDDEN_DOCUMENT if exc.forbidden
                                  else ErrorCode.INVALID_REQUEST) from None
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
                               trusted_documents=trusted_documents, console=console)
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
