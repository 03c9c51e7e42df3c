"""Lists sorted by any column they show (`order: CODE_ASC`, `CORPUS_DESC`, ...), keyset paged
on that column, ties in append order, records without a value last — on both backends.

The `journal_db` store (tests/conftest.py); expected values from spec_values and
spec_surfaces (the example files), written out.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from graphql_requests import graphql_data, graphql_errors
from spec_values import CODES_IN_APPEND_ORDER, MISSING_ROLE_CODES
from starlette.testclient import TestClient
from turn_data import journal_entry, journal_line

from store.api.app import create_app
from store.db.audit_store import AuditStore

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
     "NEWEST_FIRST, ID_ASC, ID_DESC, ORGAN_ASC, ORGAN_DESC, RUNNABLE_ASC, RUNNABLE_DESC, "
     "PROBLEM_TEXT_ASC, PROBLEM_TEXT_DESC"),
    ("{ turns(order: PROBLEM_TEXT_ASC) { totalCount } }",
     "order: PROBLEM_TEXT_ASC sorts by a column turns do not have; one of OLDEST_FIRST, "
     "NEWEST_FIRST, TIME_ASC, TIME_DESC, RANK, ID_ASC, ID_DESC, GROUNDING_SOURCE_ASC, "
     "GROUNDING_SOURCE_DESC, TURN_ID_ASC, TURN_ID_DESC, EPISTEMIC_STATE_ASC, "
     "EPISTEMIC_STATE_DESC, CLEARANCE_ASC, CLEARANCE_DESC, SURFACE_ID_ASC, SURFACE_ID_DESC, "
     "PROMPT_ASC, PROMPT_DESC"),
    ("{ batches(order: PROMPT_DESC) { totalCount } }",
     "order: PROMPT_DESC sorts by a column batches do not have; one of OLDEST_FIRST, "
     "NEWEST_FIRST, SOURCE_ASC, SOURCE_DESC, RECORD_TYPE_ASC, RECORD_TYPE_DESC, NEW_ROWS_ASC, "
     "NEW_ROWS_DESC, PRESENT_ROWS_ASC, PRESENT_ROWS_DESC, INGESTED_AT_ASC, INGESTED_AT_DESC"),
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


# A hand-made store (both backends) for the text columns: texts whose byte order (of their
# UTF-8) differs from a language's ("B" before "a", "_" between upper and lower case, "é"
# after "z"), each once as an assessment's problem text, a turn's prompt and a surface's text.
TEXTS = ["zebra", "Apples", "émigré", "_under", "Zebra", "apples"]
IN_BYTE_ORDER = ["Apples", "Zebra", "_under", "apples", "zebra", "émigré"]


def _frame(text: str | None, runnable: bool) -> bytes:
    """One assessment, in the problem `text` (None: a frame without one)."""
    line: dict[str, Any] = {"source_ref": f"hand:{text}", "contract_assessments": [{
        "candidate_organ": f"organ_{(text or 'none')[:1]}",
        "missing_bindings": [] if runnable else ["x_unbound"], "unresolved_hazards": [],
        "runnable": runnable,
        "explanation": "runnable" if runnable else
        "diagnostic candidate is not runnable: x_unbound", "evidence_spans": []}]}
    if text is not None:
        line["problem_text"] = text
    return json.dumps(line).encode() + b"\n"


@pytest.fixture
def texts_client(backend_url: str) -> Iterator[TestClient]:
    """Batch 1 (frames-b.jsonl): seven assessments, the texts' in TEXTS' order then one with
    no problem text; runnable: the 1st, 3rd, 5th and 7th. Batch 2 (A-journal.jsonl): six
    turns, prompts in TEXTS' order, each emitting the surface "surface <prompt>"."""
    with AuditStore.open(backend_url) as store:
        store.ingest([_frame(text, index % 2 == 0) for index, text in
                      enumerate([*TEXTS, None])], source="frames-b.jsonl")
        store.ingest([journal_line(journal_entry(n, text, f"surface {text}", "none")).encode()
                      + b"\n" for n, text in enumerate(TEXTS, start=1)],
                     source="A-journal.jsonl")
    db = AuditStore.open(backend_url, read_only=True)
    app = create_app(db, close_db_on_shutdown=False)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            yield client
    finally:
        db.close()


def pages_both_ways(client: TestClient, list_field: str, value: str, order: str,
                    size: int) -> tuple[list[Any], list[Any]]:
    """The whole list's `value`s read forwards and backwards (last/before), `size` rows a
    page."""
    query = (f"query($order: Order!, $first: Int, $after: String, $last: Int, "
             f"$before: String) {{ {list_field}(order: $order, first: $first, after: $after, "
             f"last: $last, before: $before) {{ pageInfo {{ hasNextPage hasPreviousPage "
             f"startCursor endCursor }} nodes {{ {value} }} }} }}")
    forwards = flat(walk(client, query, list_field, value, size, order=order))
    backwards: list[list[Any]] = []
    before = None
    while True:
        found = graphql_data(client, query, order=order, last=size, before=before)[list_field]
        backwards.insert(0, [node[value] for node in found["nodes"]])
        if not found["pageInfo"]["hasPreviousPage"]:
            return forwards, flat(backwards)
        before = found["pageInfo"]["startCursor"]


@pytest.mark.parametrize(("list_field", "value", "order", "expected"), [
    ("assessments", "problemText", "PROBLEM_TEXT_ASC", [*IN_BYTE_ORDER, None]),
    ("assessments", "problemText", "PROBLEM_TEXT_DESC",
     [*IN_BYTE_ORDER[::-1], None]),
    # False before true; ties in append order (TEXTS), newest first when descending.
    ("assessments", "problemText", "RUNNABLE_ASC",
     ["Apples", "_under", "apples", "zebra", "émigré", "Zebra", None]),
    ("assessments", "problemText", "RUNNABLE_DESC",
     [None, "Zebra", "émigré", "zebra", "apples", "_under", "Apples"]),
    # Organs organ_<first character>, the one without a text organ_n.
    ("assessments", "candidateOrgan", "ORGAN_ASC",
     ["organ_A", "organ_Z", "organ__", "organ_a", "organ_n", "organ_z", "organ_\u00e9"]),
    ("turns", "prompt", "PROMPT_ASC", IN_BYTE_ORDER),
    ("turns", "prompt", "PROMPT_DESC", IN_BYTE_ORDER[::-1]),
    ("surfaces", "surface", "TEXT_ASC", [f"surface {t}" for t in IN_BYTE_ORDER]),
    ("surfaces", "surface", "TEXT_DESC",
     [f"surface {t}" for t in IN_BYTE_ORDER[::-1]]),
    ("batches", "source", "SOURCE_ASC", ["A-journal.jsonl", "frames-b.jsonl"]),
    ("batches", "source", "SOURCE_DESC", ["frames-b.jsonl", "A-journal.jsonl"]),
    ("batches", "recordType", "RECORD_TYPE_DESC", ["turns", "assessments"]),
    # Batch 1 stored 7 assessments, 3 residuals, 3 occurrences (13); batch 2 six turns, six
    # surfaces, six sightings (18).
    ("batches", "newRows", "NEW_ROWS_DESC", [18, 13]),
    ("batches", "newRows", "NEW_ROWS_ASC", [13, 18]),
    ("batches", "batchId", "PRESENT_ROWS_DESC", [2, 1]),  # ties: newest first
    ("batches", "batchId", "INGESTED_AT_ASC", [1, 2]),
])
def test_every_column_shown_sorts_and_pages_in_byte_order(
        texts_client: TestClient, list_field: str, value: str, order: str,
        expected: list[Any]) -> None:
    for size in (1, 2, 4):
        forwards, backwards = pages_both_ways(texts_client, list_field, value, order, size)
        assert forwards == backwards == expected, size


def test_a_boolean_cursor_holds_0_or_1(texts_client: TestClient) -> None:
    query = "{ assessments(order: RUNNABLE_DESC, first: 1) { pageInfo { endCursor } } }"
    cursor = graphql_data(texts_client, query)["assessments"]["pageInfo"]["endCursor"]
    assert json.loads(base64.urlsafe_b64decode(cursor)) == ["runnable_desc", 0, 1, 13]


@pytest.mark.parametrize(("list_field", "order", "key"), [
    ("turns", "TURN_ID_ASC", [0, "x", 1]),  # a text for a number
    ("assessments", "RUNNABLE_ASC", [0, 7, 1]),  # a boolean is 0 or 1
    ("assessments", "PROBLEM_TEXT_ASC", [0, 5, 1]),  # a number for a text
    ("batches", "NEW_ROWS_DESC", [0, "x", 1]),
])
def test_a_cursor_value_of_another_kind_is_refused(texts_client: TestClient, list_field: str,
                                                   order: str, key: list[Any]) -> None:
    # A forged cursor: PostgreSQL would refuse the comparison (integer > text) as an error.
    cursor = base64.urlsafe_b64encode(json.dumps([order.lower(), *key]).encode()).decode()
    query = f"{{ {list_field}(order: {order}, after: \"{cursor}\") {{ totalCount }} }}"
    assert graphql_errors(texts_client, query) == [
        "after: malformed cursor (use an endCursor or cursor value)"]
