"""Surface records through `core-audit ingest` and `core-audit surface --record`.

ADR-0052 provenance: grounding_source is a closed set of eight (core-facts.md), teaching
surfaces are re-derived from the registered corpora and packs (verified / mismatch /
unresolvable), every other source is stored as received (not_checked). Expected values are
typed out from the ADR, core-facts.md and docs/design.md.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cli_runs import cli
from jsonl_files import write_jsonl
from raw_reads import query, table_rows
from teaching_data import (
    KNOWLEDGE,
    KNOWLEDGE_SURFACE,
    LIGHT,
    LIGHT_SURFACE,
    MEMORY,
    MEMORY_SURFACE,
    chain,
    entry,
    one_corpus,
    verified_single,
    write_corpus,
    write_pack,
    write_registry,
)

from store.model.teaching_surface import default_registry, resolve_teaching_surface

EIGHT_SOURCES = ("vault", "pack", "teaching", "none", "partial", "oov", "deduction", "curriculum")

ADR_CASES = [
    ("light", "cause", LIGHT_SURFACE),
    ("knowledge", "cause", KNOWLEDGE_SURFACE),
    ("memory", "verification", MEMORY_SURFACE),
]

# The ADR's chains, typed out from its table (ADR-0052, "Three chains ship in v1").
ADR_CHAINS = {
    "light": ("cause_light_reveals_truth", "reveals", "truth",
              ["cognition.illumination", "logos.core"], ["cognition.truth"]),
    "knowledge": ("cause_knowledge_requires_evidence", "requires", "evidence",
                  ["cognition.knowledge", "epistemic.ground"], ["cognition.evidence"]),
    "memory": ("verification_memory_requires_recall", "requires", "recall",
               ["cognition.memory", "memory.semantic"], ["operation.recall"]),
}


def teaching(subject: str, intent: str, surface: str, **extra: Any) -> dict[str, Any]:
    return {"grounding_source": "teaching", "surface": surface, "subject": subject,
            "intent": intent, **extra}


def ingest(db: Path, path: Path, *extra: str | Path) -> Any:
    result = cli("ingest", path, "--db", db, "--json", *extra)
    return result


def summary(result: Any) -> dict[str, Any]:
    return json.loads(result.stdout)


def surfaces(db: Path) -> list[dict[str, Any]]:
    return table_rows(db, "surface_records")


def assert_nothing_written(db: Path) -> None:
    # The store was created at head by the refused run; not one row reached it.
    for table in ("ingest_batches", "surface_records", "surface_occurrences", "tree_heads",
                  "log_subtrees"):
        assert query(db, f"SELECT COUNT(*) FROM {table}") == [(0,)], table


# -- 1. grounding_source is a closed set; bad lines are rejected, not coerced ----------------


def test_each_of_the_eight_grounding_sources_is_accepted(store_db: Path | str,
        tmp_path: Path) -> None:
    db = store_db
    records = [
        teaching("light", "cause", LIGHT_SURFACE) if source == "teaching"
        else {"grounding_source": source, "surface": f"a {source} surface"}
        for source in EIGHT_SOURCES
    ]
    result = ingest(db, write_jsonl(tmp_path / "in.jsonl", records))
    assert result.exit_code == 0, result.output
    stored = {row["grounding_source"]: row for row in surfaces(db)}
    assert set(stored) == set(EIGHT_SOURCES)
    for source in EIGHT_SOURCES:
        expected = "verified" if source == "teaching" else "not_checked"
        assert stored[source]["verification"] == expected, source
    assert stored["vault"]["surface"] == "a vault surface"
    assert query(db, "SELECT COUNT(*) FROM surface_occurrences") == [(8,)]


def test_a_none_record_may_omit_its_surface(store_db: Path | str, tmp_path: Path) -> None:
    db = store_db
    record = {"grounding_source": "none", "subject": "light", "intent": "definition"}
    result = ingest(db, write_jsonl(tmp_path / "in.jsonl", [record]))
    assert result.exit_code == 0, result.output
    [row] = surfaces(db)
    assert (row["grounding_source"], row["surface"], row["verification"]) == (
        "none", None, "not_checked")


@pytest.mark.parametrize("bad", ["bogus", "Teaching", "", "NONE", " none", "pack "])
def test_an_unknown_grounding_source_rejects_the_file(store_db: Path | str,
        tmp_path: Path, bad: str) -> None:
    db = store_db
    path = write_jsonl(tmp_path / "in.jsonl", [
        {"grounding_source": "vault", "surface": "fine"},
        {"grounding_source": bad, "surface": "something"},
    ])
    result = ingest(db, path)
    assert result.exit_code == 2
    [batch] = summary(result)["batches"]
    assert batch["rejected"] is True
    [error] = batch["errors"]
    assert error.startswith(f"{path}:2: grounding_source")
    assert repr(bad) in error
    assert_nothing_written(db)  # in particular, nothing stored as "none"


def test_rejection_is_reported_as_path_line_on_stderr(store_db: Path | str, tmp_path: Path) -> None:
    db = store_db
    path = write_jsonl(tmp_path / "in.jsonl", [
        {"grounding_source": "none"},
        {"grounding_source": "none"},
        {"grounding_source": "bogus", "surface": "x"},
    ])
    result = cli("ingest", path, "--db", db)
    assert result.exit_code == 2
    assert f"{path}:3: grounding_source: 'bogus' is not one of" in result.stderr
    assert f"{path}: rejected, nothing written" in result.stderr
    assert_nothing_written(db)


@pytest.mark.parametrize(("record", "field"), [
    ({"grounding_source": 7, "surface": "x"}, "grounding_source"),
    ({"grounding_source": None, "surface": "x"}, "grounding_source"),
    ({"grounding_source": ["teaching"], "surface": "x"}, "grounding_source"),
    ({"grounding_source": "pack", "surface": 3}, "surface"),
    ({"grounding_source": "none", "surface": ["x"]}, "surface"),
    ({"grounding_source": "pack", "surface": "x", "intent": 1}, "intent"),
    ({"grounding_source": "pack", "surface": "x", "subject": ["light"]}, "subject"),
    ({"grounding_source": "pack", "surface": "x", "prompt": {"text": "?"}}, "prompt"),
    ({"grounding_source": "pack", "surface": "x", "turn_id": 12}, "turn_id"),
    ({"grounding_source": "pack", "surface": "x", "session_id": True}, "session_id"),
    ({"grounding_source": "teaching", "surface": LIGHT_SURFACE, "subject": "light",
      "intent": "cause", "corpus_id": 1}, "corpus_id"),
    ({"grounding_source": "teaching", "surface": LIGHT_SURFACE, "subject": "light",
      "intent": "cause", "chain_id": 2.5}, "chain_id"),
])
def test_wrong_field_types_are_rejected(store_db: Path | str,
        tmp_path: Path, record: dict[str, Any],
                                        field: str) -> None:
    db = store_db
    path = write_jsonl(tmp_path / "in.jsonl", [record])
    result = ingest(db, path)
    assert result.exit_code == 2
    [error] = summary(result)["batches"][0]["errors"]
    assert error.startswith(f"{path}:1: {field}: expected a string"), error
    assert_nothing_written(db)


@pytest.mark.parametrize("source", [s for s in EIGHT_SOURCES if s != "none"])
def test_a_record_other_than_none_needs_a_surface(store_db: Path | str,
        tmp_path: Path, source: str) -> None:
    db = store_db
    path = write_jsonl(tmp_path / "in.jsonl", [
        {"grounding_source": source, "subject": "light", "intent": "cause"},
        {"grounding_source": source, "surface": None},
    ])
    result = ingest(db, path)
    assert result.exit_code == 2
    errors = summary(result)["batches"][0]["errors"]
    assert [e.split(": ", 2)[:2] for e in errors] == [[f"{path}:1", "surface"],
                                                     [f"{path}:2", "surface"]]
    assert_nothing_written(db)


# -- 2. teaching surfaces re-derived; other sources stored as received ----------------------


@pytest.mark.parametrize(("subject", "intent", "expected"), ADR_CASES)
def test_the_adr_surfaces_are_verified(store_db: Path | str,
        tmp_path: Path, subject: str, intent: str,
                                       expected: str) -> None:
    db = store_db
    result = ingest(db, write_jsonl(tmp_path / "in.jsonl", [teaching(subject, intent, expected)]))
    assert result.exit_code == 0, result.output
    [row] = surfaces(db)
    assert row["verification"] == "verified"
    assert row["surface"].encode("utf-8") == expected.encode("utf-8")
    assert row["expected_surface"] is None


@pytest.mark.parametrize(("subject", "intent", "adr_surface", "received"), [
    # a domain one letter off (an en dash for the em dash is no template: other_form)
    ("light", "cause", LIGHT_SURFACE, LIGHT_SURFACE.replace("logos.core", "logos.cores")),
    ("knowledge", "cause", KNOWLEDGE_SURFACE, KNOWLEDGE_SURFACE[:-1]),  # final "." missing
    ("memory", "verification", MEMORY_SURFACE, MEMORY_SURFACE.replace("recall ", "recalls ")),
])
def test_a_surface_one_character_off_is_a_mismatch_kept_verbatim(store_db: Path | str,
        tmp_path: Path, subject: str, intent: str, adr_surface: str, received: str) -> None:
    db = store_db
    record = teaching(subject, intent, received, session_id="s1", turn_id="t1")
    result = ingest(db, write_jsonl(tmp_path / "in.jsonl", [record]))
    assert result.exit_code == 0, result.output
    [row] = surfaces(db)
    assert row["verification"] == "mismatch"
    assert row["surface"].encode("utf-8") == received.encode("utf-8")  # never rewritten
    assert row["expected_surface"].encode("utf-8") == adr_surface.encode("utf-8")


def test_the_right_surface_under_the_wrong_chain_id_is_a_mismatch(store_db: Path | str,
        tmp_path: Path) -> None:
    db = store_db
    record = teaching("light", "cause", LIGHT_SURFACE,
                      corpus_id="cognition_chains_v1",
                      chain_id="cause_knowledge_requires_evidence")
    result = ingest(db, write_jsonl(tmp_path / "in.jsonl", [record]))
    assert result.exit_code == 0, result.output
    [row] = surfaces(db)
    assert row["verification"] == "mismatch"
    assert row["surface"] == LIGHT_SURFACE
    assert row["chain_id"] == "cause_knowledge_requires_evidence"  # what CORE said, kept
    assert row["expected_surface"] == LIGHT_SURFACE


def test_the_right_surface_under_the_wrong_corpus_id_is_a_mismatch(store_db: Path | str,
        tmp_path: Path) -> None:
    db = store_db
    record = teaching("light", "cause", LIGHT_SURFACE, corpus_id="cognition_chains_v2")
    result = ingest(db, write_jsonl(tmp_path / "in.jsonl", [record]))
    assert result.exit_code == 0, result.output
    [row] = surfaces(db)
    assert (row["verification"], row["corpus_id"]) == ("mismatch", "cognition_chains_v2")


def test_naming_the_right_chain_and_corpus_verifies(store_db: Path | str, tmp_path: Path) -> None:
    db = store_db
    record = teaching("memory", "verification", MEMORY_SURFACE,
                      corpus_id="cognition_chains_v1",
                      chain_id="verification_memory_requires_recall")
    result = ingest(db, write_jsonl(tmp_path / "in.jsonl", [record]))
    assert result.exit_code == 0, result.output
    assert [r["verification"] for r in surfaces(db)] == ["verified"]


LAMP_SURFACE = LIGHT_SURFACE.replace("light", "lamp")  # no chain has the subject lamp
V9_SURFACE = LIGHT_SURFACE.replace("cognition_chains_v1", "cognition_chains_v9")  # no corpus


# core-interop.md section 7: the surface text alone says S and C; subject and intent are
# hints, so the old cases (LIGHT_SURFACE under intent verification, ...) now verify.
# The stored subject is the record's hint, else the one the surface text names.
@pytest.mark.parametrize(("surface", "subject", "intent", "stored_subject"), [
    (LAMP_SURFACE, "lamp", "cause", "lamp"),
    (LAMP_SURFACE, None, None, "lamp"),
    (V9_SURFACE, "light", "cause", "light"),
    (V9_SURFACE, "", "definition", ""),
    (MEMORY_SURFACE.replace("memory", "recall", 1), None, "cause", "recall"),  # no chain
])
def test_a_teaching_record_without_a_chain_is_unresolvable(store_db: Path | str,
        tmp_path: Path, surface: str, subject: str | None, intent: str | None,
        stored_subject: str) -> None:
    db = store_db
    record = {"grounding_source": "teaching", "surface": surface}
    if subject is not None:
        record["subject"] = subject
    if intent is not None:
        record["intent"] = intent
    result = ingest(db, write_jsonl(tmp_path / "in.jsonl", [record]))
    assert result.exit_code == 0, result.output
    [row] = surfaces(db)
    assert row["verification"] == "unresolvable"
    assert row["surface"] == surface
    assert row["subject"] == stored_subject and row["intent"] == intent
    for column in ("expected_surface", "chain_provenance", "pack_id", "pack_version",
                   "connective", "object", "subject_domains", "object_domains"):
        assert row[column] is None, column


@pytest.mark.parametrize(("subject", "intent"), [
    ("light", "verification"), ("memory", "cause"), ("lamp", "cause"), ("light", "definition"),
    ("", "cause"), (None, "cause"), ("light", None),
])
def test_wrong_or_missing_subject_and_intent_hints_still_verify(store_db: Path | str,
        tmp_path: Path, subject: str | None, intent: str | None) -> None:
    record = {"grounding_source": "teaching", "surface": LIGHT_SURFACE}
    if subject is not None:
        record["subject"] = subject
    if intent is not None:
        record["intent"] = intent
    assert ingest(store_db, write_jsonl(tmp_path / "in.jsonl", [record])).exit_code == 0
    [row] = surfaces(store_db)
    assert (row["verification"], row["chain_id"]) == ("verified", "cause_light_reveals_truth")


@pytest.mark.parametrize("source", [s for s in EIGHT_SOURCES if s != "teaching"])
def test_other_sources_are_stored_as_received(store_db: Path | str,
        tmp_path: Path, source: str) -> None:
    db = store_db
    # Even a byte-exact ADR surface under another source is not re-derived or relabelled.
    record = {"grounding_source": source, "surface": LIGHT_SURFACE, "subject": "light",
              "intent": "cause", "corpus_id": "somewhere", "chain_id": "some_chain"}
    result = ingest(db, write_jsonl(tmp_path / "in.jsonl", [record]))
    assert result.exit_code == 0, result.output
    [row] = surfaces(db)
    assert row["verification"] == "not_checked"
    assert {k: row[k] for k in record} == record
    for column in ("expected_surface", "chain_provenance", "pack_id", "pack_version",
                   "connective", "object", "subject_domains", "object_domains"):
        assert row[column] is None, column


# -- 2b. --packs / --teaching choose what teaching surfaces are checked against -------------


def ingest_with(tmp_path: Path, packs: Path, teaching_dir: Path,
                records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    db = tmp_path / "audit.db"
    result = ingest(db, write_jsonl(tmp_path / "in.jsonl", records),
                    "--packs", packs, "--teaching", teaching_dir)
    assert result.exit_code == 0, result.output
    return surfaces(db)


def test_a_registry_with_an_extra_chain_resolves_what_the_default_cannot(
        tmp_path: Path) -> None:
    # knowledge/verification has no chain in the ADR's corpus.
    packs, teaching_dir, _ = one_corpus(tmp_path / "data", [
        LIGHT, KNOWLEDGE, MEMORY,
        chain("verification_knowledge_requires_evidence", "knowledge", "verification",
              "requires", "evidence"),
    ])
    record = teaching("knowledge", "verification", KNOWLEDGE_SURFACE)
    default_db = tmp_path / "default.db"
    result = ingest(default_db, write_jsonl(tmp_path / "d.jsonl", [record]))
    assert result.exit_code == 0, result.output
    # The surface alone verifies against the cause chain: the intent is only a hint.
    assert [(r["verification"], r["chain_id"]) for r in surfaces(default_db)] == [
        ("verified", "cause_knowledge_requires_evidence")]
    # Both chains render these bytes: no single chain, both candidates (as light's at CORE).
    [row] = ingest_with(tmp_path, packs, teaching_dir, [record])
    assert row["verification"] == "verified"
    assert row["chain_id"] is None
    assert json.loads(row["candidate_chain_ids"]) == [
        "cause_knowledge_requires_evidence", "verification_knowledge_requires_evidence"]


def test_a_pack_with_other_domains_turns_the_adr_surface_into_a_mismatch(
        tmp_path: Path) -> None:
    pack_lines = [
        entry("light", ["cognition.illumination"]),  # one domain only
        entry("truth", ["cognition.truth"]),
    ]
    packs, teaching_dir, _ = one_corpus(tmp_path / "data", [LIGHT], pack_lines)
    [row] = ingest_with(tmp_path, packs, teaching_dir,
                        [teaching("light", "cause", LIGHT_SURFACE)])
    assert row["verification"] == "mismatch"
    assert row["surface"] == LIGHT_SURFACE
    assert row["expected_surface"] == (
        "light — teaching-grounded (cognition_chains_v1): cognition.illumination."
        " light reveals truth (cognition.truth). No session evidence yet."
    )
    assert json.loads(row["subject_domains"]) == ["cognition.illumination"]


def test_a_surface_naming_an_unregistered_corpus_is_unresolvable(
        tmp_path: Path) -> None:
    packs, teaching_dir = tmp_path / "packs", tmp_path / "teaching"
    write_pack(packs)
    write_corpus(teaching_dir, "chains/v2.jsonl", [LIGHT])
    write_registry(teaching_dir, [("cognition_chains_v2", "chains/v2.jsonl",
                                   "en_core_cognition_v1")])
    v2_surface = LIGHT_SURFACE.replace("(cognition_chains_v1)", "(cognition_chains_v2)")
    rows = ingest_with(tmp_path, packs, teaching_dir, [
        teaching("light", "cause", LIGHT_SURFACE, turn_id="t1"),
        teaching("light", "cause", v2_surface, turn_id="t2"),
    ])
    # The surface names cognition_chains_v1, which this registry lacks (section 7).
    assert [(r["surface"], r["verification"], r["corpus_id"]) for r in rows] == [
        (LIGHT_SURFACE, "unresolvable", "cognition_chains_v1"),
        (v2_surface, "verified", "cognition_chains_v2"),
    ]
    assert rows[0]["expected_surface"] is None


def test_a_corpus_without_the_chain_leaves_it_unresolvable(tmp_path: Path) -> None:
    packs, teaching_dir, _ = one_corpus(tmp_path / "data", [KNOWLEDGE])
    rows = ingest_with(tmp_path, packs, teaching_dir, [
        teaching("light", "cause", LIGHT_SURFACE),
        teaching("knowledge", "cause", KNOWLEDGE_SURFACE),
    ])
    assert [r["verification"] for r in rows] == ["unresolvable", "verified"]


# -- 3. content rows and occurrences --------------------------------------------------------


def test_the_same_turn_twice_is_one_occurrence_counted_present(store_db: Path | str,
        tmp_path: Path) -> None:
    db = store_db
    turn = teaching("light", "cause", LIGHT_SURFACE, session_id="s1", turn_id="t1",
                    prompt="Why does light exist?")
    path = write_jsonl(tmp_path / "in.jsonl", [turn])
    first = ingest(db, path)
    assert first.exit_code == 0, first.output
    assert summary(first)["batches"][0]["tables"]["surface_occurrences"] == {
        "new": 1, "present": 0}
    second = ingest(db, write_jsonl(tmp_path / "again.jsonl", [turn]))
    assert second.exit_code == 0, second.output
    tables = summary(second)["batches"][0]["tables"]
    assert tables["surface_records"] == {"new": 0, "present": 1}
    assert tables["surface_occurrences"] == {"new": 0, "present": 1}
    assert query(db, "SELECT COUNT(*) FROM surface_records") == [(1,)]
    assert query(db, "SELECT session_id, turn_id, prompt FROM surface_occurrences") == [
        ("s1", "t1", "Why does light exist?")]
    # Twice within one file is also one occurrence.
    third = ingest(db, write_jsonl(tmp_path / "twice.jsonl", [turn, turn]))
    assert summary(third)["batches"][0]["tables"]["surface_occurrences"] == {
        "new": 0, "present": 2}
    assert query(db, "SELECT COUNT(*) FROM surface_occurrences") == [(1,)]
    assert cli("verify", "--db", db).exit_code == 0


def test_two_turns_with_one_surface_are_one_row_and_two_occurrences(store_db: Path | str,
        tmp_path: Path) -> None:
    db = store_db
    turns = [
        teaching("knowledge", "cause", KNOWLEDGE_SURFACE, session_id="s1", turn_id="t1",
                 prompt="Why does knowledge require evidence?"),
        teaching("knowledge", "cause", KNOWLEDGE_SURFACE, session_id="s2", turn_id="t1",
                 prompt="Why does knowledge require evidence?"),
    ]
    result = ingest(db, write_jsonl(tmp_path / "in.jsonl", turns))
    assert result.exit_code == 0, result.output
    tables = summary(result)["batches"][0]["tables"]
    assert tables["surface_records"] == {"new": 1, "present": 1}
    assert tables["surface_occurrences"] == {"new": 2, "present": 0}
    [row] = surfaces(db)
    occurrences = table_rows(db, "surface_occurrences")
    assert [(o["surface_id"], o["session_id"]) for o in occurrences] == [
        (row["surface_id"], "s1"), (row["surface_id"], "s2")]
    # A third turn differing only in its prompt is a third occurrence.
    other = dict(turns[0], prompt="Why is knowledge evidenced?")
    result = ingest(db, write_jsonl(tmp_path / "more.jsonl", [*turns, other]))
    tables = summary(result)["batches"][0]["tables"]
    assert tables["surface_occurrences"] == {"new": 1, "present": 2}
    assert query(db, "SELECT COUNT(*) FROM surface_records") == [(1,)]
    assert query(db, "SELECT COUNT(*) FROM surface_occurrences") == [(3,)]
    verified = cli("verify", "--db", db)
    assert verified.exit_code == 0, verified.output
    assert verified.stdout.startswith("intact: ")


def test_ids_are_sha256_of_the_design_recipe(store_db: Path | str, tmp_path: Path) -> None:
    """surface_id over the surface and its provenance; occurrence over the sighting."""
    db = store_db
    record = teaching("light", "cause", LIGHT_SURFACE, session_id="s1", turn_id="t7",
                      prompt="Why does light exist?")
    assert ingest(db, write_jsonl(tmp_path / "in.jsonl", [record])).exit_code == 0
    expected_surface_id = sha256_canonical({
        "grounding_source": "teaching", "surface": LIGHT_SURFACE, "subject": "light",
        "intent": "cause", "corpus_id": "cognition_chains_v1",
        "chain_id": "cause_light_reveals_truth", "pack_id": "sample_en_cognition_v1",
        "subject_domains": ["cognition.illumination", "logos.core"],
        "object_domains": ["cognition.truth"],
        **verified_single("cause_light_reveals_truth"),
    })
    expected_occurrence_id = sha256_canonical({
        "surface_id": expected_surface_id, "session_id": "s1", "turn_id": "t7",
        "prompt": "Why does light exist?",
    })
    [row] = surfaces(db)
    [occurrence] = table_rows(db, "surface_occurrences")
    assert row["surface_id"] == expected_surface_id
    assert (occurrence["occurrence_id"], occurrence["surface_id"]) == (
        expected_occurrence_id, expected_surface_id)


def sha256_canonical(obj: Any) -> str:
    """docs/design.md's recipe, written out here rather than imported from the code under test."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("subject", ["light", "knowledge", "memory"])
def test_a_verified_row_carries_the_adr_provenance(store_db: Path | str,
        tmp_path: Path, subject: str) -> None:
    intent, surface = {s: (i, x) for s, i, x in ADR_CASES}[subject]
    chain_id, connective, obj, subject_domains, object_domains = ADR_CHAINS[subject]
    db = store_db
    assert ingest(db, write_jsonl(tmp_path / "in.jsonl",
                                  [teaching(subject, intent, surface)])).exit_code == 0
    [row] = surfaces(db)
    assert {k: row[k] for k in ("grounding_source", "surface", "subject", "intent",
                                "corpus_id", "chain_id", "chain_provenance", "pack_id",
                                "pack_version", "connective", "object", "verification",
                                "expected_surface")} == {
        "grounding_source": "teaching",
        "surface": surface,
        "subject": subject,
        "intent": intent,
        "corpus_id": "cognition_chains_v1",
        "chain_id": chain_id,
        "chain_provenance": "adr-0052:reviewed:2026-05-18",
        "pack_id": "sample_en_cognition_v1",
        "pack_version": "1.0.0-sample",  # packs/sample_en_cognition_v1/manifest.json
        "connective": connective,
        "object": obj,
        "verification": "verified",
        "expected_surface": None,
    }
    assert json.loads(row["subject_domains"]) == subject_domains
    assert json.loads(row["object_domains"]) == object_domains


def test_mixed_files_keep_the_ledger_intact(store_db: Path | str,
        tmp_path: Path, examples_path: Path) -> None:
    db = store_db
    assert cli("ingest", examples_path, "--db", db).exit_code == 0
    records = [teaching(s, i, x, turn_id=s) for s, i, x in ADR_CASES]
    records.append({"grounding_source": "none", "subject": "light", "intent": "cause"})
    assert ingest(db, write_jsonl(tmp_path / "s.jsonl", records)).exit_code == 0
    assert ingest(db, write_jsonl(tmp_path / "s2.jsonl", records)).exit_code == 0
    result = cli("verify", "--db", db)
    assert result.exit_code == 0, result.output
    assert query(db, "SELECT COUNT(*) FROM surface_records") == [(4,)]
    assert query(db, "SELECT COUNT(*) FROM surface_occurrences") == [(4,)]


# -- 4. core-audit surface --record ---------------------------------------------------------


def test_surface_record_appends_a_verified_record(store_db: Path | str, tmp_path: Path) -> None:
    db = store_db
    result = cli("surface", "light", "--intent", "cause", "--record", "--db", db)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed["surface"] == LIGHT_SURFACE
    assert printed["grounding_source"] == "teaching"
    assert (printed["corpus_id"], printed["chain_id"], printed["pack_id"]) == (
        "cognition_chains_v1", "cause_light_reveals_truth", "sample_en_cognition_v1")
    assert printed["recorded"] == {"batch_id": 1, "new_rows": 2, "already_in": []}
    [row] = surfaces(db)
    assert (row["surface"], row["verification"], row["subject"], row["intent"]) == (
        LIGHT_SURFACE, "verified", "light", "cause")
    assert row["surface_id"] == sha256_canonical({
        "grounding_source": "teaching", "surface": LIGHT_SURFACE, "subject": "light",
        "intent": "cause", "corpus_id": "cognition_chains_v1",
        "chain_id": "cause_light_reveals_truth", "pack_id": "sample_en_cognition_v1",
        "subject_domains": ["cognition.illumination", "logos.core"],
        "object_domains": ["cognition.truth"],
        **verified_single("cause_light_reveals_truth"),
    })
    assert cli("verify", "--db", db).exit_code == 0


@pytest.mark.parametrize(("subject", "intent", "expected"), ADR_CASES)
def test_surface_record_ids_match_the_provenance(store_db: Path | str,
        tmp_path: Path, subject: str, intent: str,
                                                 expected: str) -> None:
    db = store_db
    result = cli("surface", subject, "--intent", intent, "--record", "--db", db)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["surface"] == expected
    [row] = surfaces(db)
    provenance = resolve_teaching_surface(default_registry(), subject, intent)
    assert provenance is not None
    assert (row["surface_id"], row["verification"]) == (sha256_canonical({
        "grounding_source": "teaching", "surface": expected, "subject": subject,
        "intent": intent, "corpus_id": "cognition_chains_v1", "chain_id": provenance.chain_id,
        "pack_id": "sample_en_cognition_v1",
        "subject_domains": list(ADR_CHAINS[subject][3]),
        "object_domains": list(ADR_CHAINS[subject][4]),
        **verified_single(ADR_CHAINS[subject][0]),
    }), "verified")


@pytest.mark.parametrize(("args", "reason"), [
    (["light", "--intent", "verification"], "no_chain"),
    (["lamp", "--intent", "cause"], "no_chain"),
    (["light", "--intent", "cause", "--gate-source", "vault"], "gate_source_not_empty_vault"),
    (["light", "--intent", "cause", "--language", "fr"], "output_language_not_en"),
])
def test_surface_record_not_engaged_appends_a_none_record(store_db: Path | str,
        tmp_path: Path, args: list[str],
                                                          reason: str) -> None:
    db = store_db
    result = cli("surface", *args, "--record", "--db", db)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert (printed["surface"], printed["grounding_source"], printed["reason"]) == (
        None, "none", reason)
    assert printed["recorded"]["new_rows"] == 2
    [row] = surfaces(db)
    assert (row["grounding_source"], row["surface"], row["verification"]) == (
        "none", None, "not_checked")
    assert (row["subject"], row["intent"]) == (args[0], args[2])


def test_surface_record_twice_is_one_row(store_db: Path | str, tmp_path: Path) -> None:
    db = store_db
    recorded = []
    for _ in range(2):
        result = cli("surface", "memory", "--intent", "verification", "--record", "--db", db)
        assert result.exit_code == 0
        recorded.append(json.loads(result.stdout)["recorded"])
    assert query(db, "SELECT COUNT(*) FROM surface_records") == [(1,)]
    assert query(db, "SELECT COUNT(*) FROM surface_occurrences") == [(1,)]
    # The second time nothing is new: no batch is written, and it says which one holds it.
    assert query(db, "SELECT COUNT(*) FROM ingest_batches") == [(1,)]
    assert recorded[1] == {"batch_id": None, "new_rows": 0, "already_in": [1]}


def test_surface_record_uses_the_given_registry(store_db: Path | str, tmp_path: Path) -> None:
    packs, teaching_dir, _ = one_corpus(tmp_path / "data", [
        chain("verification_knowledge_requires_evidence", "knowledge", "verification",
              "requires", "evidence"),
    ])
    db = store_db
    result = cli("surface", "knowledge", "--intent", "verification", "--packs", packs,
                 "--teaching", teaching_dir, "--record", "--db", db)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["surface"] == KNOWLEDGE_SURFACE
    [row] = surfaces(db)
    assert (row["verification"], row["chain_id"]) == (
        "verified", "verification_knowledge_requires_evidence")


def test_a_nul_in_any_text_is_refused_on_every_backend(store_db: Path | str,
                                                       tmp_path: Path) -> None:
    record = teaching("light", "cause", LIGHT_SURFACE, prompt="Why does light\x00 exist?")
    path = write_jsonl(tmp_path / "nul.jsonl", [teaching("memory", "verification",
                                                         MEMORY_SURFACE), record])
    result = ingest(store_db, path)
    assert result.exit_code == 2
    assert summary(result)["batches"][0]["errors"] == [
        f"{path}:2: a text value holds U+0000 (NUL), which the store refuses "
        "(PostgreSQL cannot store it)"]
    assert_nothing_written(store_db)
