"""ADR-0052's load-time rules, resolution order and supersession, and `core-audit corpus check`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_runs import cli
from teaching_data import (
    CORPUS_ID,
    KNOWLEDGE,
    KNOWLEDGE_SURFACE,
    LIGHT,
    LIGHT_SURFACE,
    MEMORY,
    MEMORY_SURFACE,
    PACK_ID,
    chain,
    entry,
    one_corpus,
    write_corpus,
    write_pack,
    write_registry,
)

from store.model.corpora import CorpusError, TeachingIntent
from store.model.teaching_registry import load_teaching_registry
from store.model.teaching_surface import teaching_grounded_surface


def check(packs: Path, teaching: Path, *extra: str) -> tuple[int, list[str]]:
    result = cli("corpus", "check", "--packs", packs, "--teaching", teaching, *extra)
    return result.exit_code, result.output.splitlines()


def surface_in(tmp_path: Path, lines: list[Any], subject: str, intent: str,
               pack_lines: list[Any] | None = None) -> str | None:
    packs, teaching, _ = one_corpus(tmp_path, lines, pack_lines)
    registry = load_teaching_registry(teaching, packs)
    return teaching_grounded_surface(subject, intent, registry=registry)


PACK_WITH_EMPTY_DOMAINS = [
    entry("light", ["cognition.illumination", "logos.core"]), entry("truth", ["cognition.truth"]),
    entry("knowledge", ["cognition.knowledge", "epistemic.ground"]),
    entry("evidence", ["cognition.evidence"]), entry("memory", ["cognition.memory"]),
    entry("recall", ["operation.recall"]), entry("void", []),
]

# Each bad line goes to line 2, between two good chains; `words` must appear in the reason.
# core-interop.md section 2: errors are real defects, warnings lines CORE skips harmlessly.
DROPPED_LINES: list[tuple[str, Any, str, list[Any] | None, str]] = [
    ("intent outside cause/verification",
     chain("definition_light", "light", "definition", "reveals", "truth"), "intent", None,
     "warning"),
    ("intent comparison", chain("c", "light", "comparison", "reveals", "truth"), "intent", None,
     "warning"),
    ("subject not in the pack",
     chain("cause_lamp", "lamp", "cause", "reveals", "truth"), "'lamp'", None, "error"),
    ("object not in the pack",
     chain("cause_light_lamp", "light", "cause", "reveals", "lamp"), "'lamp'", None, "error"),
    ("subject without semantic_domains",
     chain("cause_void", "void", "cause", "reveals", "truth"), "'void'",
     PACK_WITH_EMPTY_DOMAINS, "error"),
    ("object without semantic_domains",
     chain("cause_light_void", "light", "cause", "reveals", "void"), "'void'",
     PACK_WITH_EMPTY_DOMAINS, "error"),
    ("malformed JSON", '{"chain_id": "broken", ', "JSON", None, "error"),
    ("not an object", '["light", "cause"]', "object", None, "error"),
    ("k is not a number", {**LIGHT, "domains_subject_k": "two"}, "domains_subject_k", None,
     "error"),
    ("k is null", {**LIGHT, "domains_object_k": None}, "domains_object_k", None, "error"),
    ("empty subject", {**LIGHT, "subject": ""}, "subject", None, "error"),
    ("blank object", {**LIGHT, "object": "   "}, "object", None, "error"),
]


@pytest.mark.parametrize(("label", "bad", "words", "pack", "severity"), DROPPED_LINES,
                         ids=[case[0] for case in DROPPED_LINES])
def test_each_load_rule_drops_its_line(tmp_path: Path, label: str, bad: Any, words: str,
                                       pack: list[Any] | None, severity: str) -> None:
    packs, teaching, corpus = one_corpus(tmp_path, [KNOWLEDGE, bad, MEMORY], pack)
    registry = load_teaching_registry(teaching, packs)
    [dropped] = [d for d in registry.dropped if d.source == corpus]
    assert (dropped.source, dropped.line, dropped.severity.value) == (corpus, 2, severity)
    assert words in dropped.reason
    assert teaching_grounded_surface("light", "cause", registry=registry) is None
    assert teaching_grounded_surface("knowledge", "cause", registry=registry) is not None

    status, output = check(packs, teaching)
    assert status == (1 if severity == "error" else 0)
    [line] = [o for o in output if o.startswith(f"{corpus}:")]
    assert line.startswith(f"{corpus}:2: {severity}: ")
    assert words in line
    assert output[-1].startswith("checked 1 corpus")


# Lines ADR-0052 would refuse but CORE loads (core-interop.md section 2).
LIGHT_PRODUCES = LIGHT_SURFACE.replace("light reveals truth", "light produces truth")
LOADED_LINES: list[tuple[str, Any, str, str | None]] = [
    ("connective humanize_predicate does not know",
     chain("cause_light_produces", "light", "cause", "produces", "truth"), LIGHT_PRODUCES,
     "connective"),
    ("connective in another case, shown with spaces",
     chain("cause_light_Is_Lit_By", "light", "cause", " Is_Lit_By ", "truth"),
     LIGHT_SURFACE.replace("light reveals truth", "light Is Lit By truth"), "connective"),
    ("missing chain_id", {k: v for k, v in LIGHT.items() if k != "chain_id"}, LIGHT_SURFACE,
     None),
    ("missing provenance", {k: v for k, v in LIGHT.items() if k != "provenance"},
     LIGHT_SURFACE, None),
    ("k as a numeric string", {**LIGHT, "domains_subject_k": "2"}, LIGHT_SURFACE, None),
    ("superseded_by is not a string", {**LIGHT, "superseded_by": 7}, LIGHT_SURFACE, None),
]


@pytest.mark.parametrize(("label", "line", "expected", "warning"), LOADED_LINES,
                         ids=[case[0] for case in LOADED_LINES])
def test_lines_core_loads(tmp_path: Path, label: str, line: Any, expected: str,
                          warning: str | None) -> None:
    packs, teaching, _ = one_corpus(tmp_path, [KNOWLEDGE, line, MEMORY])
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("light", "cause", registry=registry) == expected
    assert registry.errors == ()
    assert [w.line for w in registry.warnings] == ([2] if warning else [])
    if warning:
        assert warning in registry.warnings[0].reason
    status, _ = check(packs, teaching)
    assert status == 0


def test_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    packs, teaching, corpus = one_corpus(tmp_path, [LIGHT, "", "   ", "not json"])
    status, output = check(packs, teaching)
    assert status == 1
    assert output[0].startswith(f"{corpus}:4: ")


def test_a_clean_corpus_checks_with_status_zero(tmp_path: Path) -> None:
    packs, teaching, _ = one_corpus(tmp_path, [LIGHT, KNOWLEDGE, MEMORY])
    assert check(packs, teaching) == (
        0, ["checked 1 corpus (1 pack): 3 chains resolve, 0 inactive, 0 errors, 0 warnings"])


def test_the_shipped_corpus_is_clean() -> None:
    result = cli("corpus", "check", env={"CORE_AUDIT_PACKS": "", "CORE_AUDIT_TEACHING": ""})
    assert result.exit_code == 0, result.output
    assert result.output == (
        "checked 1 corpus (1 pack): 3 chains resolve, 0 inactive, 0 errors, 0 warnings\n")


def test_last_line_wins_within_a_corpus(tmp_path: Path) -> None:
    newer = chain("cause_light_is_grounded_in_truth", "light", "cause", "is_grounded_in",
                  "truth")
    packs, teaching, corpus = one_corpus(tmp_path, [LIGHT, KNOWLEDGE, newer])
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("light", "cause", registry=registry) == (
        "light — teaching-grounded (cognition_chains_v1): cognition.illumination; logos.core."
        " light is grounded in truth (cognition.truth). No session evidence yet.")
    status, output = check(packs, teaching, "-v")
    assert status == 0
    assert f"{corpus}:1: inactive: overridden by line 3" in output


def test_subject_intent_and_object_are_normalised_at_load(tmp_path: Path) -> None:
    shouty = {**LIGHT, "subject": " Light ", "intent": "CAUSE", "object": "TRUTH "}
    assert surface_in(tmp_path, [shouty], "light", "cause") == LIGHT_SURFACE


def test_a_later_line_with_different_case_still_overrides(tmp_path: Path) -> None:
    later = {**LIGHT, "chain_id": "later", "subject": "LIGHT", "connective": "grounds"}
    assert "light grounds truth" in str(surface_in(tmp_path, [LIGHT, later], "light", "cause"))


# --- supersession -------------------------------------------------------------------------

def test_superseded_by_retires_the_named_chain(tmp_path: Path) -> None:
    retiring = {**LIGHT, "superseded_by": "cause_knowledge_requires_evidence"}
    packs, teaching, corpus = one_corpus(tmp_path, [KNOWLEDGE, retiring, MEMORY])
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("knowledge", "cause", registry=registry) is None
    # the line that carries the field stays active
    assert teaching_grounded_surface("light", "cause", registry=registry) == LIGHT_SURFACE
    assert teaching_grounded_surface("memory", "verification", registry=registry) == (
        MEMORY_SURFACE)
    status, output = check(packs, teaching)
    assert status == 0  # retirement is reviewed history: a warning, not an error
    assert (f"{corpus}:1: warning: chain 'cause_knowledge_requires_evidence' is retired"
            " (superseded_by on line 2): CORE skips the line") in output


def test_a_replacement_chain_supersedes_the_old_one(tmp_path: Path) -> None:
    replacement = chain("cause_knowledge_is_grounded_in_evidence_v2", "knowledge", "cause",
                        "is_grounded_in", "evidence",
                        superseded_by="cause_knowledge_requires_evidence")
    surface = surface_in(tmp_path, [KNOWLEDGE, replacement], "knowledge", "cause")
    assert surface == (
        "knowledge — teaching-grounded (cognition_chains_v1): cognition.knowledge;"
        " epistemic.ground. knowledge is grounded in evidence (cognition.evidence)."
        " No session evidence yet.")


def test_a_retired_later_line_does_not_displace_an_earlier_one(tmp_path: Path) -> None:
    # core-interop.md section 2: the last valid, non-retired line wins.
    revised = {**KNOWLEDGE, "chain_id": "cause_knowledge_v2", "connective": "grounds"}
    retiring = {**MEMORY, "superseded_by": "cause_knowledge_v2"}
    assert surface_in(tmp_path, [KNOWLEDGE, revised, retiring], "knowledge", "cause") == (
        KNOWLEDGE_SURFACE)


def test_an_invalid_later_line_does_not_displace_an_earlier_one(tmp_path: Path) -> None:
    invalid = {**KNOWLEDGE, "connective": "grounds", "domains_object_k": None}
    assert surface_in(tmp_path, [KNOWLEDGE, invalid], "knowledge", "cause") == (
        KNOWLEDGE_SURFACE)


def test_supersession_names_a_chain_anywhere_in_the_file(tmp_path: Path) -> None:
    retiring = {**MEMORY, "superseded_by": "cause_knowledge_requires_evidence"}
    assert surface_in(tmp_path, [retiring, KNOWLEDGE], "knowledge", "cause") is None


def test_a_line_naming_itself_retires_itself(tmp_path: Path) -> None:
    # core-interop.md section 2 (observed running CORE): pass 1 retires every named id.
    itself = {**KNOWLEDGE, "superseded_by": "cause_knowledge_requires_evidence"}
    assert surface_in(tmp_path, [itself], "knowledge", "cause") is None


def test_superseded_by_is_stripped_but_chain_id_is_not(tmp_path: Path) -> None:
    padded = {**LIGHT, "chain_id": " padded "}
    retiring = {**MEMORY, "superseded_by": "  cause_knowledge_requires_evidence  "}
    padded_retirer = {**MEMORY, "chain_id": "m2", "superseded_by": " padded "}
    packs, teaching, _ = one_corpus(tmp_path, [KNOWLEDGE, padded, retiring, padded_retirer])
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("knowledge", "cause", registry=registry) is None
    # " padded " is retired as "padded": no exact match, so the light line stays.
    assert registry.chains[("light", TeachingIntent.CAUSE)].chain_id == " padded "


@pytest.mark.parametrize(
    "malformed",
    [
        '{"chain_id": "x", "superseded_by": "cause_knowledge_requires_evidence"',
        '["superseded_by", "cause_knowledge_requires_evidence"]',
    ],
)
def test_lines_that_are_not_objects_never_retire_anything(tmp_path: Path,
                                                         malformed: Any) -> None:
    packs, teaching, corpus = one_corpus(tmp_path, [KNOWLEDGE, malformed])
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("knowledge", "cause", registry=registry) == (
        KNOWLEDGE_SURFACE)
    assert [(d.source, d.line) for d in registry.dropped] == [(corpus, 2)]


@pytest.mark.parametrize(
    "dropped",
    [
        {**LIGHT, "intent": "admissibility", "superseded_by": "cause_knowledge_requires_evidence"},
        {**LIGHT, "object": "lamp", "superseded_by": "cause_knowledge_requires_evidence"},
        {**LIGHT, "domains_subject_k": None,
         "superseded_by": "cause_knowledge_requires_evidence"},
        {"superseded_by": " cause_knowledge_requires_evidence "},
    ],
)
def test_a_line_pass_two_drops_still_retires(tmp_path: Path, dropped: Any) -> None:
    # core-interop.md section 2: pass 1 reads every JSON object, valid chain or not.
    assert surface_in(tmp_path, [KNOWLEDGE, dropped], "knowledge", "cause") is None


@pytest.mark.parametrize("field", ["subject", "intent", "object", "connective"])
@pytest.mark.parametrize("value", [7, None, ["light"]])
def test_a_non_string_text_field_is_fatal(tmp_path: Path, field: str, value: Any) -> None:
    packs, teaching, corpus = one_corpus(tmp_path, [KNOWLEDGE, {**LIGHT, field: value}])
    with pytest.raises(CorpusError, match=f"{corpus}:2: chain.{field}"):
        load_teaching_registry(teaching, packs)
    status, output = check(packs, teaching)
    assert status == 1 and f"{corpus}:2: chain.{field}" in output[-1]


def test_a_missing_corpus_file_is_an_empty_corpus(tmp_path: Path) -> None:
    packs, teaching = tmp_path / "packs", tmp_path / "teaching"
    write_pack(packs)
    write_corpus(teaching, "b.jsonl", [KNOWLEDGE])
    write_registry(teaching, [("a_v1", "a.jsonl", PACK_ID), ("b_v1", "b.jsonl", PACK_ID)])
    registry = load_teaching_registry(teaching, packs)
    assert [c.corpus_id for c in registry.corpora] == ["a_v1", "b_v1"]
    assert registry.corpus("a_v1").chains == {}
    assert teaching_grounded_surface("knowledge", "cause", registry=registry) == (
        KNOWLEDGE_SURFACE.replace("cognition_chains_v1", "b_v1"))


# --- several corpora ----------------------------------------------------------------------

def two_corpora(tmp_path: Path, order: list[str]) -> tuple[Path, Path, dict[str, Path]]:
    packs, teaching = tmp_path / "packs", tmp_path / "teaching"
    write_pack(packs)
    files = {
        "first_v1": write_corpus(teaching, "a/first.jsonl", [KNOWLEDGE, LIGHT]),
        "second_v1": write_corpus(teaching, "b/second.jsonl", [
            chain("cause_knowledge_is_grounded_in_evidence", "knowledge", "cause",
                  "is_grounded_in", "evidence"), MEMORY]),
    }
    paths = {"first_v1": "a/first.jsonl", "second_v1": "b/second.jsonl"}
    write_registry(teaching, [(cid, paths[cid], PACK_ID) for cid in order])
    return packs, teaching, files


def test_the_earlier_registered_corpus_wins_a_collision(tmp_path: Path) -> None:
    packs, teaching, files = two_corpora(tmp_path, ["first_v1", "second_v1"])
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("knowledge", "cause", registry=registry) == (
        "knowledge — teaching-grounded (first_v1): cognition.knowledge; epistemic.ground."
        " knowledge requires evidence (cognition.evidence). No session evidence yet.")
    assert teaching_grounded_surface("memory", "verification", registry=registry) == (
        "memory — teaching-grounded (second_v1): cognition.memory; memory.semantic."
        " memory requires recall (operation.recall). No session evidence yet.")
    status, output = check(packs, teaching, "-v")
    assert status == 0
    assert (f"{files['second_v1']}:1: inactive: shadowed by corpus 'first_v1'"
            " (registered earlier)") in output


def test_registration_order_is_resolution_order(tmp_path: Path) -> None:
    packs, teaching, _ = two_corpora(tmp_path, ["second_v1", "first_v1"])
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("knowledge", "cause", registry=registry) == (
        "knowledge — teaching-grounded (second_v1): cognition.knowledge; epistemic.ground."
        " knowledge is grounded in evidence (cognition.evidence). No session evidence yet.")


def test_supersession_stays_inside_its_corpus(tmp_path: Path) -> None:
    packs, teaching = tmp_path / "packs", tmp_path / "teaching"
    write_pack(packs)
    write_corpus(teaching, "a.jsonl", [KNOWLEDGE])
    write_corpus(teaching, "b.jsonl",
                 [{**MEMORY, "superseded_by": "cause_knowledge_requires_evidence"}])
    write_registry(teaching, [("a_v1", "a.jsonl", PACK_ID), ("b_v1", "b.jsonl", PACK_ID)])
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("knowledge", "cause", registry=registry) is not None


def test_each_corpus_is_checked_against_its_own_pack(tmp_path: Path) -> None:
    packs, teaching = tmp_path / "packs", tmp_path / "teaching"
    write_pack(packs)
    write_pack(packs, [entry("light", ["x.light"], pack_id="tiny_v1"),
                       entry("truth", ["x.truth"], pack_id="tiny_v1")], pack_id="tiny_v1")
    write_corpus(teaching, "tiny.jsonl", [LIGHT, KNOWLEDGE])
    write_registry(teaching, [("tiny_chains_v1", "tiny.jsonl", "tiny_v1"),
                              (CORPUS_ID, "core.jsonl", PACK_ID)])
    write_corpus(teaching, "core.jsonl", [KNOWLEDGE])
    registry = load_teaching_registry(teaching, packs)
    assert [(d.source.name, d.line) for d in registry.dropped] == [("tiny.jsonl", 2)]
    assert teaching_grounded_surface("light", "cause", registry=registry) == (
        "light — teaching-grounded (tiny_chains_v1): x.light. light reveals truth (x.truth)."
        " No session evidence yet.")
    assert teaching_grounded_surface("knowledge", "cause", registry=registry) == KNOWLEDGE_SURFACE


@pytest.mark.parametrize(
    ("registry_text", "words"),
    [
        ("not json", "not valid JSON"),
        ('{"corpora": {}}', "expected a list"),
        ('{"corpora": [{"corpus_id": "a", "path": "a.jsonl"}]}', "pack_id"),
        ('{"corpora": [{"corpus_id": "a", "path": "a.jsonl", "pack_id": "../x"}]}',
         "plain name"),
        ('{"corpora": [{"corpus_id": "a", "path": "/etc/a.jsonl", "pack_id": "p"}]}',
         "relative"),
        ('{"corpora": [{"corpus_id": "a", "path": "a.jsonl", "pack_id": "en_core_cognition_v1"},'
         ' {"corpus_id": "a", "path": "b.jsonl", "pack_id": "en_core_cognition_v1"}]}',
         "registered twice"),
    ],
)
def test_an_unusable_registry_is_an_error(tmp_path: Path, registry_text: str, words: str) -> None:
    packs, teaching = tmp_path / "packs", tmp_path / "teaching"
    write_pack(packs)
    write_corpus(teaching, "a.jsonl", [LIGHT])
    write_corpus(teaching, "b.jsonl", [LIGHT])
    (teaching / "corpora.json").write_text(registry_text)
    with pytest.raises(CorpusError, match=words):
        load_teaching_registry(teaching, packs)
    status, output = check(packs, teaching)
    assert status == 1
    assert words in output[-1]


def test_cli_reads_the_data_dirs_from_the_environment(tmp_path: Path) -> None:
    packs, teaching, corpus = one_corpus(tmp_path, [LIGHT, "oops"])
    env = {"CORE_AUDIT_PACKS": str(packs), "CORE_AUDIT_TEACHING": str(teaching)}
    result = cli("corpus", "check", env=env)
    assert result.exit_code == 1
    assert result.output.startswith(f"{corpus}:2: ")
    result = cli("surface", "light", "--intent", "cause", env=env)
    assert LIGHT_SURFACE in result.output


def test_a_registry_file_may_name_a_cross_pack_corpus(tmp_path: Path) -> None:
    packs, teaching = tmp_path / "packs", tmp_path / "teaching"
    write_pack(packs)
    write_pack(packs, [entry("identity", ["relation.identity", "self.core"],
                             pack_id="relations_v1")], pack_id="relations_v1")
    write_corpus(teaching, "core.jsonl", [MEMORY])
    write_corpus(teaching, "cross.jsonl", [{
        "subject": "identity", "intent": "verification", "connective": "is_grounded_in",
        "object": "memory", "subject_pack_id": "relations_v1", "object_pack_id": PACK_ID}])
    (teaching / "corpora.json").write_text(
        '{"corpora": [{"corpus_id": "cognition_chains_v1", "path": "core.jsonl",'
        f' "pack_id": "{PACK_ID}"}}],'
        ' "cross_pack": [{"corpus_id": "cross_v1", "path": "cross.jsonl"}]}')
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("identity", "verification", registry=registry) == (
        "identity — cross-pack-grounded (cross_v1: relations_v1 \u00d7 en_core_cognition_v1):"
        " relation.identity; self.core. identity is grounded in memory (cognition.memory)."
        " No session evidence yet.")
    assert registry.corpus("cross_v1").cross_pack
    (teaching / "corpora.json").write_text(
        '{"corpora": [], "cross_pack": [{"corpus_id": "a", "path": "a.jsonl"},'
        ' {"corpus_id": "b", "path": "b.jsonl"}]}')
    with pytest.raises(CorpusError, match="one cross-pack corpus"):
        load_teaching_registry(teaching, packs)
