"""End to end on a CORE-checkout-shaped tree: `ingest --core PATH` of a Workbench journal and
ChatRuntime outputs holding every surface form verifies each teaching turn against the chain
CORE used, from the surface text alone (core-interop.md sections 3, 5 and 7).

The checkout, chains and surfaces are fixtures typed out from the spec (surface_form_data).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import cli
from raw_reads import query
from surface_form_data import (
    COGNITION,
    CROSS_IDENTITY,
    IDENTITY_SURFACE,
    JUDGMENT_COMPOSED,
    JUDGMENT_SINGLE,
    JUDGMENT_TRANSITIVE,
    TRUTH_GROUNDS_REALITY,
)
from teaching_data import LIGHT_SURFACE, write_core_checkout
from turn_data import HEDGE, journal_entry, journal_line

SPECULATIVE = "(speculative, not yet reviewed) "


@pytest.fixture
def core(tmp_path: Path) -> Path:
    return write_core_checkout(tmp_path / "core", {
        "cognition_chains_v1": COGNITION,
        "relations_chains_v1": [TRUTH_GROUNDS_REALITY],
    }, cross_pack=[CROSS_IDENTITY])


JOURNAL = [
    journal_entry(1, "Why does light exist?", LIGHT_SURFACE, "teaching"),
    journal_entry(2, "Why does judgment matter?", JUDGMENT_SINGLE, "teaching"),
    journal_entry(3, "Why does judgment matter?", JUDGMENT_COMPOSED, "teaching"),
    journal_entry(4, "Why does judgment matter?", JUDGMENT_TRANSITIVE, "teaching"),
    journal_entry(5, "Is identity real?", IDENTITY_SURFACE, "teaching"),
    journal_entry(6, "Why does light exist?", HEDGE + LIGHT_SURFACE, "teaching"),
    journal_entry(7, "Why does light exist?", SPECULATIVE + LIGHT_SURFACE, "teaching"),
    journal_entry(8, "Why does light exist, and why does it matter?",
                  "Light reveals truth; it matters because truth grounds reality.", "teaching"),
]

# turn -> (verification, chain, form, hops, hop chains, prefix), typed out from the spec.
EXPECTED = {
    1: ("verified", "cause_light_reveals_truth", "single", 0, [], None),
    2: ("verified", "cause_judgment_requires_wisdom", "single", 0, [], None),
    3: ("verified", "cause_judgment_requires_wisdom", "composed", 1,
        ["verification_wisdom_requires_knowledge"], None),
    4: ("verified", "cause_judgment_requires_wisdom", "transitive", 2,
        ["verification_wisdom_requires_knowledge", "cause_knowledge_requires_evidence"], None),
    5: ("verified", "identity_verification_memory", "cross_pack", 0, [], None),
    6: ("verified", "cause_light_reveals_truth", "single", 0, [], HEDGE),
    7: ("verified", "cause_light_reveals_truth", "single", 0, [], SPECULATIVE),
    8: ("other_form", None, None, None, None, None),  # planner prose: no chain template
}


def test_every_teaching_turn_of_a_journal_verifies_against_the_chain_core_used(
        tmp_path: Path, core: Path) -> None:
    journal = tmp_path / "workbench_data" / "turn_journal.jsonl"
    journal.parent.mkdir()
    journal.write_text("".join(journal_line(e) + "\n" for e in JOURNAL), encoding="utf-8")
    db = tmp_path / "audit.db"
    result = cli("ingest", journal, "--db", db, "--core", core, "--json")
    assert result.exit_code == 0, result.output
    rows = query(db, "SELECT t.turn_id, s.verification, s.chain_id, s.surface_form, s.hops, "
                     "s.hop_chain_ids, s.surface_prefix FROM turns t JOIN surface_records s "
                     "ON s.surface_id = t.surface_id ORDER BY t.turn_id")
    found = {row[0]: (*row[1:5], None if row[5] is None else json.loads(row[5]), row[6])
             for row in rows}
    assert found == EXPECTED
    # Each verification names the files it was checked against: the corpus and its pack(s).
    [(checked,)] = query(db, "SELECT s.checked_against FROM turns t JOIN surface_records s "
                             "ON s.surface_id = t.surface_id WHERE t.turn_id = 5")
    assert [(f["kind"], f["id"]) for f in json.loads(checked)] == [
        ("corpus", "cross_pack_chains_v1"), ("pack", "en_core_relations_v1"),
        ("pack", "en_core_cognition_v1")]
    assert cli("verify", "--db", db).exit_code == 0


def test_the_light_ambiguity_names_both_candidates(tmp_path: Path) -> None:
    # CORE's light chains (cause and verification) render the same bytes (section 7).
    light_cause = {"chain_id": "cause_light_reveals_truth", "subject": "light",
                   "intent": "cause", "connective": "reveals", "object": "truth"}
    light_verification = {**light_cause, "chain_id": "verification_light_reveals_truth",
                          "intent": "verification"}
    core = write_core_checkout(tmp_path / "core", {
        "cognition_chains_v1": [light_cause, light_verification]})
    output = {"prompt": "Does light exist?", "surface": LIGHT_SURFACE,
              "grounding_source": "teaching", "epistemic_state": "decoded",
              "normative_clearance": "violated"}
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(output, ensure_ascii=False) + "\n", encoding="utf-8")
    db = tmp_path / "audit.db"
    assert cli("ingest", path, "--db", db, "--core", core).exit_code == 0
    [(verification, chain_id, candidates)] = query(
        db, "SELECT verification, chain_id, candidate_chain_ids FROM surface_records")
    assert (verification, chain_id) == ("verified", None)
    assert json.loads(candidates) == ["cause_light_reveals_truth",
                                      "verification_light_reveals_truth"]


def test_ingest_refuses_a_path_that_is_not_a_core_checkout(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"grounding_source": "teaching", "surface": LIGHT_SURFACE})
                    + "\n", encoding="utf-8")
    db = tmp_path / "audit.db"
    result = cli("ingest", path, "--db", db, "--core", tmp_path / "nowhere")
    assert result.exit_code != 0
    assert "nowhere" in result.output
    assert not db.exists()  # checked before the store is created


def test_the_server_shows_the_checkout_it_checks_against(tmp_path: Path, core: Path) -> None:
    from starlette.testclient import TestClient

    from store.api.app import create_app
    from store.db.audit_store import AuditStore
    from store.model.teaching_registry import load_core_registry

    db = tmp_path / "audit.db"
    AuditStore.open(str(db)).close()
    registry = load_core_registry(core)
    app = create_app(AuditStore.open(str(db), read_only=True), registry=lambda: registry)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        body = client.post("/graphql", json={"query": "{ teachingRegistry { resolvedChains "
                           "corpora { corpusId sha256 crossPack packId packChecksum chains } } }"})
    view = body.json()["data"]["teachingRegistry"]
    corpora = {c["corpusId"]: c for c in view["corpora"]}
    assert list(corpora) == ["cognition_chains_v1", "relations_chains_v1",
                             "relations_chains_v2", "cross_pack_chains_v1"]
    cognition = core / "teaching" / "cognition_chains" / "cognition_chains_v1.jsonl"
    import hashlib

    assert corpora["cognition_chains_v1"]["sha256"] == hashlib.sha256(
        cognition.read_bytes()).hexdigest()
    assert corpora["cognition_chains_v1"]["chains"] == 7  # every COGNITION chain loads
    assert corpora["relations_chains_v2"]["sha256"] == ""  # no such file in this checkout
    assert corpora["cross_pack_chains_v1"]["crossPack"] is True
    assert view["resolvedChains"] == 8  # 7 cognition + (truth, cause)


def test_serve_refuses_a_path_that_is_not_a_core_checkout(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    result = cli("serve", "--db", db, "--core", tmp_path / "nowhere", "--port", "0")
    assert result.exit_code == 1
    assert "nowhere" in result.output
