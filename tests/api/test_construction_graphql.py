"""Construction evidence over GraphQL, on both backends: a journal turn's status, its
assessments and residuals; an assessment's turn; a residual's turns, as of each tree head.

The store: batch 1, a journal whose turn 1 carries recorded evidence (core-workbench.md §4),
turn 2 none, turn 3 another schema version; batch 2, ADR-0225 example A's frame (the same
residual ids); batch 3, a second journal whose turn 1 carries the same evidence. Ids are
written out in construction_data.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from construction_data import REFUSED_ID, RESIDUALS, RUNNABLE_ID, TURN_KEY, recorded_payload
from graphql_requests import graphql_data
from starlette.testclient import TestClient
from test_page_executor import server_app
from test_prepared_operations import answered  # noqa: F401  (a fixture)
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.api.app import create_app
from store.db.audit_store import AuditStore

REPO = Path(__file__).resolve().parents[2]
FIRST_JOURNAL = [
    journal_entry(1, "Tom gained 3.", DISCLOSURE, "none",
                  construction_evidence=recorded_payload()),
    journal_entry(2, "What is a pack?", "pack — a ratified lexicon.", "pack"),
    journal_entry(3, "Tom gained 3 degrees.", DISCLOSURE, "none",
                  construction_evidence=recorded_payload(schema_version="v0")),
]
SECOND_JOURNAL = [journal_entry(1, "Tom gained 3, again.", DISCLOSURE, "none",
                                timestamp="2026-07-31T09:00:00.000000+00:00",
                                construction_evidence=recorded_payload())]
EXAMPLE_A = (REPO / "examples" / "adr_0225_frames.jsonl").read_text(
    encoding="utf-8").splitlines()[0]
assert json.loads(EXAMPLE_A)["source_ref"] == "adr-0225:example-a"

TURN = """query($key: ID!, $asOf: LogIndex) { turn(id: $key, asOf: $asOf) {
  turnId constructionStatus constructionMissingReason
  assessments { assessmentId sourceRef problemText candidateOrgan runnable turn { turnKey } }
  residuals { residualId residualCode turns { totalCount nodes { turnId prompt } } } } }"""


FIRST_HEAD: list[int] = []


@pytest.fixture
def construction_db(backend_url: str) -> Iterator[AuditStore]:
    """The store above, read-only."""
    with AuditStore.open(backend_url) as store:
        store.ingest([journal_line(e) for e in FIRST_JOURNAL], source="journal.jsonl")
        FIRST_HEAD[:] = [store.tree_head().size]
        store.ingest([EXAMPLE_A], source="adr_0225_frames.jsonl")
        store.ingest([journal_line(e) for e in SECOND_JOURNAL], source="second.jsonl")
    with AuditStore.open(backend_url, read_only=True) as db:
        yield db


@pytest.fixture
def client(construction_db: AuditStore) -> Iterator[TestClient]:
    app = create_app(construction_db, close_db_on_shutdown=False)
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        yield test_client


def test_a_turn_links_its_assessments_and_residuals_and_back(client: TestClient) -> None:
    turn = graphql_data(client, TURN, key=TURN_KEY)["turn"]
    assert (turn["turnId"], turn["constructionStatus"], turn["constructionMissingReason"]) == (
        1, "RECORDED", None)
    assert turn["assessments"] == [
        {"assessmentId": REFUSED_ID, "sourceRef": TURN_KEY, "problemText": "Tom gained 3.",
         "candidateOrgan": "unary_delta_transition", "runnable": False,
         "turn": {"turnKey": TURN_KEY}},
        {"assessmentId": RUNNABLE_ID, "sourceRef": TURN_KEY, "problemText": "Tom gained 3.",
         "candidateOrgan": "quantity_entity_binding", "runnable": True,
         "turn": {"turnKey": TURN_KEY}},
    ]
    # Sorted by residual_id, as CORE orders a record's residuals; each lists both journals'
    # turns 1 (example A's frame is no turn).
    both = {"totalCount": 2, "nodes": [{"turnId": 1, "prompt": "Tom gained 3."},
                                       {"turnId": 1, "prompt": "Tom gained 3, again."}]}
    assert turn["residuals"] == [
        {"residualId": RESIDUALS["direction_unbound"], "residualCode": "direction_unbound",
         "turns": both},
        {"residualId": RESIDUALS["action_cue_unbound"], "residualCode": "action_cue_unbound",
         "turns": both},
        {"residualId": RESIDUALS["changed_object_unbound"],
         "residualCode": "changed_object_unbound", "turns": both},
    ]


def test_as_of_the_first_head_a_residual_has_one_turn(client: TestClient) -> None:
    # Batch 1: 3 turns, 2 surfaces and 3 sightings, 2 statuses, 2 assessments, 3 residuals
    # and their 3 sightings, 2 links, its own row.
    assert FIRST_HEAD == [21]
    turn = graphql_data(client, TURN, key=TURN_KEY, asOf=21)["turn"]
    assert [r["turns"]["totalCount"] for r in turn["residuals"]] == [1, 1, 1]


def test_turns_without_recorded_evidence_say_why(client: TestClient) -> None:
    data = graphql_data(client, """{ turns(filter: {batchIdFrom: 1, batchIdTo: 1}) { nodes {
        turnId constructionStatus constructionMissingReason assessments { assessmentId }
        residuals { residualId } } } }""")
    assert data["turns"]["nodes"] == [
        {"turnId": 1, "constructionStatus": "RECORDED", "constructionMissingReason": None,
         "assessments": [{"assessmentId": REFUSED_ID}, {"assessmentId": RUNNABLE_ID}],
         "residuals": [{"residualId": RESIDUALS["direction_unbound"]},
                       {"residualId": RESIDUALS["action_cue_unbound"]},
                       {"residualId": RESIDUALS["changed_object_unbound"]}]},
        {"turnId": 2, "constructionStatus": "MISSING_EVIDENCE",
         "constructionMissingReason": "construction_evidence_not_persisted",
         "assessments": [], "residuals": []},
        {"turnId": 3, "constructionStatus": "MISSING_EVIDENCE",
         "constructionMissingReason": "construction_evidence_unsupported_schema_version: 'v0'",
         "assessments": [], "residuals": []},
    ]


def test_a_frames_assessment_has_no_turn(client: TestClient) -> None:
    data = graphql_data(client, """{ assessments(filter: {batchIdFrom: 2, batchIdTo: 2}) {
        nodes { sourceRef turn { turnKey } } } }""")
    assert data["assessments"]["nodes"] == [{"sourceRef": "adr-0225:example-a", "turn": None}]


def test_a_residuals_turns_page(client: TestClient) -> None:
    query = """query($id: ID!, $after: String) { residual(id: $id) {
        turns(first: 1, after: $after) { totalCount pageInfo { hasNextPage endCursor }
                                         nodes { prompt batchId } } } }"""
    rid = RESIDUALS["changed_object_unbound"]
    first = graphql_data(client, query, id=rid)["residual"]["turns"]
    assert first["totalCount"] == 2 and first["pageInfo"]["hasNextPage"] is True
    assert first["nodes"] == [{"prompt": "Tom gained 3.", "batchId": 1}]
    second = graphql_data(client, query, id=rid,
                          after=first["pageInfo"]["endCursor"])["residual"]["turns"]
    assert second["nodes"] == [{"prompt": "Tom gained 3, again.", "batchId": 3}]
    assert second["pageInfo"]["hasNextPage"] is False


def test_the_workbench_turn_view_is_read_in_one_thread_as_strawberry_answers_it(
        construction_db: AuditStore, monkeypatch: pytest.MonkeyPatch,
        answered: list[str]) -> None:  # noqa: F811
    """TurnDetail (graphql/workbench/) on the turn with recorded evidence: answered by the
    prepared documents, the turn, its construction, its assessments and their residuals read
    in one worker thread, byte for byte what strawberry's own execution answers."""
    fast = server_app(construction_db, plain_leaves=True, monkeypatch=monkeypatch)
    plain = server_app(construction_db, plain_leaves=False, monkeypatch=monkeypatch)
    body = {"query": (REPO / "graphql" / "workbench" / "TurnDetail.graphql").read_text(
        encoding="utf-8"), "variables": {"turnKey": TURN_KEY}}
    with TestClient(fast, base_url="http://127.0.0.1") as fast_client, TestClient(
            plain, base_url="http://127.0.0.1") as plain_client:
        answers = [c.post("/graphql", json=body).content for c in (fast_client, plain_client)]
    assert answered == ["turn"]  # the fast server's; strawberry's own has none
    assert answers[0] == answers[1]
    turn = json.loads(answers[0])["data"]["turn"]
    assert (turn["constructionStatus"], [a["assessmentId"] for a in turn["assessments"]],
            [r["residualId"] for r in turn["residuals"]]) == (
        "RECORDED", [REFUSED_ID, RUNNABLE_ID],
        [RESIDUALS["direction_unbound"], RESIDUALS["action_cue_unbound"],
         RESIDUALS["changed_object_unbound"]])
