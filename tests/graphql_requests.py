"""GraphQL requests to the read API, as a client such as the Workbench sends them: a POST of
the query and its variables, and what the answer's body holds."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient


def post_graphql(client: TestClient, query: str, **variables: Any) -> dict[str, Any]:
    """The answer's JSON body; an answer with GraphQL errors has status 200 too."""
    response = client.post("/graphql", json={"query": query, "variables": variables})
    assert response.status_code == 200, response.text
    return dict(response.json())


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
