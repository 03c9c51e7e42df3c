"""CORE turns through `core-audit ingest`: Workbench journals, ChatRuntime and TurnEvent lines.

Journal lines are written here with the digest recipe of core-interop.md section 5 (canonical
JSON without journal_digest, sha256, `sha256:` + hex; its worked example is a test of
test_journal_digest.py). Expected values are typed out from the spec and ADR-0052.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cli_runs import cli
from raw_reads import query, table_rows
from teaching_data import KNOWLEDGE, KNOWLEDGE_SURFACE, LIGHT, LIGHT_SURFACE, MEMORY, one_corpus
from turn_data import DISCLOSURE, HEDGE, canonical, journal_entry, journal_line


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    return path


THREE_TURNS = [
    journal_entry(1, "Why does light exist?", LIGHT_SURFACE, "teaching"),
    journal_entry(2, "What is a pack?", "pack — a ratified lexicon.", "pack"),
    journal_entry(3, "Why does zorp exist?", DISCLOSURE, "none",
                  epistemic_state="undetermined", normative_clearance="suppressed",
                  refusal_emitted=True),
]


@pytest.fixture
def data_dirs(tmp_path: Path) -> list[str]:
    packs, teaching, _ = one_corpus(tmp_path, [LIGHT, KNOWLEDGE, MEMORY])
    return ["--packs", str(packs), "--teaching", str(teaching)]


def ingest(db: Path | str, path: Path, data_dirs: list[str]) -> Any:
    return cli("ingest", path, "--db", db, "--json", *data_dirs)


def test_a_journal_ingests_verbatim_with_every_field(
        store_db: Path | str, tmp_path: Path, data_dirs: list[str]) -> None:
    lines = [journal_line(entry) for entry in THREE_TURNS]
    result = ingest(store_db, write_lines(tmp_path / "turn_journal.jsonl", lines), data_dirs)
    assert result.exit_code == 0, result.output
    turns = table_rows(store_db, "turns")
    assert [t["turn_id"] for t in turns] == [1, 2, 3]
    assert [t["kind"] for t in turns] == ["workbench_journal"] * 3
    # The whole line is kept byte for byte, so anyone can re-check its digest.
    assert [t["line"] for t in turns] == lines
    first = turns[0]
    assert first["prompt"] == "Why does light exist?"
    assert first["timestamp"] == "2026-07-30T18:01:01.123456+00:00"
    assert first["grounding_source"] == "teaching"
    assert first["epistemic_state"] == "decoded"
    assert first["normative_clearance"] == "violated"
    assert (first["verdict_identity"], first["verdict_safety"], first["verdict_ethics"]) == (
        None, "cleared", "violated")
    assert first["trace_hash"] == "0" * 63 + "1"
    assert first["trace_integrity"] == "pipeline_trace"
    assert first["journal_digest"] == json.loads(lines[0])["journal_digest"]
    assert bool(turns[2]["refusal_emitted"]) is True
    assert turns[2]["normative_clearance"] == "suppressed"
    stored = json.loads(first["line"])
    del stored["journal_digest"]
    assert "sha256:" + hashlib.sha256(canonical(stored).encode()).hexdigest() == \
        first["journal_digest"]
    # The teaching turn verified against the chain CORE used; the others are not checked.
    verification = {row[0]: row[1:] for row in query(
        store_db, "SELECT t.turn_id, s.verification, s.chain_id, s.corpus_id, s.surface_form "
                  "FROM turns t JOIN surface_records s ON s.surface_id = t.surface_id")}
    assert verification == {
        1: ("verified", "cause_light_reveals_truth", "cognition_chains_v1", "single"),
        2: ("not_checked", None, None, None),
        3: ("not_checked", None, None, None),
    }
    assert cli("verify", "--db", store_db).exit_code == 0


@pytest.mark.parametrize(("tamper", "reason"), [
    (lambda e: {**e, "prompt": "Why does light not exist?"}, "journal_digest"),
    (lambda e: {**e, "turn_id": 3}, "turn_id: expected 2, found 3"),
    (lambda e: {**e, "turn_id": 1}, "turn_id: expected 2, found 1"),
])
def test_a_tampered_or_out_of_order_journal_is_refused_whole(
        store_db: Path | str, tmp_path: Path, data_dirs: list[str], tamper: Any,
        reason: str) -> None:
    lines = [journal_line(entry) for entry in THREE_TURNS]
    # The digest stays as written: an edit after writing no longer matches it.
    lines[1] = canonical(tamper(json.loads(lines[1])))
    path = write_lines(tmp_path / "turn_journal.jsonl", lines)
    result = ingest(store_db, path, data_dirs)
    assert result.exit_code == 2
    errors = json.loads(result.stdout)["batches"][0]["errors"]
    assert errors[0].startswith(f"{path}:2: {reason}"), errors
    assert query(store_db, "SELECT count(*) FROM turns") == [(0,)]
    assert query(store_db, "SELECT count(*) FROM ingest_batches") == [(0,)]


def test_a_journal_ingested_again_after_it_grew_adds_only_its_new_turns(
        store_db: Path | str, tmp_path: Path, data_dirs: list[str]) -> None:
    path = tmp_path / "turn_journal.jsonl"
    lines = [journal_line(entry) for entry in THREE_TURNS]
    assert ingest(store_db, write_lines(path, lines[:2]), data_dirs).exit_code == 0
    result = ingest(store_db, write_lines(path, lines), data_dirs)
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout)["batches"][0]["tables"]["turns"]
    assert counts == {"new": 1, "present": 2}
    assert query(store_db, "SELECT turn_id FROM turns ORDER BY seq") == [(1,), (2,), (3,)]


def test_chat_runtime_outputs_without_subject_or_intent_verify(
        store_db: Path | str, tmp_path: Path, data_dirs: list[str]) -> None:
    outputs = [
        {"prompt": "Why does knowledge require evidence?", "surface": KNOWLEDGE_SURFACE,
         "grounding_source": "teaching", "epistemic_state": "decoded",
         "normative_clearance": "violated", "normative_detail": "acknowledge_uncertainty",
         "dispatch_trace": [["teaching", "admitted", "teaching_standard_surface_found"]]},
        {"prompt": "Why does light exist?", "surface": HEDGE + LIGHT_SURFACE,
         "grounding_source": "teaching", "epistemic_state": "decoded",
         "normative_clearance": "cleared", "turn": 0, "trace_hash": ""},
    ]
    path = write_lines(tmp_path / "chat.jsonl", [json.dumps(o, ensure_ascii=False)
                                                 for o in outputs])
    result = ingest(store_db, path, data_dirs)
    assert result.exit_code == 0, result.output
    rows = query(store_db,
                 "SELECT t.kind, t.turn_id, t.normative_detail, s.verification, s.chain_id, "
                 "s.subject, s.surface_prefix FROM turns t JOIN surface_records s "
                 "ON s.surface_id = t.surface_id ORDER BY t.seq")
    assert rows == [
        ("chat_runtime", None, "acknowledge_uncertainty", "verified",
         "cause_knowledge_requires_evidence", "knowledge", None),
        ("turn_event", 0, None, "verified", "cause_light_reveals_truth", "light", HEDGE),
    ]


def test_identical_outputs_on_two_lines_are_two_turns(
        store_db: Path | str, tmp_path: Path, data_dirs: list[str]) -> None:
    output = json.dumps({"prompt": "Why does light exist?", "surface": LIGHT_SURFACE,
                         "grounding_source": "teaching", "epistemic_state": "decoded",
                         "normative_clearance": "violated"}, ensure_ascii=False)
    result = ingest(store_db, write_lines(tmp_path / "chat.jsonl", [output, output]), data_dirs)
    assert result.exit_code == 0, result.output
    assert query(store_db, "SELECT count(*) FROM turns") == [(2,)]
    assert query(store_db, "SELECT count(*) FROM surface_records") == [(1,)]
    # Ingesting the same file again adds nothing.
    again = ingest(store_db, tmp_path / "chat.jsonl", data_dirs)
    assert json.loads(again.stdout)["batches"][0]["tables"]["turns"] == {"new": 0, "present": 2}


def test_turns_are_append_only_for_any_connection(tmp_path: Path, data_dirs: list[str]) -> None:
    import sqlite3

    db = tmp_path / "audit.db"
    path = write_lines(tmp_path / "j.jsonl", [journal_line(THREE_TURNS[0])])
    assert ingest(db, path, data_dirs).exit_code == 0
    connection = sqlite3.connect(db)
    for statement in ("UPDATE turns SET prompt = 'x'", "DELETE FROM turns",
                      "REPLACE INTO turns SELECT * FROM turns",
                      "INSERT OR REPLACE INTO turns (rowid, turn_key, seq, batch_id, kind, "
                      "grounding_source, surface_id, line) SELECT rowid, 'f', 1, 1, 'k', 'none',"
                      " surface_id, line FROM turns"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            connection.execute(statement)
    connection.close()
    assert cli("verify", "--db", db).exit_code == 0
