"""The closed set of `extensions.code` values every GraphQL error carries, and the HTTP
status each answer gets (the GraphQL-over-HTTP spec's rules, docs/graphql.md#errors).

A request error (nothing was executed: the body, the document, its validation, the
operation's choice, its variables) answers without `data`, with the status of its first
error's code. A field error (raised while executing) leaves `data` in the answer: 200 with
`application/json`, 294 with `application/graphql-response+json`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from enum import Enum
from typing import Any

from graphql import ASTValidationRule, GraphQLError, GraphQLSyntaxError, ValidationContext
from sqlalchemy.exc import DBAPIError
from strawberry.extensions import SchemaExtension

from store.db import queries
from store.errors import InputError, StoreError

logger = logging.getLogger("core_audit.api")


class ErrorCode(Enum):
    """Every `extensions.code` value; the member's value is the HTTP status of a request
    error of this code (a field error's answer is 200, or 294 with graphql-response+json)."""

    BAD_REQUEST = "the body or query string is not UTF-8 JSON", 400
    INVALID_REQUEST = "JSON, but not a GraphQL-over-HTTP request (member types, no query)", 422
    UNSUPPORTED_MEDIA_TYPE = "a POST body that is not application/json", 415
    NOT_ACCEPTABLE = "Accept names neither JSON media type", 406
    NOT_FOUND = "GET /graphql asking for GraphiQL, which this server does not serve", 404
    FORBIDDEN_DOCUMENT = "not a trusted document of this server", 403
    GRAPHQL_PARSE_FAILED = "the document is not GraphQL", 400
    GRAPHQL_VALIDATION_FAILED = "the schema's validation rules refuse the document", 422
    OPERATION_NOT_DETERMINED = "several operations and no operationName, or an unknown one", 422
    BAD_USER_INPUT = "a value the API cannot take (a variable, an argument)", 422
    LIMIT_EXCEEDED = ("past a bound: tokens, depth, aliases, objects; a page's or an id "
                      "list's cap; a range of changes"), 422
    BAD_CURSOR = "a cursor this API did not hand out, or one of another order", 422
    TIMEOUT = "the request's time limit stopped its SQL", 504
    STORE_UNAVAILABLE = "the store cannot be read (unreachable, removed or damaged)", 503
    INTERNAL = "anything else: masked here, logged by the server", 500

    def __init__(self, meaning: str, status: int) -> None:
        self.meaning = meaning
        self.status = status


STORE_UNAVAILABLE_MESSAGE = ("the store cannot be read now (unreachable, removed or damaged): "
                             "`core-audit verify` checks it")
INTERNAL_MESSAGE = "Internal error."


def coded(message: str, code: ErrorCode) -> GraphQLError:
    """A request or field error carrying `code`."""
    return GraphQLError(message, extensions={"code": code.name})


class _CodingContext:
    """A validation context whose reported errors carry `code`; the rest is the context's."""

    def __init__(self, context: ValidationContext, code: ErrorCode) -> None:
        self._context = context
        self._code = code

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    def report_error(self, error: GraphQLError) -> None:
        error.extensions = {**(error.extensions or {}), "code": self._code.name}
        self._context.report_error(error)


def coded_rule(rule: type[ASTValidationRule], code: ErrorCode) -> type[ASTValidationRule]:
    """`rule`, its errors carrying `code` (the limiters report to their context directly)."""

    class Coded(rule):  # type: ignore[valid-type,misc]
        def __init__(self, context: ValidationContext) -> None:
            super().__init__(_CodingContext(context, code))

    Coded.__name__ = rule.__name__
    return Coded


def code_of(error: GraphQLError, executing: bool = False) -> ErrorCode:
    """The code of an error the schema produced, from what raised it; `executing`: raised
    once execution began (a pathless one then is a variable graphql-core could not coerce)."""
    given = (error.extensions or {}).get("code")
    if isinstance(given, str) and given in ErrorCode.__members__:
        return ErrorCode[given]
    original = error.original_error
    if original is None or isinstance(original, GraphQLError):
        if isinstance(original or error, GraphQLSyntaxError):
            # MaxTokensLimiter's bound stops graphql-core's parser: "Document contains more
            # than N tokens. Parsing aborted."
            return ErrorCode.LIMIT_EXCEEDED if error.message.endswith(
                " tokens. Parsing aborted.") else ErrorCode.GRAPHQL_PARSE_FAILED
        # Without a path: refused before execution (a validation rule, a variable); with one:
        # graphql-core failed a value (an output that does not coerce) — ours, not the caller's.
        if error.path is not None:
            return ErrorCode.INTERNAL
        return ErrorCode.BAD_USER_INPUT if executing else ErrorCode.GRAPHQL_VALIDATION_FAILED
    return exception_code(original)


def exception_code(exc: BaseException) -> ErrorCode:
    """The code of an exception a resolver raised."""
    if isinstance(exc, queries.CursorError):
        return ErrorCode.BAD_CURSOR
    if isinstance(exc, queries.QueryTimeout):
        return ErrorCode.TIMEOUT
    if isinstance(exc, queries.LimitExceeded):
        return ErrorCode.LIMIT_EXCEEDED
    if isinstance(exc, (queries.QueryError, InputError)):
        return ErrorCode.BAD_USER_INPUT
    if isinstance(exc, (StoreError, DBAPIError)):
        return ErrorCode.STORE_UNAVAILABLE
    return ErrorCode.INTERNAL


def is_request_error(data: Any, errors: list[GraphQLError]) -> bool:
    """Whether an answer is a request error: no data, and no error raised at a field (every
    field error has a path)."""
    return data is None and bool(errors) and all(e.path is None for e in errors)


def graphql_response(data: Any, errors: list[GraphQLError]) -> dict[str, Any]:
    """The GraphQL response: a request error has no `data` entry (GraphQL spec, Response
    Format: "If an error was raised before execution begins, the data entry should not be
    present in the result"), a field error keeps it; every error coded."""
    coded_errors = [_coded(error) for error in errors]
    if is_request_error(data, coded_errors):
        return {"errors": [error.formatted for error in coded_errors]}
    return {"data": data, **({"errors": [e.formatted for e in coded_errors]}
                             if coded_errors else {})}


class ErrorCodes(SchemaExtension):
    """Gives every error of the result its `extensions.code`, and masks what is not the
    caller's to read (INTERNAL; STORE_UNAVAILABLE says only that, and how to check)."""

    def __init__(self) -> None:
        self.executing = False

    def on_execute(self) -> Iterator[None]:
        self.executing = True  # validation passed: a pathless error now is a variable's
        yield

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        if result is None or not result.errors:
            return
        result.errors = [_coded(error, self.executing) for error in result.errors]


def masked_message(error: GraphQLError, code: ErrorCode) -> str | None:
    """What the caller reads instead of the message: None to read the message (GraphQL's
    own, the query layer's, graphql-core's on a value it cannot complete)."""
    if code is ErrorCode.STORE_UNAVAILABLE:
        return STORE_UNAVAILABLE_MESSAGE
    original = error.original_error
    if code is ErrorCode.INTERNAL and original is not None and not isinstance(
            original, GraphQLError):
        return INTERNAL_MESSAGE
    return None


def _coded(error: GraphQLError, executing: bool = False) -> GraphQLError:
    code = code_of(error, executing)
    masked = masked_message(error, code)
    message = error.message if masked is None else masked
    if code is ErrorCode.STORE_UNAVAILABLE and error.original_error is not None:
        # One line at warning level, no traceback: the store, not this code, failed.
        logger.warning("GraphQL: %s: %s", STORE_UNAVAILABLE_MESSAGE,
                       " ".join(str(error.original_error).split())[:500])
    if message == error.message and (error.extensions or {}).get("code") == code.name:
        return error
    return GraphQLError(message, nodes=error.nodes, source=error.source,
                        positions=error.positions, path=error.path,
                        original_error=error.original_error if masked is None else None,
                        extensions={**(error.extensions or {}), "code": code.name})
