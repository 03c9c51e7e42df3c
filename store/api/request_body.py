"""A GraphQL-over-HTTP request read strictly: UTF-8 JSON of the documented shape, else a 4xx
with a GraphQL response that says what is wrong, coded (never a 500, never a logged
traceback): 400 BAD_REQUEST for bytes that are not UTF-8 JSON, 422 INVALID_REQUEST for JSON
that is not a GraphQL-over-HTTP request, 415 UNSUPPORTED_MEDIA_TYPE for a POST body that is
not application/json."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cross_web import AsyncHTTPRequestAdapter, HTTPException
from starlette.responses import Response
from strawberry.http.parse_content_type import parse_content_type

from store.api.error_codes import ErrorCode

# What a request may carry, and the JSON type each member must have when present.
_MEMBER_TYPES: dict[str, tuple[type, str]] = {
    "query": (str, "a string"),
    "documentId": (str, "a string"),
    "operationName": (str, "a string"),
    "variables": (dict, "an object"),
    "extensions": (dict, "an object"),
}
_JSON_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
                    int: "a number", float: "a number", type(None): "null"}


@dataclass(frozen=True)
class GraphQLRequest:
    """The members of one request body (or GET query string), each of its documented type."""
    query: str | None
    document_id: str | None
    operation_name: str | None
    variables: dict[str, Any] | None
    extensions: dict[str, Any] | None


class RequestRefused(HTTPException):
    """A request refused before GraphQL sees it, with its code (and the code's status)."""

    def __init__(self, message: str, code: ErrorCode) -> None:
        super().__init__(code.status, message)
        self.code = code


def bad_request(message: str, code: ErrorCode = ErrorCode.INVALID_REQUEST) -> RequestRefused:
    return RequestRefused(message, code)


def error_response(status: int, message: str, code: ErrorCode,
                   media_type: str = "application/json") -> Response:
    """`{"errors": [{"message": ..., "extensions": {"code": ...}}]}`, a GraphQL response
    without data; ASCII JSON, so any text a client sent can be echoed."""
    body = json.dumps({"errors": [{"message": message, "extensions": {"code": code.name}}]})
    return Response(body, status_code=status, media_type=media_type)


def decode_json(data: str | bytes, what: str) -> object:
    """JSON text as Python values; a 400 naming `what` for bytes that are not UTF-8 JSON."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise bad_request(f"{what}: not UTF-8 (byte {exc.start})", ErrorCode.BAD_REQUEST) from None
    try:
        return json.loads(text)
    except RecursionError:
        raise bad_request(f"{what}: JSON nested too deeply", ErrorCode.BAD_REQUEST) from None
    except ValueError as exc:  # JSONDecodeError, or an integer of over 4300 digits
        raise bad_request(f"{what}: not JSON ({exc})", ErrorCode.BAD_REQUEST) from None


def graphql_request(data: object, source: str) -> GraphQLRequest:
    """The request in a decoded body or query string; a 400 naming the member that is wrong."""
    if isinstance(data, list):
        raise bad_request(f"{source}: a JSON object, not an array (batching is not supported)")
    if not isinstance(data, dict):
        raise bad_request(f"{source}: a JSON object with a query, not {_json_type(data)}")
    members: dict[str, Any] = {}
    for name, (kind, kind_name) in _MEMBER_TYPES.items():
        value = data.get(name)
        if value is not None and not isinstance(value, kind):
            raise bad_request(f"{name}: must be {kind_name} or null, not {_json_type(value)}")
        members[name] = value
    if members["query"] is None and members["documentId"] is None:
        raise bad_request(f"{source}: no query (send the GraphQL document as `query`)")
    return GraphQLRequest(
        query=members["query"], document_id=members["documentId"],
        operation_name=members["operationName"], variables=members["variables"],
        extensions=members["extensions"])


async def read_graphql_request(request: AsyncHTTPRequestAdapter) -> GraphQLRequest:
    """A GET's query string, or a POST's body, which must be application/json."""
    if request.method == "GET":
        return _query_string_request({name: value for name, value in
                                      request.query_params.items() if isinstance(value, str)})
    content_type, _ = parse_content_type(request.content_type or "")
    if content_type != "application/json":
        raise bad_request(f"content-type: send application/json, not {content_type or 'none'}",
                          ErrorCode.UNSUPPORTED_MEDIA_TYPE)
    return graphql_request(decode_json(await request.get_body(), "request body"), "request body")


def _query_string_request(params: Mapping[str, str]) -> GraphQLRequest:
    """query, documentId and operationName as text; variables and extensions as JSON."""
    data: dict[str, object] = dict(params)
    for name in ("variables", "extensions"):
        if params.get(name):
            data[name] = decode_json(params[name], name)
    return graphql_request(data, "query string")


def _json_type(value: object) -> str:
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
