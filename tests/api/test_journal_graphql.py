"""CORE's own identity and time over GraphQL (issue 30 items 1, 2 and 4): journals, a turn by
(journal, turnId), every TurnJournalEntry field typed, TurnFilter's identities and CORE-time
bounds, the TIME orders with keyset pages. Journal lines from tests/data/store_rev0010_inputs.py
(spec-derived); expected values written out from those inputs."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from graphql_requests import graphql_data, graphql_errors
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore

DATA = Path(__file__).resolve().parents[1] / "data"
sys.path.insert(0, str(DATA))
from store_rev0010_inputs import PIPELINE, main  # noqa: E402

# Without a timestamp: listed after every timed turn in both TIME orders.
UNTIMED = {"grounding_source": "none", "epistemic_state": "undetermined",
           "normative_clearance": "cleared", "prompt": "no time", "surface": "hello"}


@pytest.fixture
def workbench(tmp_path: Path, example_store_url: str) -> Iterator[tuple[TestClient, Path]]:
    main(tmp_path)
    (tmp_path / "untimed.jsonl").write_text(json.dumps(UNTIMED) + "\n", encoding="utf-8")
    with AuditStore.open(example_store_url) as store:  # batches 1-3: the example frames
        for name in ("journal-a.jsonl", "journal-b.jsonl", "journal-a-grown.jsonl",
                     "untimed.jsonl"):
            store.ingest((tmp_path / name).read_bytes().splitlines(keepends=True), source=name)
    db = AuditStore.open(example_store_url, read_only=True)
    app = create_app(db, close_db_on_shutdown=False)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            yield client, tmp_path
    finally:
        db.close()


JOURNALS = """{ journals { totalCount nodes { journalId sessionId source turnCount startedAt
                 updatedAt batchIds } } }"""


def _journals(client: TestClient) -> list[dict[str, Any]]:
    return list(graphql_data(client, JOURNALS)["journals"]["nodes"])


def test_each_stored_journal_is_one_record_named_by_its_first_turn(
        workbench: tuple[TestClient, Path]) -> None:
    client, _ = workbench
    found = graphql_data(client, JOURNALS)["journals"]
    assert found["totalCount"] == 2
    a, b = found["nodes"]
    first_a = graphql_data(client, "query($h: String!) { turns(filter: {turnId: 1, "
                                   "traceHash: [$h]}) { nodes { turnKey } } }", h=f"{1:064x}")
    assert a["journalId"] == first_a["turns"]["nodes"][0]["turnKey"]
    # journal-a: 3 turns in batch 4, grown to 5 in batch 6; journal-b: batch 5.
    assert {k: v for k, v in a.items() if k != "journalId"} == {
        "sessionId": "workbench_turn_journal", "source": "turn_journal", "turnCount": 5,
        "startedAt": "2026-07-30T18:01:01.123456+00:00",
        "updatedAt": "2026-07-30T18:01:05.123456+00:00", "batchIds": [4, 6]}
    assert (b["turnCount"], b["startedAt"], b["updatedAt"], b["batchIds"]) == (
        2, "2026-08-01T09:00:00.000000+00:00", "2026-08-01T09:00:05.000000+00:00", [5])
    again = graphql_data(client, "query($id: ID!) { journal(id: $id) { turnCount } }",
                         id=a["journalId"])
    assert again == {"journal": {"turnCount": 5}}


def test_a_journal_s_batches_as_of_each_head(workbench: tuple[TestClient, Path],
                                             example_store_url: str) -> None:
    # journal-a: turns 1-3 in batch 4, 4-5 in batch 6, journal-b's batch 5 between them. Its
    # batches are found one index step a batch (journals.py): as of each head, those stored.
    client, _ = workbench
    a, b = _journals(client)
    with AuditStore.open(example_store_url, read_only=True) as store:
        heads = dict(store.execute(lambda c: c.exec_driver_sql(
            "SELECT batch_id, tree_size FROM tree_heads").all()))
    query = ("query($id: ID!, $asOf: LogIndex) { journal(id: $id, asOf: $asOf) { turnCount "
             "batchIds } }")
    for batch, a_seen, b_seen in ((4, (3, [4]), None), (5, (3, [4]), (2, [5])),
                                  (6, (5, [4, 6]), (2, [5])), (7, (5, [4, 6]), (2, [5]))):
        for journal, seen in ((a, a_seen), (b, b_seen)):
            found = graphql_data(client, query, id=journal["journalId"],
                                 asOf=heads[batch])["journal"]
            assert (None if found is None else (found["turnCount"], found["batchIds"])
                    ) == seen, (batch, journal["journalId"])


def test_a_journal_s_turns_page_in_turn_order(workbench: tuple[TestClient, Path]) -> None:
    client, _ = workbench
    journal = _journals(client)[0]["journalId"]
    query = """query($id: ID!, $after: String) { journal(id: $id) {
        turns(first: 2, after: $after) { totalCount pageInfo { hasNextPage endCursor }
                                         nodes { turnId journalId } } } }"""
    seen, after = [], None
    while True:
        page = graphql_data(client, query, id=journal, after=after)["journal"]["turns"]
        assert page["totalCount"] == 5
        seen += [(n["turnId"], n["journalId"]) for n in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == [(i, journal) for i in range(1, 6)]


TURN = """query($j: ID, $t: Int) { turn(journal: $j, turnId: $t) {
    turnId timestamp traceHash prompt surface { surface } articulationSurface walkSurface
    groundingSource epistemicState normativeClearance
    verdicts { identity identityDetail safety safetyDetail ethics ethicsDetail }
    refusalEmitted hedgeInjected proposalCandidates { candidateId sourceKind } turnCostMs
    checkpointEmitted leewayEvidence pipelineRecord fieldEvidence constructionEvidence
    metaRhEvidence practiceEvidence traceIntegrity journalDigest line } }"""


def test_every_journal_field_is_typed(workbench: tuple[TestClient, Path]) -> None:
    client, inputs = workbench
    journal = _journals(client)[0]["journalId"]
    line = (inputs / "journal-a.jsonl").read_text(encoding="utf-8").splitlines()[0]
    turn = graphql_data(client, TURN, j=journal, t=1)["turn"]
    assert turn == {
        "turnId": 1, "timestamp": "2026-07-30T18:01:01.123456+00:00",
        "traceHash": f"{1:064x}", "prompt": "Why does light exist? (1)",
        "surface": {"surface": "light — teaching-grounded (cognition_chains_v1): "
                               "cognition.illumination; logos.core. light reveals truth "
                               "(cognition.truth). No session evidence yet."},
        "articulationSurface": None, "walkSurface": "walked", "groundingSource": "TEACHING",
        "epistemicState": "decoded", "normativeClearance": "VIOLATED",
        "verdicts": {"identity": "violated", "identityDetail": "tone,warmth",
                     "safety": "cleared", "safetyDetail": "",
                     "ethics": "unassessable", "ethicsDetail": ""},
        "refusalEmitted": False, "hedgeInjected": False,
        "proposalCandidates": [{"candidateId": "cand-1", "sourceKind": "discovery"}],
        "turnCostMs": 7, "checkpointEmitted": True, "leewayEvidence": None,
        "pipelineRecord": PIPELINE, "fieldEvidence": None, "constructionEvidence": None,
        "metaRhEvidence": None, "practiceEvidence": None, "traceIntegrity": "pipeline_trace",
        "journalDigest": json.loads(line)["journal_digest"], "line": line}
    # CORE's float, exactly: repr 1.45208915114381e-07 survives the JSON scalar.
    assert turn["pipelineRecord"]["versor_condition"] == 1.45208915114381e-07
    grown = graphql_data(client, TURN, j=journal, t=4)["turn"]
    assert (grown["turnId"], grown["prompt"], grown["timestamp"]) == (
        4, "Why does light exist? (4)", "2026-07-31T00:00:00.000000+00:00")
    assert graphql_data(client, TURN, j=journal, t=6) == {"turn": None}
    assert graphql_data(client, TURN, j="0" * 64, t=1) == {"turn": None}


@pytest.mark.parametrize("arguments", ["", "(turnId: 1)", '(journal: "x")',
                                       '(id: "x", journal: "x", turnId: 1)'])
def test_turn_takes_one_identity(workbench: tuple[TestClient, Path], arguments: str) -> None:
    client, _ = workbench
    assert graphql_errors(client, f"{{ turn{arguments} {{ turnId }} }}") == [
        "turn: give id, or journal and turnId"]


def _count(client: TestClient, where: str, **variables: Any) -> int:
    declared = ", ".join(f"${k}: {'DateTime' if k.startswith('t') else 'ID'}!"
                         for k in variables)
    head = f"query({declared})" if declared else "query"
    found = graphql_data(client, f"{head} {{ turns(filter: {{{where}}}) {{ totalCount }} }}",
                         **variables)
    return int(found["turns"]["totalCount"])


def test_turn_filter_takes_core_s_identities(workbench: tuple[TestClient, Path]) -> None:
    client, _ = workbench
    a, b = (j["journalId"] for j in _journals(client))
    assert _count(client, "journal: [$a]", a=a) == 5
    assert _count(client, "journal: [$a, $b]", a=a, b=b) == 7
    assert _count(client, "journal: [$b], turnId: [2]", b=b) == 1
    assert _count(client, "turnId: [1]") == 2
    assert _count(client, f'traceHash: ["{4:064x}"]') == 1
    assert _count(client, "kind: [WORKBENCH_JOURNAL]") == 7
    assert _count(client, "kind: [CHAT_RUNTIME]") == 1
    assert _count(client, "traceIntegrity: [LEGACY_UNHASHED]") == 1  # journal-b's turn 1
    digest = json.loads(graphql_data(client, TURN, j=b, t=2)["turn"]["line"])["journal_digest"]
    assert _count(client, f'journalDigest: ["{digest}"]') == 1


def test_time_bounds_are_core_s_time_inclusive_across_offsets(
        workbench: tuple[TestClient, Path]) -> None:
    client, _ = workbench
    # journal-a's turn 2 is 20:01:02.000001+02:00, i.e. 18:01:02.000001 UTC.
    assert _count(client, "timeFrom: $t1, timeTo: $t2", t1="2026-07-30T18:01:02.000001Z",
                  t2="2026-07-30T18:01:02.000001+00:00") == 1
    assert _count(client, "timeFrom: $t1", t1="2026-07-30T20:01:02.000002+02:00") == 5
    assert _count(client, "timeTo: $t2", t2="2026-07-31T00:00:00-00:00") == 5
    assert _count(client, "timeFrom: $t1", t1="2026-08-01T11:00:00+02:00") == 2
    assert graphql_errors(client, "{ turns(filter: {timeFrom: \"2026-07-30T18:00:00\"}) "
                                  "{ totalCount } }") == [
        "timeFrom: '2026-07-30T18:00:00' has no UTC offset: CORE's time is an instant "
        "(e.g. 2026-07-30T18:01:02+00:00)"]
    [message] = graphql_errors(client, "{ turns(filter: {timeTo: \"yesterday\"}) "
                                       "{ totalCount } }")
    assert "DateTime" in message and "yesterday" in message


ORDERED = """query($order: Order!, $first: Int, $after: String, $last: Int, $before: String) {
    turns(order: $order, first: $first, after: $after, last: $last, before: $before) {
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        nodes { prompt } } }"""
TIME_ASC = ["Why does light exist? (1)", "Why does light exist? (2)",
            "Why does light exist? (3)", "Why does light exist? (5)",
            "Why does light exist? (4)", "Is wisdom grounded?", "Second?"]


def _all(client: TestClient, order: str, size: int, backwards: bool = False) -> list[str]:
    seen: list[str] = []
    cursor = None
    while True:
        arguments = ({"last": size, "before": cursor} if backwards
                     else {"first": size, "after": cursor})
        page = graphql_data(client, ORDERED, order=order, **arguments)["turns"]
        prompts = [n["prompt"] for n in page["nodes"]]
        seen = prompts + seen if backwards else seen + prompts
        info = page["pageInfo"]
        if not (info["hasPreviousPage"] if backwards else info["hasNextPage"]):
            return seen
        cursor = info["startCursor"] if backwards else info["endCursor"]


def test_time_orders_page_by_core_s_time_untimed_turns_last(
        workbench: tuple[TestClient, Path]) -> None:
    client, _ = workbench
    descending = ["Second?", "Is wisdom grounded?",
                  "Why does light exist? (4)", "Why does light exist? (5)",
                  "Why does light exist? (3)", "Why does light exist? (2)",
                  "Why does light exist? (1)"]
    untimed = "no time"
    for size in (1, 2, 3, 500):
        assert _all(client, "TIME_ASC", size) == [*TIME_ASC, untimed], size
        assert _all(client, "TIME_DESC", size) == [*descending, untimed], size
        assert _all(client, "TIME_ASC", size, backwards=True) == [*TIME_ASC, untimed], size
        assert _all(client, "TIME_DESC", size, backwards=True) == [*descending, untimed], size


def test_time_orders_are_for_turns_only(workbench: tuple[TestClient, Path]) -> None:
    client, _ = workbench
    assert graphql_errors(client, "{ residuals(order: TIME_ASC) { totalCount } }") == [
        "order: TIME_ASC orders turns by CORE's own time, which residuals do not have; use "
        "OLDEST_FIRST or NEWEST_FIRST"]
    page = graphql_data(client, ORDERED, order="TIME_ASC", first=1)["turns"]["pageInfo"]
    assert graphql_errors(client, ORDERED, order="OLDEST_FIRST", first=1,
                          after=page["endCursor"]) == [
        "after: this cursor pages the TIME_ASC order, not OLDEST_FIRST: use a cursor from a "
        "page in the same order"]
