"""Ordering, backwards pages, ranges and as-of reads over GraphQL, on both backends.

The `journal_db` store (tests/conftest.py): tree heads 18, 37, 66, 83 (spec_values.HEADS).
"""

from __future__ import annotations

from typing import Any

import pytest
from graphql_requests import graphql_data, graphql_errors
from spec_surfaces import LIGHT_ID
from spec_values import (
    CODES_IN_APPEND_ORDER,
    CODES_MOST_SEEN,
    CODES_OF_BATCH_1,
    DELTA_QUANTITY_ID,
    FACETS_BATCH_1,
    HEADS,
    facet,
    graphql_facets,
)
from starlette.testclient import TestClient

PAGE = """
query Page($order: Order!, $first: Int, $after: String, $last: Int, $before: String) {
  residuals(order: $order, first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { residualCode occurrenceCount } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}
"""


def page(client: TestClient, **variables: Any) -> tuple[list[str], dict[str, Any]]:
    found = graphql_data(client, PAGE, **variables)["residuals"]
    info = found["pageInfo"]
    edges = found["edges"]
    assert info["startCursor"] == (edges[0]["cursor"] if edges else None)
    assert info["endCursor"] == (edges[-1]["cursor"] if edges else None)
    return [edge["node"]["residualCode"] for edge in edges], info


def test_most_seen_forwards_then_back(journal_client: TestClient) -> None:
    first, info = page(journal_client, order="MOST_SEEN", first=2)
    assert first == CODES_MOST_SEEN[:2] == ["delta_quantity_unbound", "action_cue_unbound"]
    assert (info["hasPreviousPage"], info["hasNextPage"]) == (False, True)
    second, info2 = page(journal_client, order="MOST_SEEN", first=2, after=info["endCursor"])
    assert second == CODES_MOST_SEEN[2:4]
    assert (info2["hasPreviousPage"], info2["hasNextPage"]) == (True, True)
    back, info3 = page(journal_client, order="MOST_SEEN", last=2, before=info2["startCursor"])
    assert back == first
    assert (info3["hasPreviousPage"], info3["hasNextPage"]) == (False, True)


def test_newest_first_and_the_last_rows(journal_client: TestClient) -> None:
    newest, info = page(journal_client, order="NEWEST_FIRST", first=3)
    assert newest == ["unbound_base_quantity", "inverse_topology_unlicensed",
                      "original_whole_unbound"]
    assert (info["hasPreviousPage"], info["hasNextPage"]) == (False, True)
    last, info = page(journal_client, order="OLDEST_FIRST", last=3)
    assert last == CODES_IN_APPEND_ORDER[-3:]
    assert (info["hasPreviousPage"], info["hasNextPage"]) == (True, False)


def test_nested_sightings_in_either_order(journal_client: TestClient) -> None:
    found = graphql_data(journal_client, """query($id: ID!) { residual(id: $id) {
        newest: occurrences(order: NEWEST_FIRST) { totalCount nodes { problemText } }
        last: occurrences(last: 1) { nodes { problemText } pageInfo { hasPreviousPage } }
    } }""", id=DELTA_QUANTITY_ID)["residual"]
    assert [n["problemText"] for n in found["newest"]["nodes"]] == [
        "Sam gained pears.", "Tom gained apples."]
    assert found["newest"]["totalCount"] == 2
    assert [n["problemText"] for n in found["last"]["nodes"]] == ["Sam gained pears."]
    assert found["last"]["pageInfo"]["hasPreviousPage"] is True


@pytest.mark.parametrize(("query", "message"), [
    ("{ residuals(first: 2, last: 2) { totalCount } }",
     "first and last: give one of them, not both (first pages forwards from `after`, last "
     "backwards from `before`)"),
    ("{ residuals(last: 501) { totalCount } }", "last: must be between 0 and 500, got 501"),
    ("{ turns(order: MOST_SEEN) { totalCount } }",
     "order: MOST_SEEN orders records by their sightings, which turns do not have; use "
     "OLDEST_FIRST or NEWEST_FIRST"),
    ("{ assessments(order: MOST_SEEN) { totalCount } }",
     "order: MOST_SEEN orders records by their sightings, which assessments do not have; use "
     "OLDEST_FIRST or NEWEST_FIRST"),
    ("{ residuals(asOf: 20) { totalCount } }",
     "asOf: 20 is not a tree size this store recorded (one per batch); the nearest are 18 "
     "(after batch 1) and 37 (after batch 2)"),
    ("{ ledger(asOf: 99) { treeSize } }",
     "asOf: 99 is past the newest tree head, 83 (after batch 4)"),
    ("{ residualFacets(filter: {batchIdFrom: -1}) { total } }",
     "batchIdFrom: must be between 0 and 9223372036854775807, got -1"),
])
def test_refusals_name_the_argument(journal_client: TestClient, query: str, message: str) -> None:
    assert graphql_errors(journal_client, query) == [message]


def test_a_cursor_from_another_order_is_refused(journal_client: TestClient) -> None:
    _, info = page(journal_client, order="NEWEST_FIRST", first=1)
    assert graphql_errors(journal_client, PAGE, order="MOST_SEEN", first=1,
                          after=info["endCursor"]) == [
        "after: this cursor pages the NEWEST_FIRST order, not MOST_SEEN: use a cursor from a "
        "page in the same order"]


def test_a_malformed_ingest_time_is_a_graphql_error(journal_client: TestClient) -> None:
    [message] = graphql_errors(journal_client, "{ residuals(filter: "
                                               "{ingestedFrom: \"last tuesday\"}) { totalCount } }")
    assert "DateTime" in message and "last tuesday" in message
    [message] = graphql_errors(journal_client, "query($t: DateTime) { surfaces(filter: "
                                               "{ingestedTo: $t}) { totalCount } }", t="2026-13-01")
    assert "DateTime" in message and "2026-13-01" in message


def test_ranges_in_filters(journal_client: TestClient) -> None:
    batches = graphql_data(journal_client,
                           "{ batches { nodes { batchId ingestedAt } } }")["batches"]
    at = {b["batchId"]: b["ingestedAt"] for b in batches["nodes"]}
    found = graphql_data(journal_client, """query($at3: DateTime, $at4: DateTime) {
        second: residuals(filter: {batchIdFrom: 2, batchIdTo: 2}) {
            totalCount nodes { residualCode } }
        secondFacets: residualFacets(filter: {batchIdFrom: 2, batchIdTo: 2}) {
            total occurrences }
        third: surfaces(filter: {ingestedFrom: $at3, ingestedTo: $at3}) { totalCount }
        journal: turns(filter: {ingestedFrom: $at4}) { totalCount }
        upToThird: assessments(filter: {ingestedTo: $at3}) { totalCount }
    }""", at3=at[3], at4=at[4])
    assert found["second"]["totalCount"] == 6
    assert [n["residualCode"] for n in found["second"]["nodes"]] == CODES_IN_APPEND_ORDER[6:]
    assert found["secondFacets"] == {"total": 6, "occurrences": 7}
    assert found["third"]["totalCount"] == 12
    assert found["journal"]["totalCount"] == 6
    assert found["upToThird"]["totalCount"] == 10


AS_OF = """
query($asOf: LogIndex, $delta: ID!, $light: ID!) {
  residuals(asOf: $asOf) {
    totalCount
    nodes { residualCode occurrenceCount occurrences { totalCount nodes { problemText } } }
  }
  residualFacets(asOf: $asOf) { total occurrences byKind { value count occurrences } }
  assessments(asOf: $asOf) {
    totalCount nodes { sourceRef residuals { residualCode occurrenceCount } }
  }
  batches(asOf: $asOf) { totalCount nodes { batchId } }
  delta: residual(id: $delta, asOf: $asOf) {
    occurrenceCount inclusionProof { treeSize leafIndex }
  }
  light: surface(id: $light, asOf: $asOf) {
    occurrenceCount occurrences { nodes { sessionId } }
  }
  surfaces(asOf: $asOf) { totalCount }
  surfaceFacets(asOf: $asOf) { total occurrences }
  turns(asOf: $asOf) { totalCount }
  turnFacets(asOf: $asOf) { total }
  ledger(asOf: $asOf) { treeSize }
}
"""


def test_as_of_the_first_head_is_the_first_batch_world(journal_client: TestClient) -> None:
    found = graphql_data(journal_client, AS_OF, asOf=HEADS[1], delta=DELTA_QUANTITY_ID,
                         light=LIGHT_ID)
    residuals = found["residuals"]
    assert residuals["totalCount"] == 6
    assert [n["residualCode"] for n in residuals["nodes"]] == CODES_OF_BATCH_1
    assert [n["occurrenceCount"] for n in residuals["nodes"]] == [1] * 6
    delta = residuals["nodes"][3]
    assert delta["occurrences"] == {"totalCount": 1,
                                    "nodes": [{"problemText": "Tom gained apples."}]}
    assert found["residualFacets"] == graphql_facets(
        {key: FACETS_BATCH_1[key] for key in ("total", "occurrences", "byKind")})
    assessments = found["assessments"]
    assert assessments["totalCount"] == 5
    assert assessments["nodes"][1] == {
        "sourceRef": "adr-0225:example-b",
        "residuals": [{"residualCode": "delta_quantity_unbound", "occurrenceCount": 1}]}
    assert found["batches"] == {"totalCount": 1, "nodes": [{"batchId": 1}]}
    # Its proof defaults to the head it was read at. Leaves 0-6 are example a (its assessment,
    # 3 residuals, 3 sightings), 7 is example b's assessment, 8 its residual.
    assert found["delta"] == {"occurrenceCount": 1,
                              "inclusionProof": {"treeSize": 18, "leafIndex": 8}}
    assert found["light"] is None  # not stored yet
    assert found["surfaces"] == {"totalCount": 0}
    assert found["surfaceFacets"] == {"total": 0, "occurrences": 0}
    assert (found["turns"], found["turnFacets"]) == ({"totalCount": 0}, {"total": 0})
    assert found["ledger"] == {"treeSize": 18}


def test_as_of_the_third_head_and_now(journal_client: TestClient) -> None:
    then = graphql_data(journal_client, AS_OF, asOf=HEADS[3], delta=DELTA_QUANTITY_ID,
                        light=LIGHT_ID)
    now = graphql_data(journal_client, AS_OF, delta=DELTA_QUANTITY_ID, light=LIGHT_ID)
    assert then["delta"]["occurrenceCount"] == now["delta"]["occurrenceCount"] == 2
    assert then["delta"]["inclusionProof"]["treeSize"] == 66
    assert now["delta"]["inclusionProof"]["treeSize"] == 83
    assert then["light"] == {"occurrenceCount": 2, "occurrences": {
        "nodes": [{"sessionId": "eval-a"}, {"sessionId": "eval-b"}]}}
    assert now["light"]["occurrenceCount"] == 3
    assert then["surfaceFacets"] == {"total": 12, "occurrences": 16}
    assert now["surfaceFacets"] == {"total": 16, "occurrences": 22}
    assert (then["turns"]["totalCount"], now["turns"]["totalCount"]) == (0, 6)
    assert then["residualFacets"]["byKind"][0] == facet("MISSING_ROLE", 8, 9)
    assert then["ledger"] == {"treeSize": 66}
    assert now["ledger"] == {"treeSize": 83}


def test_turns_as_of_their_batch(journal_client: TestClient) -> None:
    turns = graphql_data(journal_client, "{ turns(first: 1) { nodes { turnKey } } }")["turns"]
    key = turns["nodes"][0]["turnKey"]
    query = """query($key: ID!, $asOf: LogIndex) { turn(id: $key, asOf: $asOf) {
        turnId surface { subject occurrenceCount } inclusionProof { treeSize } } }"""
    assert graphql_data(journal_client, query, key=key, asOf=HEADS[3])["turn"] is None
    assert graphql_data(journal_client, query, key=key, asOf=HEADS[4])["turn"] == {
        "turnId": 1, "surface": {"subject": "light", "occurrenceCount": 3},
        "inclusionProof": {"treeSize": 83}}
