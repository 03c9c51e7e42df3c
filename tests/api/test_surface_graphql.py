"""Surfaces over GraphQL: filters and enums, paging, nodes and turns, facets, bad input."""

from __future__ import annotations

from typing import Any

import pytest
from graphql_requests import post_graphql
from spec_surfaces import (
    LIGHT_ID,
    LIGHT_NODE,
    LIGHT_TURNS,
    MISMATCH_ID,
    MISMATCH_NODE,
    NONE_ID,
    SURFACE_FACETS_ALL,
    SURFACES,
    TEACHING_FACETS,
    TOTAL_SURFACES,
    UNRESOLVABLE_ID,
    UNRESOLVABLE_NODE,
)
from spec_values import graphql_facets
from starlette.testclient import TestClient

from store.db.audit_store import AuditStore

GROUNDING_SOURCES = ["VAULT", "PACK", "TEACHING", "NONE", "PARTIAL", "OOV", "DEDUCTION",
                     "CURRICULUM"]

SURFACE_PAGE = """
query Page($filter: SurfaceFilter, $first: Int, $after: String) {
  surfaces(filter: $filter, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { cursor node { surfaceId } }
    nodes { groundingSource subject intent verification occurrenceCount }
  }
}"""

FACETS = """
query Facets($filter: SurfaceFilter) {
  surfaceFacets(filter: $filter) {
    total occurrences
    byGroundingSource { value count occurrences }
    byCorpus { value count occurrences }
    byIntent { value count occurrences }
    byVerification { value count occurrences }
  }
}"""


def page(client: TestClient, **variables: Any) -> dict[str, Any]:
    body = post_graphql(client, SURFACE_PAGE, **variables)
    assert "errors" not in body, body
    return body["data"]["surfaces"]


def rows(nodes: list[dict[str, Any]]) -> list[tuple[str, str, str, str, int]]:
    return [(n["groundingSource"], n["subject"], n["intent"], n["verification"],
             n["occurrenceCount"]) for n in nodes]


def test_the_enums_are_the_closed_sets(client: TestClient) -> None:
    body = post_graphql(client, """{
      g: __type(name: "GroundingSource") { enumValues { name } }
      v: __type(name: "SurfaceVerification") { enumValues { name } } }""")["data"]
    assert [e["name"] for e in body["g"]["enumValues"]] == GROUNDING_SOURCES
    assert [e["name"] for e in body["v"]["enumValues"]] == [
        "VERIFIED", "MISMATCH", "UNRESOLVABLE", "OTHER_FORM", "NOT_CHECKED"]


@pytest.mark.parametrize("source", GROUNDING_SOURCES)
def test_filter_by_grounding_source_returns_exactly_the_ingested_records(
    client: TestClient, source: str
) -> None:
    result = page(client, filter={"groundingSource": [source]})
    wanted = [tuple(e) for e in SURFACES if e.grounding_source == source]
    assert rows(result["nodes"]) == wanted
    assert result["totalCount"] == len(wanted) == (5 if source == "TEACHING" else 1)


@pytest.mark.parametrize(
    ("surface_filter", "wanted"),
    [
        ({"groundingSource": ["TEACHING"], "subject": ["knowledge"]},
         [SURFACES[1], SURFACES[6]]),
        ({"groundingSource": ["TEACHING", "PACK", "DEDUCTION"], "subject": ["knowledge"],
          "intent": ["cause", "definition"]}, [SURFACES[1], SURFACES[4], SURFACES[6]]),
        ({"groundingSource": ["TEACHING"], "corpusId": ["cognition_chains_v1"],
          "chainId": ["verification_memory_requires_recall"]}, [SURFACES[2]]),
        ({"verification": ["VERIFIED"]}, SURFACES[:3]),
        ({"verification": ["MISMATCH", "UNRESOLVABLE"]}, [SURFACES[6], SURFACES[7]]),
        ({"verification": ["NOT_CHECKED"], "subject": ["memory"]},
         [SURFACES[5], SURFACES[8]]),
        ({"verification": ["VERIFIED"], "groundingSource": ["VAULT"]}, []),
        ({"groundingSource": [], "verification": []}, SURFACES),
    ],
)
def test_combined_filters(client: TestClient, surface_filter: dict[str, list[str]],
                          wanted: list[tuple[str, str, str, str, int]]) -> None:
    result = page(client, filter=surface_filter)
    assert rows(result["nodes"]) == [tuple(e) for e in wanted]
    assert result["totalCount"] == len(wanted)


@pytest.mark.parametrize("first", [1, 2, 5, 12])
def test_paging_returns_every_surface_once(client: TestClient, first: int) -> None:
    seen: list[tuple[str, str, str, str, int]] = []
    ids: list[str] = []
    after = None
    while True:
        result = page(client, first=first, after=after)
        assert result["totalCount"] == TOTAL_SURFACES
        assert len(result["nodes"]) <= first
        assert result["pageInfo"]["endCursor"] == result["edges"][-1]["cursor"]
        seen.extend(rows(result["nodes"]))
        ids.extend(e["node"]["surfaceId"] for e in result["edges"])
        if not result["pageInfo"]["hasNextPage"]:
            break
        after = result["pageInfo"]["endCursor"]
    assert seen == [tuple(e) for e in SURFACES]
    assert len(set(ids)) == TOTAL_SURFACES
    assert ids[0] == LIGHT_ID and ids[3] == NONE_ID


NODE_FIELDS = """surfaceId groundingSource surface subject intent corpusId chainId
  chainProvenance packId packVersion connective object subjectDomains objectDomains
  verification expectedSurface occurrenceCount"""


def test_surface_by_id_with_its_turns(client: TestClient) -> None:
    body = post_graphql(client, f"""query One($id: ID!) {{ surface(id: $id) {{ {NODE_FIELDS}
        occurrences(first: 1) {{ totalCount pageInfo {{ hasNextPage endCursor }}
          nodes {{ sessionId turnId prompt batch {{ batchId source }} }} }} }} }}""",
                   id=LIGHT_ID)
    surface = body["data"]["surface"]
    first = surface.pop("occurrences")
    assert surface == LIGHT_NODE
    assert first["totalCount"] == 2 and first["pageInfo"]["hasNextPage"] is True
    rest = post_graphql(client, """query Rest($id: ID!, $after: String) { surface(id: $id) {
        occurrences(after: $after) { pageInfo { hasNextPage }
          nodes { sessionId turnId prompt batch { batchId source } } } } }""",
                   id=LIGHT_ID, after=first["pageInfo"]["endCursor"])
    second = rest["data"]["surface"]["occurrences"]
    assert second["pageInfo"]["hasNextPage"] is False
    turns = first["nodes"] + second["nodes"]
    assert [(t["sessionId"], t["turnId"], t["prompt"]) for t in turns] == LIGHT_TURNS
    assert {(t["batch"]["batchId"], t["batch"]["source"]) for t in turns} == {
        (3, "adr_0052_surfaces.jsonl")}


@pytest.mark.parametrize(("surface_id", "node"), [(MISMATCH_ID, MISMATCH_NODE),
                                                  (UNRESOLVABLE_ID, UNRESOLVABLE_NODE)])
def test_mismatch_and_unresolvable_nodes(client: TestClient, surface_id: str,
                                         node: dict[str, Any]) -> None:
    body = post_graphql(client, f"query One($id: ID!) {{ surface(id: $id) {{ {NODE_FIELDS} }} }}",
                        id=surface_id)
    surface = body["data"]["surface"]
    assert {key: surface[key] for key in node} == node
    assert (surface["groundingSource"], surface["occurrenceCount"]) == ("TEACHING", 1)


def test_none_record_has_no_surface_and_unknown_id_is_null(client: TestClient) -> None:
    body = post_graphql(client, """query Two($id: ID!) {
      none: surface(id: $id) { groundingSource surface verification occurrenceCount }
      missing: surface(id: "nope") { surfaceId } }""", id=NONE_ID)
    assert body == {"data": {
        "none": {"groundingSource": "NONE", "surface": None, "verification": "NOT_CHECKED",
                 "occurrenceCount": 2},
        "missing": None}}


def test_facets_over_graphql(client: TestClient) -> None:
    assert post_graphql(client, FACETS) == {"data": {
        "surfaceFacets": graphql_facets(SURFACE_FACETS_ALL)}}
    teaching = post_graphql(client, FACETS, filter={"groundingSource": ["TEACHING"]})
    assert teaching == {"data": {"surfaceFacets": graphql_facets(TEACHING_FACETS)}}
    chain = post_graphql(client, FACETS, filter={"chainId": ["cause_knowledge_requires_evidence"]})
    assert chain["data"]["surfaceFacets"]["byVerification"] == [
        {"value": "MISMATCH", "count": 1, "occurrences": 1},
        {"value": "VERIFIED", "count": 1, "occurrences": 2}]


def test_occurrence_counts_come_with_the_page_in_one_statement(client: TestClient,
                                                  example_db: AuditStore) -> None:
    from sqlalchemy import event

    statements: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    event.listen(example_db.engine, "before_cursor_execute", record)
    try:
        result = page(client)
    finally:
        event.remove(example_db.engine, "before_cursor_execute", record)
    assert [n["occurrenceCount"] for n in result["nodes"]] == [e.turns for e in SURFACES]
    selects = [s for s in statements if s.startswith("SELECT")]
    assert len(selects) == 2  # the page (each row with its count), totalCount
    assert "AS occurrence_count" in selects[0]


@pytest.mark.parametrize(
    ("query", "variables", "expected"),
    [
        ("{ surfaces(filter: {groundingSource: [LLM]}) { totalCount } }", {}, "LLM"),
        ('{ surfaces(filter: {groundingSource: ["teaching"]}) { totalCount } }', {},
         "GroundingSource"),
        ("{ surfaceFacets(filter: {verification: [BOGUS]}) { total } }", {}, "BOGUS"),
        ("query ($s: [GroundingSource!]) { surfaces(filter: {groundingSource: $s}) "
         "{ totalCount } }", {"s": ["teaching"]}, "teaching"),
        ("query ($f: SurfaceFilter) { surfaceFacets(filter: $f) { total } }",
         {"f": {"verification": ["WRONG"]}}, "WRONG"),
        ("{ surfaces(first: 501) { totalCount } }", {}, "between 0 and 500"),
        ('{ surfaces(after: "bogus") { totalCount } }', {}, "malformed cursor"),
        (f'{{ surface(id: "{LIGHT_ID}") {{ occurrences(after: "??") {{ totalCount }} }} }}', {},
         "malformed cursor"),
    ],
)
def test_bad_surface_requests_are_errors_not_500s(client: TestClient, query: str,
                                                  variables: dict[str, Any],
                                                  expected: str) -> None:
    response = client.post("/graphql", json={"query": query, "variables": variables})
    assert response.status_code in (200, 422), response.text
    messages = [error["message"] for error in response.json().get("errors", [])]
    assert any(expected.lower() in m.lower() for m in messages), messages
    assert "Internal error." not in messages
