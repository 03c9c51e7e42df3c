"""ADR-0052's surface: the three examples byte for byte, None cases, engagement, provenance."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import subprocess_environ
from teaching_data import (
    KNOWLEDGE,
    KNOWLEDGE_SURFACE,
    LIGHT,
    LIGHT_SURFACE,
    MEMORY,
    MEMORY_SURFACE,
    entry,
    one_corpus,
    verified_single,
)

from store.model.corpora import TeachingIntent
from store.model.predicates import CONNECTIVES, humanize_predicate
from store.model.surface_ids import surface_id, surface_identity
from store.model.surface_records import SurfaceRecord, check_surface
from store.model.teaching_registry import load_teaching_registry
from store.model.teaching_surface import (
    DisengageReason,
    GroundingSource,
    NotEngaged,
    TeachingSurfaceProvenance,
    default_registry,
    engage_teaching_surface,
    resolve_teaching_surface,
    teaching_grounded_surface,
)

REPO = Path(__file__).resolve().parents[2]
ADR_CASES = [
    ("light", "cause", LIGHT_SURFACE),
    ("knowledge", "cause", KNOWLEDGE_SURFACE),
    ("memory", "verification", MEMORY_SURFACE),
]


def run_cli(*args: str, seed: str = "0") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", "from store.cli import main; main()", *args],
        capture_output=True, env=subprocess_environ(PYTHONHASHSEED=seed), cwd=REPO, check=False,
    )


@pytest.mark.parametrize(("subject", "intent", "expected"), ADR_CASES)
def test_adr_surfaces_from_the_library(subject: str, intent: str, expected: str) -> None:
    surface = teaching_grounded_surface(subject, intent)
    assert surface is not None
    assert surface.encode("utf-8") == expected.encode("utf-8")
    assert "\u2014" in surface and "\n" not in surface and "  " not in surface


@pytest.mark.parametrize(("subject", "intent", "expected"), ADR_CASES)
def test_adr_surfaces_from_core_audit_surface(subject: str, intent: str, expected: str) -> None:
    result = run_cli("surface", subject, "--intent", intent)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(b"\n") == 1
    assert expected.encode("utf-8") in result.stdout  # em dash as raw UTF-8, not \u escaped
    assert json.loads(result.stdout)["surface"] == expected


def test_cli_prints_the_full_provenance() -> None:
    result = run_cli("surface", "knowledge", "--intent", "cause")
    assert json.loads(result.stdout) == {
        "surface": KNOWLEDGE_SURFACE,
        "grounding_source": "teaching",
        "corpus_id": "cognition_chains_v1",
        "chain_id": "cause_knowledge_requires_evidence",
        "chain_provenance": "adr-0052:reviewed:2026-05-18",
        "pack_id": "sample_en_cognition_v1",  # the repository's sample, not CORE's pack
        "pack_version": "1.0.0-sample",
        "subject": "knowledge",
        "intent": "cause",
        "connective": "requires",
        "object": "evidence",
        "subject_domains": ["cognition.knowledge", "epistemic.ground"],
        "object_domains": ["cognition.evidence"],
        "hops": 0,
        "hop_chain_ids": [],
    }
    assert list(json.loads(result.stdout)) == [
        "surface", "grounding_source", "corpus_id", "chain_id", "chain_provenance", "pack_id",
        "pack_version", "subject", "intent", "connective", "object", "subject_domains",
        "object_domains", "hops", "hop_chain_ids",
    ]


def test_output_is_byte_identical_across_processes() -> None:
    runs = [run_cli("surface", "memory", "--intent", "verification", seed=seed)
            for seed in ("1", "2")]
    assert runs[0].returncode == runs[1].returncode == 0
    assert runs[0].stdout == runs[1].stdout
    checks = [run_cli("corpus", "check", "-v", seed=seed) for seed in ("3", "4")]
    assert checks[0].stdout == checks[1].stdout


@pytest.mark.parametrize(
    ("subject", "intent"),
    [
        ("", "cause"),
        ("   ", "cause"),
        (None, "cause"),
        ("light", "definition"),
        ("light", "comparison"),
        ("light", ""),
        ("light", None),
        ("truth", "cause"),  # pack-known, but no chain
        ("memory", "cause"),  # a chain exists only for verification
        ("light", "verification"),
        ("lights", "cause"),  # no stemming, no neighbourhood
        ("unknown", "verification"),
    ],
)
def test_no_surface(subject: object, intent: object) -> None:
    assert teaching_grounded_surface(subject, intent) is None


@pytest.mark.parametrize(
    ("subject", "intent"),
    [("Light", "cause"), ("  light ", "CAUSE"), ("LIGHT\t", " Cause "),
     ("light", TeachingIntent.CAUSE)],
)
def test_subject_and_intent_are_matched_lower_cased_and_stripped(
    subject: str, intent: object
) -> None:
    assert teaching_grounded_surface(subject, intent) == LIGHT_SURFACE


def test_cli_accepts_upper_case_intent_and_padded_subject() -> None:
    result = run_cli("surface", " Memory ", "--intent", "VERIFICATION")
    assert json.loads(result.stdout)["surface"] == MEMORY_SURFACE


def test_provenance_record() -> None:
    found = resolve_teaching_surface(default_registry(), "light", "cause")
    assert found == TeachingSurfaceProvenance(
        corpus_id="cognition_chains_v1",
        chain_id="cause_light_reveals_truth",
        chain_provenance="adr-0052:reviewed:2026-05-18",
        pack_id="sample_en_cognition_v1",
        pack_version="1.0.0-sample",
        subject="light",
        intent=TeachingIntent.CAUSE,
        connective="reveals",
        object="truth",
        subject_domains=("cognition.illumination", "logos.core"),
        object_domains=("cognition.truth",),
        surface=LIGHT_SURFACE,
    )
    assert found.grounding_source is GroundingSource.TEACHING
    with pytest.raises(AttributeError):
        found.surface = "edited"  # type: ignore[misc]


def test_surface_id_is_sha256_of_canonical_provenance_and_check() -> None:
    record = SurfaceRecord(GroundingSource.TEACHING, MEMORY_SURFACE, subject="memory",
                           intent="verification")
    checked = check_surface(record, default_registry())
    expected = {
        "grounding_source": "teaching",
        "surface": MEMORY_SURFACE,
        "subject": "memory",
        "intent": "verification",
        "corpus_id": "cognition_chains_v1",
        "chain_id": "verification_memory_requires_recall",
        "pack_id": "sample_en_cognition_v1",
        "subject_domains": ["cognition.memory", "memory.semantic"],
        "object_domains": ["operation.recall"],
        **verified_single("verification_memory_requires_recall"),
    }
    encoded = json.dumps(expected, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    expected_id = hashlib.sha256(encoded.encode("utf-8")).hexdigest()
    assert surface_id(surface_identity(checked)) == expected_id


def test_grounding_source_is_the_closed_set_of_eight() -> None:
    assert {s.value for s in GroundingSource} == {
        "vault", "pack", "teaching", "none", "partial", "oov", "deduction", "curriculum"}
    assert GroundingSource("teaching") == "teaching"


def test_engages_on_a_cold_start_english_turn() -> None:
    outcome = engage_teaching_surface(default_registry(), "knowledge", "cause",
                                      gate_source="empty_vault", output_language="en")
    assert isinstance(outcome, TeachingSurfaceProvenance)
    assert outcome.surface == KNOWLEDGE_SURFACE


@pytest.mark.parametrize(
    ("subject", "intent", "gate_source", "language", "reason"),
    [
        ("light", "cause", "vault", "en", DisengageReason.GATE_SOURCE),
        ("light", "cause", "", "en", DisengageReason.GATE_SOURCE),
        ("light", "cause", "empty_vault", "de", DisengageReason.OUTPUT_LANGUAGE),
        ("light", "cause", "empty_vault", "EN", DisengageReason.OUTPUT_LANGUAGE),
        ("light", "definition", "empty_vault", "en", DisengageReason.INTENT),
        ("  ", "cause", "empty_vault", "en", DisengageReason.EMPTY_SUBJECT),
        ("truth", "cause", "empty_vault", "en", DisengageReason.NO_CHAIN),
    ],
)
def test_engagement_conditions(subject: str, intent: str, gate_source: str, language: str,
                               reason: DisengageReason) -> None:
    outcome = engage_teaching_surface(default_registry(), subject, intent,
                                      gate_source=gate_source, output_language=language)
    assert isinstance(outcome, NotEngaged)
    assert outcome.reason is reason
    assert outcome.grounding_source is GroundingSource.NONE


def test_pack_in_another_language_does_not_engage(tmp_path: Path) -> None:
    packs, teaching, _ = one_corpus(tmp_path, [LIGHT])
    manifest = packs / "en_core_cognition_v1" / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "language": "fr"}))
    registry = load_teaching_registry(teaching, packs)
    outcome = engage_teaching_surface(registry, "light", "cause",
                                      gate_source="empty_vault", output_language="en")
    assert isinstance(outcome, NotEngaged)
    assert outcome.reason is DisengageReason.PACK_LANGUAGE


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["truth", "--intent", "cause"], "no_chain"),
        (["light", "--intent", "cause", "--gate-source", "vault"], "gate_source_not_empty_vault"),
        (["light", "--intent", "cause", "--language", "fr"], "output_language_not_en"),
        (["", "--intent", "cause"], "empty_subject"),
    ],
)
def test_cli_reports_why_nothing_engaged(args: list[str], reason: str) -> None:
    result = run_cli("surface", *args)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["surface"] is None
    assert payload["grounding_source"] == "none"
    assert payload["reason"] == reason


def test_cli_refuses_an_intent_outside_cause_and_verification() -> None:
    assert run_cli("surface", "light", "--intent", "definition").returncode == 2


def test_domain_counts_take_max_of_one_and_k(tmp_path: Path) -> None:
    lines = [{**LIGHT, "domains_subject_k": 0, "domains_object_k": -3},
             {**KNOWLEDGE, "domains_subject_k": 1, "domains_object_k": 5}, MEMORY]
    pack = [entry("light", ["a.one", "a.two"]), entry("truth", ["t.one", "t.two"]),
            entry("knowledge", ["k.one", "k.two", "k.three"]), entry("evidence", ["e.one"]),
            entry("memory", ["m.one"]), entry("recall", ["r.one"])]
    packs, teaching, _ = one_corpus(tmp_path, lines, pack)
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("light", "cause", registry=registry) == (
        "light — teaching-grounded (cognition_chains_v1): a.one. light reveals truth (t.one)."
        " No session evidence yet.")
    assert teaching_grounded_surface("knowledge", "cause", registry=registry) == (
        "knowledge — teaching-grounded (cognition_chains_v1): k.one. knowledge requires"
        " evidence (e.one). No session evidence yet.")
    assert teaching_grounded_surface("memory", "verification", registry=registry) == (
        "memory — teaching-grounded (cognition_chains_v1): m.one. memory requires recall"
        " (r.one). No session evidence yet.")


def test_humanized_connectives_in_the_surface(tmp_path: Path) -> None:
    lines = [{**LIGHT, "connective": "is_grounded_in"}, {**KNOWLEDGE, "connective": "has_steps"}]
    packs, teaching, _ = one_corpus(tmp_path, lines)
    registry = load_teaching_registry(teaching, packs)
    assert "light is grounded in truth (cognition.truth)" in str(
        teaching_grounded_surface("light", "cause", registry=registry))
    assert "knowledge has the following steps evidence (cognition.evidence)" in str(
        teaching_grounded_surface("knowledge", "cause", registry=registry))


def test_humanize_predicate_knows_exactly_the_26_connectives() -> None:
    assert {
        "is_defined_as", "is_caused_by", "has_steps", "contrasts_with", "corrects", "recalls",
        "is_verified_as", "addresses", "defines", "means", "grounds", "supports", "causes",
        "reveals", "precedes", "follows", "belongs_to", "answers", "is_grounded_in",
        "is_distinguished_from", "implies", "entails", "requires", "verifies", "evidences",
        "orders",
    } == CONNECTIVES
    assert humanize_predicate("has_steps") == "has the following steps"
    assert humanize_predicate("is_distinguished_from") == "is distinguished from"
    assert humanize_predicate("reveals") == "reveals"
    # core-interop.md section 2: CORE does not check connectives; others read `_` as a space.
    assert humanize_predicate("produces") == "produces"
    assert humanize_predicate("Is_Lit_By") == "Is Lit By"
    assert humanize_predicate("has steps") == "has steps"
