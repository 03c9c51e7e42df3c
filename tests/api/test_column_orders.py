"""Lists sorted by any column they show (`order: CODE_ASC`, `CORPUS_DESC`, ...), keyset paged
on that column, ties in append order, records without a value last — on both backends.

The `journal_db` store (tests/conftest.py); expected values from spec_values and
spec_surfaces (the example files), written out.
"""

from __future__ import annotations

from typing import Any

import pytest
from graphql_requests import graphql_data, graphql_errors
from spec_values import CODES_IN_APPEND_ORDER, MISSING_ROLE_CODES
from starlette.testclient import TestClient

RESIDUALS = """query($order: Order!, $first: Int, $after: String, $last: Int, $before: String) {
  residuals(order: $order, first: $first, after: $after, last: $last, before: $before) {
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    nodes { residualCode } } }"""

# By kind (contract_gap_unclassified, missing_role, unit_object_conflict,
# unsupported_topology), ties in append order.
CODES_BY_KIND = ["unbound_base_quantity", *MISSING_ROLE_CODES, "unit_object_conflict",
                 "passive_voice_unsupported", "inverse_topology_unlicensed"]


def flat(pages: list[list[Any]]) -> list[Any]:
    return [value for page in pages for value in page]


def walk(client: TestClient, query: str, field: str, value: str, size: int,
         **variables: Any) -> list[list[Any]]:
    """Every page of a list, forwards, each as its nodes' `value`s."""
    pages, after = [], None
    while True:
        found = graphql_data(client, query, first=size, after=after, **variables)[field]
        pages.append([node[value] for node in found["nodes"]])
        if not found["pageInfo"]["hasNextPage"]:
            return pages
        after = found["pageInfo"]["endCursor"]


def test_residuals_by_code_both_ways(journal_client: TestClient) -> None:
    pages = walk(journal_client, RESIDUALS, "residuals", "residualCode", 5, order="CODE_ASC")
    assert pages == [sorted(CODES_IN_APPEND_ORDER)[:5], sorted(CODES_IN_APPEND_ORDER)[5:10],
                     ["unbound_base_quantity", "unit_object_conflict"]]
    assert pages[0][:2] == ["action_cue_unbound", "base_quantity_unbound"]
    down = walk(journal_client, RESIDUALS, "residuals", "residualCode", 7, order="CODE_DESC")
    assert flat(down) == sorted(CODES_IN_APPEND_ORDER, reverse=True)


def test_ties_of_a_column_go_in_append_order_across_pages(journal_client: TestClient) -> None:
    pages = walk(journal_client, RESIDUALS, "residuals", "residualCode", 4, order="KIND_ASC")
    assert pages == [CODES_BY_KIND[:4], CODES_BY_KIND[4:8], CODES_BY_KIND[8:]]
    down = flat(walk(journal_client, RESIDUALS, "residuals", "residualCode", 5,
                    order="KIND_DESC"))
    # Descending by kind, ties newest first.
    assert down == ["inverse_topology_unlicensed", "passive_voice_unsupported",
                    "unit_object_conflict", *reversed(MISSING_ROLE_CODES),
                    "unbound_base_quantity"]


def test_a_page_backwards_from_a_column_cursor(journal_client: TestClient) -> None:
    second = graphql_data(journal_client, RESIDUALS, order="KIND_ASC", first=4,
                          after=graphql_data(journal_client, RESIDUALS, order="KIND_ASC",
                                             first=4)["residuals"]["pageInfo"]["endCursor"])
    info = second["residuals"]["pageInfo"]
    assert (info["hasPreviousPage"], info["hasNextPage"]) == (True, True)
    back = graphql_data(journal_client, RESIDUALS, order="KIND_ASC", last=4,
                        before=info["startCursor"])["residuals"]
    assert [n["residualCode"] for n in back["nodes"]] == CODES_BY_KIND[:4]
    assert back["pageInfo"]["hasPreviousPage"] is False


SURFACES = """query($order: Order!, $first: Int, $after: String) {
  surfaces(order: $order, first: $first, after: $after, filter: {batchIdTo: 3}) {
    pageInfo { hasNextPage endCursor } nodes { corpusId subject } } }"""


def test_surfaces_without_a_corpus_come_last_either_way(journal_client: TestClient) -> None:
    # spec_surfaces.SURFACE_FACETS_ALL["byCorpus"]: v1 4, v2 1, none 7.
    up = flat(walk(journal_client, SURFACES, "surfaces", "corpusId", 3, order="CORPUS_ASC"))
    assert up == ["cognition_chains_v1"] * 4 + ["cognition_chains_v2"] + [None] * 7
    down = flat(walk(journal_client, SURFACES, "surfaces", "corpusId", 3, order="CORPUS_DESC"))
    assert down == ["cognition_chains_v2"] + ["cognition_chains_v1"] * 4 + [None] * 7
    # The seven without a corpus, ties as the order goes: in append order
    # (spec_surfaces.SURFACES), newest first when descending.
    untaught = ["correction", "knowledge", "memory", "memory", "glimmerwort", "knowledge",
                "light"]
    for order, expected in (("CORPUS_ASC", untaught), ("CORPUS_DESC", untaught[::-1])):
        subjects = flat(walk(journal_client, SURFACES, "surfaces", "subject", 5, order=order))
        assert subjects[5:] == expected


@pytest.mark.parametrize(("query", "message"), [
    ("{ residuals(order: SURFACE_ID_ASC) { totalCount } }",
     "order: SURFACE_ID_ASC sorts by a column residuals do not have; one of OLDEST_FIRST, "
     "NEWEST_FIRST, MOST_SEEN, RANK, ID_ASC, ID_DESC, KIND_ASC, KIND_DESC, AXIS_ASC, AXIS_DESC, "
     "ORGAN_ASC, ORGAN_DESC, CODE_ASC, CODE_DESC"),
    ("{ assessments(order: CODE_ASC) { totalCount } }",
     "order: CODE_ASC sorts by a column assessments do not have; one of OLDEST_FIRST, "
     "NEWEST_FIRST"),
    ("{ residuals(first: 1) { nodes { occurrences(order: SURFACE_ID_ASC) { totalCount } } } }",
     "order: SURFACE_ID_ASC orders by a column occurrences are not sorted by; use "
     "OLDEST_FIRST or NEWEST_FIRST"),
])
def test_a_column_a_list_does_not_have_is_refused(journal_client: TestClient, query: str,
                                                   message: str) -> None:
    assert graphql_errors(journal_client, query) == [message]


def test_a_cursor_of_another_column_is_refused(journal_client: TestClient) -> None:
    cursor = graphql_data(journal_client, RESIDUALS, order="CODE_ASC",
                          first=1)["residuals"]["pageInfo"]["endCursor"]
    assert graphql_errors(journal_client, RESIDUALS, order="KIND_ASC", after=cursor) == [
        "after: this cursor pages the CODE_ASC order, not KIND_ASC: use a cursor from a page "
        "in the same order"]


TURNS = """query($order: Order!, $first: Int, $after: String) {
  turns(order: $order, first: $first, after: $after) {
    pageInfo { hasNextPage endCursor } nodes { turnId epistemicState } } }"""


def test_turns_by_turn_id_and_by_epistemic_state(journal_client: TestClient) -> None:
    # The bundled journal's six turns, ids 1 to 6; turn 5 ("Why does zorp exist?") is
    # undetermined, the others decoded.
    down = flat(walk(journal_client, TURNS, "turns", "turnId", 4, order="TURN_ID_DESC"))
    assert down == [6, 5, 4, 3, 2, 1]
    states = graphql_data(journal_client, TURNS, order="EPISTEMIC_STATE_DESC",
                          first=6)["turns"]["nodes"]
    assert [(n["epistemicState"], n["turnId"]) for n in states] == [
        ("undetermined", 5), ("decoded", 6), ("decoded", 4), ("decoded", 3), ("decoded", 2),
        ("decoded", 1)]
