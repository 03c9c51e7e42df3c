"""The Workbench's views, each through its trusted document (graphql/workbench/), as the
Workbench sends it (by documentId to a server run with --trusted-documents), on both backends.

The store: tests/workbench_data.py's journal A (batch 1, four turns carrying every field of
core-workbench.md §3 and §4) and journal B (batch 2, one turn). Each test checks that the
answer carries every field the view shows (core-workbench.md §1) with CORE's values, written
out here; ids are this store's (a turn's key: sha256 of the canonical {"kind", "line"}; a
residual's: ADR-0225's recipe, the values of construction_data.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from construction_data import GAINED, PROBLEM, RESIDUALS, recorded_payload
from graphql import FieldNode, OperationDefinitionNode, parse
from graphql_requests import ERROR_CODES
from starlette.testclient import TestClient
from turn_data import DISCLOSURE, LIGHT_SURFACE
from workbench_data import (
    APPLES_EVIDENCE,
    ARTICULATION,
    FIELD,
    LEEWAY,
    META_RH,
    NOT_ATTEMPTED,
    PIPELINE,
    PRACTICE,
    PRACTICE_RESIDUAL_IDS,
    TRACE_1,
    TRACE_3,
    TRACE_4,
    TRACE_B,
    VAULT_PROMPT,
    journal_a,
    journal_b,
    journal_lines,
)

from store.api.app import create_app
from store.api.context import RequestContext
from store.api.prepared_operations import PreparedOperations
from store.api.schema import build_schema
from store.api.trusted_documents import document_id, load_trusted_documents
from store.db.audit_store import AuditStore

WORKBENCH = Path(__file__).resolve().parents[2] / "graphql" / "workbench"

# Journal A's turns, by turn_id; a journal's id is its turn 1's key.
JOURNAL_A = "50afa96c7990965059d6fdf55cca10c5d69e1677a056a5a2d20018450af49378"
TURN_A2 = "50566fc7980cb0f50df918a1e221608999373cc522dcdd93699d3821b735c7f9"
TURN_A3 = "626e15ea30e5c9ea7be0c075ef2545a7652c0a716c915d7fcc7fcdf48be952e6"
TURN_A4 = "ce0707f174f9c405faa93fce954ad0c79a56b370fe8156c6773ae3729c9f4356"
JOURNAL_B = "15424b2a2be50b170e1189c86991321d011620ad510e0291554b5fe3b204b843"
EVIDENCE_GAP = "the journal is one local grouping with no durable session id"
# CORE's excerpts: the first 120 characters (Python's [:120]).
LIGHT_EXCERPT = ("light — teaching-grounded (cognition_chains_v1): cognition.illumination; "
                 "logos.core. light reveals truth (cognition.trut")
VAULT_EXCERPT = ("Is the vault open?\nI ask because the answer it stored last week was about "
                 "another door, and the two doors share one key:")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, bytes]:
    """The journal files as CORE writes them: one line a turn, each ending in a newline."""
    found = {}
    for name, entries in (("journal-a.jsonl", journal_a()), ("journal-b.jsonl", journal_b())):
        data = "".join(line + "\n" for line in journal_lines(entries)).encode("utf-8")
        (tmp_path / name).write_bytes(data)
        found[name] = data
    return found


@pytest.fixture
def client(backend_url: str, files: dict[str, bytes]) -> Iterator[TestClient]:
    with AuditStore.open(backend_url) as store:
        for name, data in files.items():
            store.ingest(data.splitlines(keepends=True), source=name)
    trusted = load_trusted_documents(WORKBENCH, build_schema()._schema)
    db = AuditStore.open(backend_url, read_only=True)
    try:
        with TestClient(create_app(db, close_db_on_shutdown=False, trusted_documents=trusted),
                        base_url="http://127.0.0.1") as test_client:
            yield test_client
    finally:
        db.close()


def run(client: TestClient, name: str, **variables: Any) -> dict[str, Any]:
    """The document's data, sent by its id as the Workbench sends it; no error."""
    text = (WORKBENCH / f"{name}.graphql").read_text(encoding="utf-8")
    response = client.post("/graphql", json={"documentId": document_id(text),
                                             "variables": variables},
                           headers={"accept": "application/graphql-response+json"})
    body = response.json()
    assert response.status_code == 200 and "errors" not in body, body
    return dict(body["data"])


def line_of(entries: list[dict[str, Any]], turn_id: int) -> str:
    return journal_lines(entries)[turn_id - 1]


# --- Trace: the timeline ----------------------------------------------------------------------

ROW_A1 = {"turnKey": JOURNAL_A, "journalId": JOURNAL_A, "turnId": 1,
          "timestamp": "2026-07-30T18:01:01.123456+00:00", "promptExcerpt": PROBLEM,
          "surfaceExcerpt": DISCLOSURE, "traceHash": TRACE_1, "traceIntegrity": "pipeline_trace",
          "groundingSource": "NONE"}
ROW_A2 = {"turnKey": TURN_A2, "journalId": JOURNAL_A, "turnId": 2,
          "timestamp": "2026-07-30T18:02:00.000000+00:00",
          "promptExcerpt": "Why does light exist?", "surfaceExcerpt": LIGHT_EXCERPT,
          "traceHash": None, "traceIntegrity": "legacy_unhashed", "groundingSource": "TEACHING"}
ROW_A3 = {"turnKey": TURN_A3, "journalId": JOURNAL_A, "turnId": 3,
          "timestamp": "2026-07-30T18:03:00.000000+00:00", "promptExcerpt": "Tom has 3 apples.",
          "surfaceExcerpt": "pack — a ratified lexicon.", "traceHash": TRACE_3,
          "traceIntegrity": "pipeline_trace", "groundingSource": "PACK"}
ROW_A4 = {"turnKey": TURN_A4, "journalId": JOURNAL_A, "turnId": 4,
          "timestamp": "2026-07-30T18:04:00.000000+00:00", "promptExcerpt": VAULT_EXCERPT,
          "surfaceExcerpt": "vault — the stored answer.", "traceHash": TRACE_4,
          "traceIntegrity": "pipeline_trace", "groundingSource": "VAULT"}
ROW_B1 = {"turnKey": JOURNAL_B, "journalId": JOURNAL_B, "turnId": 1,
          "timestamp": "2026-08-01T09:00:00.000000+00:00", "promptExcerpt": "Tom gained 3, again.",
          "surfaceExcerpt": DISCLOSURE, "traceHash": TRACE_B, "traceIntegrity": "pipeline_trace",
          "groundingSource": "NONE"}


def test_the_trace_timeline_lists_a_journal_s_turns_as_core_summarises_them(
        client: TestClient) -> None:
    data = run(client, "TraceTimeline", journal=[JOURNAL_A])
    assert data["turns"]["pageInfo"]["hasNextPage"] is False
    assert data["turns"]["nodes"] == [ROW_A1, ROW_A2, ROW_A3, ROW_A4]
    assert VAULT_PROMPT.startswith(VAULT_EXCERPT) and len(VAULT_EXCERPT) == 120


def test_the_trace_timeline_pages_every_journal_newest_core_time_first(
        client: TestClient) -> None:
    seen, after = [], None
    while True:
        data = run(client, "TraceTimeline", order="TIME_DESC", first=2, after=after)
        assert len(data["turns"]["nodes"]) == (2 if len(seen) < 4 else 1)
        seen += data["turns"]["nodes"]
        if not data["turns"]["pageInfo"]["hasNextPage"]:
            break
        after = data["turns"]["pageInfo"]["endCursor"]
    assert seen == [ROW_B1, ROW_A4, ROW_A3, ROW_A2, ROW_A1]


# --- Trace: the selected turn -----------------------------------------------------------------

REFUSED_SPANS = [{**GAINED, "sentenceIndex": None}]


def _residual(code: str) -> dict[str, Any]:
    return {"residualId": RESIDUALS[code], "residualKind": "MISSING_ROLE", "residualCode": code,
            "sourceAxis": "ROLE", "candidateOrgan": "unary_delta_transition",
            "familyId": "state_change.unary_delta"}


def test_turn_detail_carries_every_tab_of_a_turn_with_all_evidence(client: TestClient) -> None:
    turn = run(client, "TurnDetail", journal=JOURNAL_A, turnId=1)["turn"]
    line = line_of(journal_a(), 1)
    assert turn == {
        # header and metadata tab
        "turnKey": JOURNAL_A, "journalId": JOURNAL_A, "batchId": 1,
        "kind": "WORKBENCH_JOURNAL", "turnId": 1,
        "timestamp": "2026-07-30T18:01:01.123456+00:00", "traceHash": TRACE_1,
        "traceIntegrity": "pipeline_trace", "journalDigest": json.loads(line)["journal_digest"],
        "turnCostMs": 42, "checkpointEmitted": True,
        "proposalCandidates": [{"candidateId": "cand-tom-1", "sourceKind": "discovery"},
                               {"candidateId": "cand-tom-2", "sourceKind": "discovery"}],
        # surfaces tab (and the inspector's intent: the prompt)
        "prompt": PROBLEM,
        "surface": {"surfaceId": "1688f6edddf267b128d8d9c2b27da746d84adbee08e9b70457fe1a61a46f6165",
                    "surface": DISCLOSURE, "verification": "NOT_CHECKED"},
        "articulationSurface": ARTICULATION, "walkSurface": "Tom — gained — 3",
        # grounding tab
        "groundingSource": "NONE", "epistemicState": "undetermined",
        "normativeClearance": "UNASSESSABLE",
        # verdicts tab
        "verdicts": {"identity": "violated", "identityDetail": "tone,warmth",
                     "safety": "cleared", "safetyDetail": "",
                     "ethics": "unassessable", "ethicsDetail": ""},
        "refusalEmitted": True, "hedgeInjected": True,
        # the inspector's leeway row; pipeline, field, practice tabs; meta_rh: as CORE wrote them
        "leewayEvidence": LEEWAY, "pipelineRecord": PIPELINE, "fieldEvidence": FIELD,
        "practiceEvidence": PRACTICE, "metaRhEvidence": META_RH,
        # construction tab: the payload, what CORE's seam reports, the assessments (organ,
        # runnable, blockers, explanation) and their residuals, sorted by residual_id
        "constructionEvidence": recorded_payload(), "constructionStatus": "RECORDED",
        "constructionMissingReason": None,
        "assessments": [
            {"assessmentId": "04550ad80ed8b9cc66be3ce3df79f09f9d3e22f9d90ff4302fa3fda1cf75a233",
             "candidateOrgan": "unary_delta_transition", "familyId": "state_change.unary_delta",
             "runnable": False, "missingBindings": ["changed_object_unbound", "direction_unbound"],
             "unresolvedHazards": ["action_cue_unbound", "direction_unbound"],
             "explanation": "diagnostic candidate is not runnable: changed_object_unbound, "
                            "direction_unbound",
             "evidenceSpans": REFUSED_SPANS},
            {"assessmentId": "1281629388b0279efb1013852923d4e3c3846b3e15b4126e8f05c1b6697dba26",
             "candidateOrgan": "quantity_entity_binding", "familyId": "binding.quantity_entity",
             "runnable": True, "missingBindings": [], "unresolvedHazards": [],
             "explanation": "quantity 3 binds locally.",
             "evidenceSpans": [{"text": "3", "start": 11, "end": 12, "sentenceIndex": None}]},
        ],
        "residuals": [_residual("direction_unbound"), _residual("action_cue_unbound"),
                      _residual("changed_object_unbound")],
        # raw tab
        "line": line,
    }
    # CORE's floats keep their value; the practice trace names the residuals shown above.
    assert turn["pipelineRecord"]["versor_condition"] == 1.45208915114381e-07
    assert turn["practiceEvidence"]["sealed_trace"]["residual_ids"] == sorted(
        r["residualId"] for r in turn["residuals"])


def test_turn_detail_of_turns_without_evidence_says_what_core_says(client: TestClient) -> None:
    legacy = run(client, "TurnDetail", journal=JOURNAL_A, turnId=2)["turn"]
    assert {k: legacy[k] for k in (
        "traceHash", "traceIntegrity", "walkSurface", "articulationSurface", "leewayEvidence",
        "pipelineRecord", "fieldEvidence", "constructionEvidence", "constructionStatus",
        "constructionMissingReason", "assessments", "residuals", "practiceEvidence",
        "metaRhEvidence", "verdicts", "epistemicState", "normativeClearance")} == {
        "traceHash": None, "traceIntegrity": "legacy_unhashed", "walkSurface": None,
        "articulationSurface": DISCLOSURE, "leewayEvidence": None, "pipelineRecord": None,
        "fieldEvidence": None, "constructionEvidence": None,
        "constructionStatus": "MISSING_EVIDENCE",
        "constructionMissingReason": "construction_evidence_not_persisted",
        "assessments": [], "residuals": [], "practiceEvidence": None, "metaRhEvidence": None,
        "verdicts": {"identity": None, "identityDetail": None, "safety": "cleared",
                     "safetyDetail": "", "ethics": "violated",
                     "ethicsDetail": "acknowledge_uncertainty"},
        "epistemicState": "decoded", "normativeClearance": "VIOLATED"}
    assert legacy["surface"]["surface"] == LIGHT_SURFACE
    assert legacy["surface"]["verification"] == "VERIFIED"
    # Turn 4, named by its key: CORE's seam reports the payload's own missing_reason.
    missing = run(client, "TurnDetail", turnKey=TURN_A4)["turn"]
    assert (missing["turnId"], missing["prompt"], missing["constructionEvidence"],
            missing["constructionStatus"], missing["constructionMissingReason"],
            missing["assessments"], missing["residuals"]) == (
        4, VAULT_PROMPT, NOT_ATTEMPTED, "MISSING_EVIDENCE", "construction_not_attempted", [], [])


def test_turn_detail_projects_labels_outside_the_map_to_the_fallback(
        client: TestClient) -> None:
    turn = run(client, "TurnDetail", journal=JOURNAL_A, turnId=3)["turn"]
    assert turn["constructionEvidence"] == APPLES_EVIDENCE
    assert turn["constructionStatus"] == "RECORDED"
    assert sorted((r["residualCode"], r["residualKind"], r["sourceAxis"], r["familyId"])
                  for r in turn["residuals"]) == [
        ("unbound_base_quantity", "CONTRACT_GAP_UNCLASSIFIED", "UNKNOWN",
         "binding.quantity_entity"),
        ("unit_object_conflict", "UNIT_OBJECT_CONFLICT", "UNIT_OBJECT",
         "binding.quantity_entity")]


# --- Runs ---------------------------------------------------------------------------------------

RUN_A = {"journalId": JOURNAL_A, "sessionId": "workbench_turn_journal", "source": "turn_journal",
         "turnCount": 4, "startedAt": "2026-07-30T18:01:01.123456+00:00",
         "updatedAt": "2026-07-30T18:04:00.000000+00:00", "evidenceGap": EVIDENCE_GAP}
RUN_B = {"journalId": JOURNAL_B, "sessionId": "workbench_turn_journal", "source": "turn_journal",
         "turnCount": 1, "startedAt": "2026-08-01T09:00:00.000000+00:00",
         "updatedAt": "2026-08-01T09:00:00.000000+00:00", "evidenceGap": EVIDENCE_GAP}


def test_the_runs_list_has_one_run_per_journal(client: TestClient) -> None:
    journals = run(client, "Runs")["journals"]
    assert journals["totalCount"] == 2 and journals["pageInfo"]["hasNextPage"] is False
    assert journals["nodes"] == [{**RUN_A, "batchIds": [1]}, {**RUN_B, "batchIds": [2]}]
    first = run(client, "Runs", order="NEWEST_FIRST", first=1)["journals"]
    assert [n["journalId"] for n in first["nodes"]] == [JOURNAL_B]
    rest = run(client, "Runs", order="NEWEST_FIRST", first=1,
               after=first["pageInfo"]["endCursor"])["journals"]
    assert [n["journalId"] for n in rest["nodes"]] == [JOURNAL_A]


def test_run_detail_has_the_run_its_files_and_its_turns(
        client: TestClient, files: dict[str, bytes]) -> None:
    journal = run(client, "RunDetail", journal=JOURNAL_A, first=3)["journal"]
    [batch] = journal.pop("batches")
    turns = journal.pop("turns")
    assert journal == RUN_A
    # CORE's artifact_refs digest: sha256 of the journal file's bytes.
    assert (batch["batchId"], batch["source"], batch["inputSha256"]) == (
        1, "journal-a.jsonl", hashlib.sha256(files["journal-a.jsonl"]).hexdigest())
    assert turns["pageInfo"]["hasNextPage"] is True

    def ref(row: dict[str, Any]) -> dict[str, Any]:  # CORE's RunTurnRef, from a timeline row
        return {k: row[k] for k in ("turnKey", "turnId", "timestamp", "surfaceExcerpt",
                                    "traceHash", "traceIntegrity")}

    assert turns["nodes"] == [ref(ROW_A1), ref(ROW_A2), ref(ROW_A3)]
    more = run(client, "RunDetail", journal=JOURNAL_A, first=3,
               after=turns["pageInfo"]["endCursor"])["journal"]["turns"]
    assert more["nodes"] == [ref(ROW_A4)] and more["pageInfo"]["hasNextPage"] is False
    assert run(client, "RunDetail", journal="0" * 64) == {"journal": None}


# --- Residuals: the card, the practice card, the generalization audit -------------------------

RESIDUAL_RECORDS = {
    code: {"residualId": RESIDUALS[code], "residualKind": "MISSING_ROLE", "residualCode": code,
           "sourceAxis": "ROLE", "candidateOrgan": "unary_delta_transition",
           "familyId": "state_change.unary_delta", "explanation": explanation,
           "evidenceSpans": REFUSED_SPANS, "occurrenceCount": 2}
    for code, explanation in (
        ("changed_object_unbound", "The changed object role is unbound."),
        ("direction_unbound", "The direction role is unbound."),
        ("action_cue_unbound", "The action cue role is unbound."))}


def test_the_residual_card_shows_the_record_and_the_turns_that_produced_it(
        client: TestClient) -> None:
    card = run(client, "ResidualCard", id=RESIDUALS["changed_object_unbound"],
               turns=1)["residual"]
    turns = card.pop("turns")
    assert card == RESIDUAL_RECORDS["changed_object_unbound"]
    assert turns["totalCount"] == 2 and turns["pageInfo"]["hasNextPage"] is True
    assert turns["nodes"] == [{"turnKey": JOURNAL_A, "journalId": JOURNAL_A, "turnId": 1,
                               "timestamp": "2026-07-30T18:01:01.123456+00:00",
                               "prompt": PROBLEM}]
    rest = run(client, "ResidualCard", id=RESIDUALS["changed_object_unbound"], turns=1,
               after=turns["pageInfo"]["endCursor"])["residual"]["turns"]
    assert rest["nodes"] == [{"turnKey": JOURNAL_B, "journalId": JOURNAL_B, "turnId": 1,
                              "timestamp": "2026-08-01T09:00:00.000000+00:00",
                              "prompt": "Tom gained 3, again."}]
    assert run(client, "ResidualCard", id="0" * 64) == {"residual": None}


@pytest.mark.parametrize("variables", [{"turns": 1}, {"turns": 2}, {"turns": 0}])
def test_the_residual_card_is_read_in_one_thread_as_strawberry_reads_it(
        client: TestClient, backend_url: str, monkeypatch: pytest.MonkeyPatch,
        variables: dict[str, Any]) -> None:
    answered: list[bool] = []
    answer = PreparedOperations.answer

    async def counted(self: PreparedOperations, *args: Any) -> Any:
        result = await answer(self, *args)
        answered.append(result is not None)
        return result

    monkeypatch.setattr(PreparedOperations, "answer", counted)
    variables = {"id": RESIDUALS["changed_object_unbound"], **variables}
    card = run(client, "ResidualCard", **variables)
    assert answered == [True]  # the record, its turns and their count: one worker thread
    assert card["residual"]["turns"]["totalCount"] == 2

    async def plain() -> Any:
        with AuditStore.open(backend_url, read_only=True) as db:
            return await build_schema(plain_leaves=False).execute(
                (WORKBENCH / "ResidualCard.graphql").read_text(encoding="utf-8"),
                variable_values=variables, context_value=RequestContext(db))

    assert json.dumps(card) == json.dumps(asyncio.run(plain()).data)


def test_the_practice_card_fetches_its_residual_ids_in_one_request(client: TestClient) -> None:
    # The sealed trace's residual_ids, as the practice evidence of journal A's turn 1 holds
    # them, and one id the store does not hold: left out.
    assert PRACTICE["sealed_trace"]["residual_ids"] == PRACTICE_RESIDUAL_IDS  # type: ignore[index]
    data = run(client, "PracticeResiduals", residualIds=[*PRACTICE_RESIDUAL_IDS, "f" * 64])
    assert data["residuals"]["totalCount"] == 3
    # In the order the store first saw them (the assessment's codes: missing bindings, then
    # hazards).
    assert data["residuals"]["nodes"] == [
        RESIDUAL_RECORDS["changed_object_unbound"], RESIDUAL_RECORDS["direction_unbound"],
        RESIDUAL_RECORDS["action_cue_unbound"]]
    assert data["residualFacets"] == {"total": 3, "byKind": [{"value": "MISSING_ROLE",
                                                              "count": 3}]}


def test_the_dominant_residual_kinds_count_residuals_and_sightings(client: TestClient) -> None:
    # Journal A: "Tom gained 3." (three MISSING_ROLE residuals), "Tom has 3 apples." (one
    # UNIT_OBJECT_CONFLICT, one outside the map); journal B sees the first three again.
    assert run(client, "DominantResidualKinds")["residualFacets"] == {
        "total": 5, "occurrences": 8, "byKind": [
            {"value": "MISSING_ROLE", "count": 3, "occurrences": 6},
            {"value": "CONTRACT_GAP_UNCLASSIFIED", "count": 1, "occurrences": 1},
            {"value": "UNIT_OBJECT_CONFLICT", "count": 1, "occurrences": 1}]}
    # Over batch 2 alone: no residual first stored there, and the three sightings it recorded.
    assert run(client, "DominantResidualKinds",
               filter={"batchIdFrom": 2, "batchIdTo": 2})["residualFacets"] == {
        "total": 0, "occurrences": 3, "byKind": [
            {"value": "MISSING_ROLE", "count": 0, "occurrences": 3}]}


def test_the_grounding_distribution_of_a_run(client: TestClient) -> None:
    data = run(client, "RunGroundingDistribution", journal=JOURNAL_A)
    assert data["turnFacets"] == {
        "total": 4,
        "byGroundingSource": [{"value": "NONE", "count": 1}, {"value": "PACK", "count": 1},
                              {"value": "TEACHING", "count": 1}, {"value": "VAULT", "count": 1}],
        "byEpistemicState": [{"value": "decoded", "count": 1},
                             {"value": "evidenced_incomplete", "count": 1},
                             {"value": "undetermined", "count": 1},
                             {"value": "verified", "count": 1}],
        "byNormativeClearance": [{"value": "CLEARED", "count": 2},
                                 {"value": "UNASSESSABLE", "count": 1},
                                 {"value": "VIOLATED", "count": 1}],
        # Only the teaching surface is checked against the corpora (this server's default
        # registry re-derives light's surface); the others are not teaching-grounded.
        "byVerification": [{"value": "NOT_CHECKED", "count": 3},
                           {"value": "VERIFIED", "count": 1}]}
    # The Trace coverage box over the whole run: turn 2 has no trace_hash (legacy_unhashed).
    assert data["coverage"] == {"total": 4, "groups": [
        {"values": ["pipeline_trace"], "count": 3}, {"values": ["legacy_unhashed"], "count": 1}]}
    other = run(client, "RunGroundingDistribution", journal=JOURNAL_B)
    assert other["turnFacets"]["byGroundingSource"] == [{"value": "NONE", "count": 1}]
    assert other["coverage"] == {"total": 1, "groups": [
        {"values": ["pipeline_trace"], "count": 1}]}


def test_a_document_s_errors_are_coded(client: TestClient) -> None:
    text = (WORKBENCH / "TurnDetail.graphql").read_text(encoding="utf-8")
    response = client.post("/graphql", json={"documentId": document_id(text),
                                             "variables": {"journal": JOURNAL_A}})
    [error] = response.json()["errors"]
    assert error["message"] == "turn: give id, or journal and turnId"
    assert error["extensions"]["code"] in ERROR_CODES


# --- each document selects every field of CORE's shapes it serves ------------------------------

# core-workbench.md's field lists, as CORE names them; a field is selected under its camelCase
# name. What CORE derives from others (trace_path), or no journal carries (a run's checkpoint
# and manifest fields), is in docs/graphql.md, not here.
SHAPES = {
    ("TurnDetail", ("turn",)): [  # §3 TurnJournalEntry
        "turn_id", "timestamp", "trace_hash", "prompt", "surface", "articulation_surface",
        "walk_surface", "grounding_source", "epistemic_state", "normative_clearance",
        "verdicts", "refusal_emitted", "hedge_injected", "proposal_candidates", "turn_cost_ms",
        "checkpoint_emitted", "leeway_evidence", "pipeline_record", "field_evidence",
        "construction_evidence", "meta_rh_evidence", "practice_evidence", "trace_integrity",
        "journal_digest"],
    ("TurnDetail", ("turn", "assessments")): [  # §4 ContractAssessmentView
        "candidate_organ", "family_id", "missing_bindings", "unresolved_hazards", "runnable",
        "explanation", "evidence_spans"],
    ("TraceTimeline", ("turns", "nodes")): [  # §3 TurnJournalSummary
        "turn_id", "timestamp", "prompt_excerpt", "surface_excerpt", "trace_hash",
        "grounding_source", "trace_integrity"],
    ("Runs", ("journals", "nodes")): [  # §5 RunSummary, the journal's part
        "session_id", "source", "turn_count", "started_at", "updated_at", "evidence_gap"],
    ("RunDetail", ("journal", "turns", "nodes")): [  # §5 RunTurnRef but trace_path
        "turn_id", "trace_hash", "timestamp", "surface_excerpt", "trace_integrity"],
    ("ResidualCard", ("residual",)): [  # ADR-0225 ContractResidual
        "residual_id", "candidate_organ", "family_id", "residual_kind", "residual_code",
        "source_axis", "evidence_spans", "explanation"],
    ("PracticeResiduals", ("residuals", "nodes")): [
        "residual_id", "candidate_organ", "family_id", "residual_kind", "residual_code",
        "source_axis", "evidence_spans", "explanation"],
}


def _selected(document: str, path: tuple[str, ...]) -> set[str]:
    [operation] = [d for d in parse(document).definitions
                   if isinstance(d, OperationDefinitionNode)]
    selections = operation.selection_set.selections
    for name in path:
        [found] = [s for s in selections if isinstance(s, FieldNode) and s.name.value == name]
        assert found.selection_set is not None
        selections = found.selection_set.selections
    return {s.name.value for s in selections if isinstance(s, FieldNode)}


@pytest.mark.parametrize(("where", "fields"), list(SHAPES.items()),
                         ids=[f"{name}.{'.'.join(path)}" for name, path in SHAPES])
def test_the_document_selects_every_field_of_the_shape(
        where: tuple[str, tuple[str, ...]], fields: list[str]) -> None:
    name, path = where
    selected = _selected((WORKBENCH / f"{name}.graphql").read_text(encoding="utf-8"), path)
    camel = [field.split("_")[0] + "".join(w.title() for w in field.split("_")[1:])
             for field in fields]
    assert [field for field in camel if field not in selected] == []
