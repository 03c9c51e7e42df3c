"""Fuzz /graphql with queries schemathesis generates from the reviewed SDL file, and with
arbitrary bodies and variables: no 500s, no "Internal error."."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.graphql import nodes
from starlette.testclient import TestClient

SDL_PATH = Path(__file__).resolve().parents[2] / "graphql" / "schema.graphql"
# Tree sizes and leaf indexes: in range, at its ends, and past them (a validation error).
schemathesis.graphql.scalar("LogIndex", st.integers(-(2**60), 2**60).map(nodes.Int))
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


FUZZ_SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                         suppress_health_check=[HealthCheck.function_scoped_fixture])
# Any code point, lone surrogates (JSON can carry them as "\ud800" escapes) and NUL often.
# (A list of characters, not st.text: text() merges its alphabet and drowns the three.)
ANY_TEXT = st.lists(st.sampled_from("\ud800\udc00\x00") | st.characters(exclude_categories=()),
                    max_size=12).map("".join)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=12)
CURSORS = st.one_of(ANY_TEXT, st.integers(-(10**40), 10**40).map(
    lambda n: base64.urlsafe_b64encode(f"seq:{n}".encode()).decode()))
EVERY_ARGUMENT = """query ($id: ID!, $first: Int, $after: String, $r: ResidualFilter,
                          $s: SurfaceFilter, $t: TurnFilter, $size: LogIndex! = 1) {
  residual(id: $id) { residualId occurrences(first: $first, after: $after) { totalCount } }
  surface(id: $id) { surfaceId }
  turn(id: $id) { turnId }
  assessment(id: $id) { assessmentId }
  residuals(filter: $r, first: $first, after: $after) { totalCount nodes { seq } }
  surfaces(filter: $s, first: $first, after: $after) { totalCount }
  turns(filter: $t, first: $first, after: $after) { totalCount }
  turnFacets(filter: $t) { total }
  ledger { consistencyProof(fromSize: $size) { first } }
}"""


def filters(*fields: str) -> st.SearchStrategy[dict[str, list[str]] | None]:
    """Filters of the right shape with any text: values that reach the SQL."""
    return st.none() | st.fixed_dictionaries({}, optional=dict.fromkeys(
        fields, st.lists(ANY_TEXT, max_size=2)))


def assert_no_internal_error(response: Any) -> None:
    assert response.status_code < 500, response.text
    assert response.headers["content-type"].startswith("application/json"), response.text
    for error in response.json().get("errors", []):
        assert error["message"] != "Internal error.", error


@pytest.mark.slow
@FUZZ_SETTINGS
@given(body=st.binary(max_size=64) | JSON_VALUES.map(lambda v: json.dumps(v).encode()))
def test_arbitrary_bodies_never_fail_the_server(client: TestClient, body: bytes) -> None:
    assert_no_internal_error(client.post("/graphql", content=body,
                                         headers={"content-type": "application/json"}))


def test_every_argument_runs_as_written(client: TestClient) -> None:
    # The fuzzed variables below reach the resolvers only while this document is valid.
    body = client.post("/graphql", json={"query": EVERY_ARGUMENT, "variables": {"id": "x"}})
    assert body.json()["data"]["residual"] is None and "errors" not in body.json()


@pytest.mark.slow
@FUZZ_SETTINGS
@given(variables=st.fixed_dictionaries({"id": ANY_TEXT}, optional={
    "first": st.none() | st.integers(-10, 600), "after": st.none() | CURSORS,
    "r": filters("organ", "familyId", "code"), "s": filters("subject", "corpusId", "intent"),
    "t": filters("epistemicState", "corpusId", "chainId"),
    "size": st.integers(-(2**31), 2**31 - 1)}))
def test_arbitrary_variables_never_fail_the_server(client: TestClient,
                                                   variables: dict[str, Any]) -> None:
    body = json.dumps({"query": EVERY_ARGUMENT, "variables": variables})
    assert_no_internal_error(client.post("/graphql", content=body,
                                         headers={"content-type": "application/json"}))
