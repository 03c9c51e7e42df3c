"""Fuzz /graphql with queries schemathesis generates from the reviewed SDL file: no 500s."""

from __future__ import annotations

from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from starlette.testclient import TestClient

SDL_PATH = Path(__file__).resolve().parents[2] / "graphql" / "schema.graphql"
schema = schemathesis.graphql.from_path(SDL_PATH)


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=50, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_generated_queries_never_fail_the_server(case: schemathesis.Case,
                                                 client: TestClient) -> None:
    response = client.post("/graphql", json={"query": case.body})
    assert response.status_code < 500, response.text
    body = response.json()
    assert "data" in body or "errors" in body
    for error in body.get("errors", []):
        assert error["message"] != "Internal error.", (case.body, error)
