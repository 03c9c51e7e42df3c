"""GraphQL requests to the read API, as a client such as the Workbench sends them: a POST of
the query and its variables, and what the answer's body holds."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.testclient import TestClient

from store.api.execution import execute_operation
from store.db.audit_store import AuditStore

# docs/graphql.md#errors: every code an error may carry.
ERROR_CODES = {"BAD_REQUEST", "INVALID_REQUEST", "UNSUPPORTED_MEDIA_TYPE", "NOT_ACCEPTABLE",
               "NOT_FOUND", "FORBIDDEN_DOCUMENT", "GRAPHQL_PARSE_FAILED",
               "GRAPHQL_VALIDATION_FAILED", "OPERATION_NOT_DETERMINED", "BAD_USER_INPUT",
               "LIMIT_EXCEEDED", "BAD_CURSOR", "TIMEOUT", "STORE_UNAVAILABLE", "INTERNAL"}


def post_graphql(client: TestClient, query: str, **variables: Any) -> dict[str, Any]:
    """The answer's JSON body, as a legacy client (Accept: application/json) reads it: 200
    when it has data (errors or not), a 4xx request error without; each error coded."""
    response = client.post("/graphql", json={"query": query, "variables": variables},
                           headers={"accept": "application/json"})
    body = dict(response.json())
    assert response.status_code == (200 if "data" in body else 422) or (
        "data" not in body and response.status_code in (400, 403)), response.text
    assert all(error["extensions"]["code"] in ERROR_CODES
               for error in body.get("errors", [])), body
    return body


def graphql_data(client: TestClient, query: str, **variables: Any) -> dict[str, Any]:
    """The answer's data, for a query that must succeed."""
    body = post_graphql(client, query, **variables)
    assert "errors" not in body, body
    return dict(body["data"])


def error_messages(body: dict[str, Any]) -> list[str]:
    return [error["message"] for error in body.get("errors", [])]


def graphql_errors(client: TestClient, query: str, **variables: Any) -> list[str]:
    """The error messages, for a query that must fail."""
    body = post_graphql(client, query, **variables)
    assert "errors" in body, body
    return error_messages(body)


def run_on_store(url: str, document: str, **variables: Any) -> dict[str, Any]:
    """The GraphQL result of `document` on the store at `url` (read-only), in process."""
    with AuditStore.open(url, read_only=True) as store:
        return asyncio.run(execute_operation(store, document, variables or None, None))


def data_on_store(url: str, document: str, **variables: Any) -> dict[str, Any]:
    """Its data, asserting it has no errors."""
    result = run_on_store(url, document, **variables)
    assert result.get("errors") is None, result
    return result["data"]
