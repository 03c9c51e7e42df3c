"""Turns over GraphQL: the auditor's "which turns were grounded by what", filters, facets.

A store on both backends holds a Workbench journal of four turns (two teaching turns that
verify, one pack turn, one refused turn) and two ChatRuntime outputs (one teaching surface
with a Workbench prefix, one teaching surface the corpus does not render: a mismatch).
Expected values are typed out from core-interop.md and ADR-0052.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from graphql_requests import graphql_data
from starlette.testclient import TestClient
from teaching_data import KNOWLEDGE, KNOWLEDGE_SURFACE, LIGHT, LIGHT_SURFACE, MEMORY, one_corpus
from turn_data import DISCLOSURE, HEDGE, journal_entry, journal_line

from store.api.app import create_app
from store.db.audit_store import AuditStore
from store.model.teaching_registry import load_teaching_registry

REPO = Path(__file__).resolve().parents[2]
WORKBENCH = REPO / "graphql" / "workbench"

JOURNAL = [
    journal_entry(1, "Why does light exist?", LIGHT_SURFACE, "teaching"),
    journal_entry(2, "Why does knowledge require evidence?", KNOWLEDGE_SURFACE, "teaching",
                  normative_clearance="cleared"),
    journal_entry(3, "What is a pack?", "pack — a ratified lexicon.", "pack"),
    journal_entry(4, "Why does zorp exist?", DISCLOSURE, "none", epistemic_state="undetermined",
                  normative_clearance="suppressed", refusal_emitted=True),
]
# The knowledge surface with its second subject domain dropped: the chain renders another.
SHORT_KNOWLEDGE = KNOWLEDGE_SURFACE.replace("cognition.knowledge; epistemic.ground",
                                            "cognition.knowledge")
OUTPUTS = [
    {"prompt": "Why does light exist?", "surface": HEDGE + LIGHT_SURFACE,
     "grounding_source": "teaching", "epistemic_state": "decoded",
     "normative_clearance": "violated"},
    {"prompt": "Why does knowledge matter?", "surface": SHORT_KNOWLEDGE,
     "grounding_source": "teaching", "epistemic_state": "decoded",
     "normative_clearance": "violated"},
]


@pytest.fixture
def turn_client(backend_url: str, tmp_path: Path) -> Iterator[TestClient]:
    packs, teaching, _ = one_corpus(tmp_path, [LIGHT, KNOWLEDGE, MEMORY])
    registry = load_teaching_registry(teaching, packs)
    with AuditStore.open(backend_url) as store:
        store.ingest([journal_line(e) for e in JOURNAL], source="turn_journal.jsonl",
                     registry=lambda: registry)
        store.ingest([json.dumps(o, ensure_ascii=False) for o in OUTPUTS], source="chat.jsonl",
                     registry=lambda: registry)
    db = AuditStore.open(backend_url, read_only=True)
    with TestClient(create_app(db), base_url="http://127.0.0.1") as client:
        yield client


def workbench(name: str) -> str:
    return (WORKBENCH / f"{name}.graphql").read_text(encoding="utf-8")


def test_turns_say_which_were_grounded_by_what(turn_client: TestClient) -> None:
    data = graphql_data(turn_client, workbench("TurnsByGrounding"))["turns"]
    assert data["totalCount"] == 6
    rows = [(n["kind"], n["turnId"], n["groundingSource"], n["normativeClearance"],
             n["surface"]["verification"], n["surface"]["chainId"])
            for n in data["nodes"]]
    assert rows == [
        ("WORKBENCH_JOURNAL", 1, "TEACHING", "VIOLATED", "VERIFIED", "cause_light_reveals_truth"),
        ("WORKBENCH_JOURNAL", 2, "TEACHING", "CLEARED", "VERIFIED",
         "cause_knowledge_requires_evidence"),
        ("WORKBENCH_JOURNAL", 3, "PACK", "VIOLATED", "NOT_CHECKED", None),
        ("WORKBENCH_JOURNAL", 4, "NONE", "SUPPRESSED", "NOT_CHECKED", None),
        ("CHAT_RUNTIME", None, "TEACHING", "VIOLATED", "VERIFIED", "cause_light_reveals_truth"),
        ("CHAT_RUNTIME", None, "TEACHING", "VIOLATED", "MISMATCH",
         "cause_knowledge_requires_evidence"),
    ]
    first = data["nodes"][0]
    assert first["prompt"] == "Why does light exist?"
    assert first["verdicts"] == {"identity": None, "safety": "cleared", "ethics": "violated"}
    assert first["journalDigest"] == json.loads(journal_line(JOURNAL[0]))["journal_digest"]
    assert first["surface"]["surfaceForm"] == "SINGLE"
    assert first["surface"]["hops"] == 0
    assert first["surface"]["corpusId"] == "cognition_chains_v1"
    kinds = {(c["kind"], c["id"]) for c in first["surface"]["checkedAgainst"]}
    assert kinds == {("corpus", "cognition_chains_v1"), ("pack", "en_core_cognition_v1")}
    hedged = data["nodes"][4]["surface"]
    assert hedged["surfacePrefix"] == HEDGE
    mismatch = data["nodes"][5]["surface"]
    assert mismatch["expectedSurface"] == KNOWLEDGE_SURFACE


def test_turn_filters_and_pages(turn_client: TestClient) -> None:
    page = """query($filter: TurnFilter, $first: Int, $after: String) {
      turns(filter: $filter, first: $first, after: $after) {
        totalCount pageInfo { hasNextPage endCursor } nodes { turnId prompt }
      }
    }"""
    teaching = graphql_data(turn_client, page, filter={"groundingSource": ["TEACHING"],
                                                       "verification": ["VERIFIED"]})["turns"]
    assert teaching["totalCount"] == 3
    by_chain = graphql_data(turn_client, page,
                            filter={"chainId": ["cause_knowledge_requires_evidence"]})["turns"]
    assert [n["prompt"] for n in by_chain["nodes"]] == [
        "Why does knowledge require evidence?", "Why does knowledge matter?"]
    suppressed = graphql_data(turn_client, page, filter={
        "normativeClearance": ["SUPPRESSED"], "epistemicState": ["undetermined"]})["turns"]
    assert [n["turnId"] for n in suppressed["nodes"]] == [4]
    single = graphql_data(turn_client, page, filter={"surfaceForm": ["SINGLE"]})["turns"]
    assert single["totalCount"] == 4  # every verified or mismatched chain template
    first = graphql_data(turn_client, page, first=4)["turns"]
    assert first["pageInfo"]["hasNextPage"] is True
    rest = graphql_data(turn_client, page, first=4, after=first["pageInfo"]["endCursor"])["turns"]
    assert len(rest["nodes"]) == 2 and rest["pageInfo"]["hasNextPage"] is False


def test_turn_facets_count_values_as_filters_take_them(turn_client: TestClient) -> None:
    facets = graphql_data(turn_client, workbench("TurnFacetOverview"))["turnFacets"]
    assert facets["total"] == 6
    assert facets["byGroundingSource"] == [
        {"value": "TEACHING", "count": 4}, {"value": "NONE", "count": 1},
        {"value": "PACK", "count": 1}]
    assert facets["byVerification"] == [
        {"value": "VERIFIED", "count": 3}, {"value": "NOT_CHECKED", "count": 2},
        {"value": "MISMATCH", "count": 1}]
    assert facets["byEpistemicState"] == [
        {"value": "decoded", "count": 5}, {"value": "undetermined", "count": 1}]
    assert facets["byNormativeClearance"] == [
        {"value": "VIOLATED", "count": 4}, {"value": "CLEARED", "count": 1},
        {"value": "SUPPRESSED", "count": 1}]
    assert facets["byCorpus"] == [
        {"value": "cognition_chains_v1", "count": 4}, {"value": None, "count": 2}]
    teaching = graphql_data(turn_client, workbench("TurnFacetOverview"),
                            groundingSource=["TEACHING"])["turnFacets"]
    assert teaching["total"] == 4


def test_one_turn_by_key_and_an_unknown_key(turn_client: TestClient) -> None:
    turns = graphql_data(turn_client, "{ turns(first: 1) { nodes { turnKey } } }")["turns"]
    key = turns["nodes"][0]["turnKey"]
    one = graphql_data(turn_client, "query($id: ID!) { turn(id: $id) { turnId line } }",
                       id=key)["turn"]
    assert one["turnId"] == 1
    assert one["line"] == journal_line(JOURNAL[0])
    missing = graphql_data(turn_client, "query($id: ID!) { turn(id: $id) { turnId } }", id="0" * 64)
    assert missing["turn"] is None
