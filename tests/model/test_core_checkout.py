"""CORE-checkout mode and CORE's loader semantics (core-interop.md sections 1 and 2).

Every fixture is written in tmp_path; expected surfaces are typed out from the spec.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runs import cli
from teaching_data import (
    COGNITION_PACK,
    CORE_CORPORA,
    LIGHT,
    LIGHT_SURFACE,
    RELATIONS_PACK,
    chain,
    entry,
    write_core_checkout,
)

from store.model.core_checkout import CROSS_PACK_CORPUS, TEACHING_CORPORA
from store.model.corpora import CorpusError, TeachingIntent
from store.model.teaching_registry import load_core_registry
from store.model.teaching_surface import default_registry, teaching_grounded_surface

CAUSE, VERIFICATION = TeachingIntent.CAUSE, TeachingIntent.VERIFICATION
TRUTH_GROUNDS_REALITY = chain("cause_truth_grounds_reality", "truth", "cause", "grounds",
                              "reality")
PARENT = chain("cause_parent_precedes_child", "parent", "cause", "precedes", "child")


def test_the_registry_is_cores_in_cores_order() -> None:
    assert TEACHING_CORPORA == (
        ("cognition_chains_v1", "teaching/cognition_chains/cognition_chains_v1.jsonl",
         "en_core_cognition_v1"),
        ("relations_chains_v1", "teaching/relations_chains/relations_chains_v1.jsonl",
         "en_core_relations_v1"),
        ("relations_chains_v2", "teaching/relations_chains_v2/relations_chains_v2.jsonl",
         "en_core_relations_v2"),
    )
    assert CROSS_PACK_CORPUS == ("cross_pack_chains_v1",
                                 "teaching/cross_pack_chains/cross_pack_chains_v1.jsonl")


def test_a_checkout_loads_every_registered_corpus(tmp_path: Path) -> None:
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [LIGHT],
                                          "relations_chains_v1": [PARENT]})
    registry = load_core_registry(core)
    assert [c.corpus_id for c in registry.corpora] == [
        "cognition_chains_v1", "relations_chains_v1", "relations_chains_v2"]
    assert registry.corpus("relations_chains_v2").chains == {}  # missing file: empty
    assert teaching_grounded_surface("LIGHT ", "cause", registry=registry) == LIGHT_SURFACE
    assert teaching_grounded_surface("parent", "cause", registry=registry) == (
        "parent — teaching-grounded (relations_chains_v1): relation.parent; kin.lineage."
        " parent precedes child (relation.child). No session evidence yet.")


def test_the_first_registered_corpus_wins(tmp_path: Path) -> None:
    truth_in_cognition = chain("cause_truth_reveals_light", "truth", "cause", "reveals",
                               "light")
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [truth_in_cognition],
                                          "relations_chains_v1": [TRUTH_GROUNDS_REALITY]})
    registry = load_core_registry(core)
    assert registry.chains[("truth", CAUSE)].corpus_id == "cognition_chains_v1"
    [shadowed] = registry.shadowed
    assert shadowed.chain.chain_id == "cause_truth_grounds_reality"


@pytest.mark.parametrize("missing", ["teaching", "packs/data"])
def test_a_folder_that_is_not_a_checkout_is_refused(tmp_path: Path, missing: str) -> None:
    core = write_core_checkout(tmp_path, {})
    (core / missing).rename(core / "elsewhere")
    with pytest.raises(CorpusError, match=f"not a CORE checkout: no {missing}/"):
        load_core_registry(core)
    result = cli("corpus", "check", "--core", core)
    assert result.exit_code == 1 and "not a CORE checkout" in result.output


@pytest.mark.parametrize(("k_fields", "expected_domains"), [
    ({"domains_subject_k": "3"}, "cognition.illumination; logos.core; meaning.revelation"),
    ({"domains_subject_k": 2.7}, "cognition.illumination; logos.core"),
    ({"domains_subject_k": 0}, "cognition.illumination"),
    ({}, "cognition.illumination; logos.core"),  # defaults 2 and 1
])
def test_k_is_converted_like_python_int(tmp_path: Path, k_fields: dict[str, Any],
                                        expected_domains: str) -> None:
    light = {k: v for k, v in LIGHT.items() if not k.startswith("domains_")}
    packs = {COGNITION_PACK: [
        entry("light", ["cognition.illumination", "logos.core", "meaning.revelation"]),
        entry("truth", ["cognition.truth", "logos.core"])]}
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [{**light, **k_fields}]},
                               packs=packs)
    assert teaching_grounded_surface("light", "cause", registry=load_core_registry(core)) == (
        f"light — teaching-grounded (cognition_chains_v1): {expected_domains}."
        " light reveals truth (cognition.truth). No session evidence yet.")


@pytest.mark.parametrize("k", [None, "2.7", "two", [2]])
def test_a_k_that_is_not_a_whole_number_drops_the_line(tmp_path: Path, k: Any) -> None:
    core = write_core_checkout(tmp_path, {
        "cognition_chains_v1": [{**LIGHT, "domains_object_k": k}]})
    registry = load_core_registry(core)
    assert registry.chains == {}
    [error] = registry.errors
    assert error.line == 1 and "domains_object_k" in error.reason


@pytest.mark.parametrize(("chain_id", "expected"), [
    (None, "light_cause"), ("", "light_cause"), (0, "light_cause"), (False, "light_cause"),
    (" padded ", " padded "), (7, "7"), (True, "True"),
])
def test_chain_id_is_str_of_a_truthy_value(tmp_path: Path, chain_id: Any,
                                           expected: str) -> None:
    line = {**LIGHT, "chain_id": chain_id} if chain_id is not None else {
        k: v for k, v in LIGHT.items() if k != "chain_id"}
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [line]})
    assert load_core_registry(core).chains[("light", CAUSE)].chain_id == expected


@pytest.mark.parametrize(("provenance", "expected"), [
    ("adr", "adr"), (None, "None"), (3, "3"), ("missing", ""),
])
def test_provenance_is_str_of_the_value(tmp_path: Path, provenance: Any, expected: str) -> None:
    line = {**LIGHT, "provenance": provenance} if provenance != "missing" else {
        k: v for k, v in LIGHT.items() if k != "provenance"}
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [line]})
    assert load_core_registry(core).chains[("light", CAUSE)].provenance == expected


def test_an_admissibility_line_still_retires(tmp_path: Path) -> None:
    admissibility = chain("admissibility_light", "light", "admissibility", "reveals", "truth",
                          superseded_by="cause_light_reveals_truth")
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [LIGHT, admissibility]})
    registry = load_core_registry(core)
    assert registry.chains == {}
    assert registry.errors == ()
    # retired, then the other intent (line 0: the missing files of the other corpora)
    assert [w.line for w in registry.warnings if w.line] == [1, 2]


def test_a_connective_outside_the_26_is_shown_with_spaces(tmp_path: Path) -> None:
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [
        {**LIGHT, "connective": " Sheds_Light_On "}]})
    assert teaching_grounded_surface("light", "cause", registry=load_core_registry(core)) == (
        "light — teaching-grounded (cognition_chains_v1): cognition.illumination; logos.core."
        " light Sheds Light On truth (cognition.truth). No session evidence yet.")


def test_a_non_string_field_is_fatal_naming_file_and_line(tmp_path: Path) -> None:
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [LIGHT, {**LIGHT,
                                                                          "object": 7}]})
    corpus = core / CORE_CORPORA["cognition_chains_v1"][0]
    with pytest.raises(CorpusError, match=f"{corpus}:2: chain.object"):
        load_core_registry(core)


def test_a_missing_pack_gives_its_corpus_no_chains(tmp_path: Path) -> None:
    packs = {COGNITION_PACK: [entry("light", ["x.light"]), entry("truth", ["x.truth"])]}
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [LIGHT],
                                          "relations_chains_v1": [PARENT]}, packs=packs)
    registry = load_core_registry(core)
    assert list(registry.chains) == [("light", CAUSE)]
    assert not registry.packs[RELATIONS_PACK].present


# --- corpus check: errors vs warnings --------------------------------------------------------

def run_check(core: Path, *extra: str) -> tuple[int, str]:
    result = cli("corpus", "check", "--core", core, *extra)
    return result.exit_code, result.output


def test_warnings_alone_pass_the_check(tmp_path: Path) -> None:
    lines = [LIGHT, chain("admissibility_light", "light", "admissibility", "reveals", "truth"),
             {**LIGHT, "chain_id": "cause_light_v2", "connective": "illuminates",
              "superseded_by": "cause_light_v2"}]
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": lines})
    corpus = core / CORE_CORPORA["cognition_chains_v1"][0]
    status, output = run_check(core, "--json")
    assert status == 0
    report = json.loads(output)
    assert report["errors"] == []
    assert report["warnings"][:2] == [
        f"{corpus}:2: chain.intent: 'admissibility' is not cause or verification:"
        " CORE skips the line",
        f"{corpus}:3: chain 'cause_light_v2' is retired (superseded_by on line 3):"
        " CORE skips the line",
    ]
    # The other corpora and the cross-pack file are missing: empty, as in CORE (step 1).
    assert report["warnings"][2:] == [
        f"{core / CORE_CORPORA['relations_chains_v1'][0]}: corpus 'relations_chains_v1':"
        " the file is missing: the corpus has no chains",
        f"{core / CORE_CORPORA['relations_chains_v2'][0]}: corpus 'relations_chains_v2':"
        " the file is missing: the corpus has no chains",
        f"{core / 'teaching/cross_pack_chains/cross_pack_chains_v1.jsonl'}: the cross-pack"
        " corpus file is missing: no cross-pack chains",
    ]
    assert report["chains"] == 1
    status, output = run_check(core)
    assert status == 0
    assert f"{corpus}:2: warning: chain.intent: 'admissibility'" in output


def test_errors_fail_the_check(tmp_path: Path) -> None:
    lines = [LIGHT, "{broken", chain("cause_lamp", "lamp", "cause", "reveals", "truth")]
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": lines,
                                          "relations_chains_v1": [PARENT],
                                          "relations_chains_v2": []}, cross_pack=[])
    corpus = core / CORE_CORPORA["cognition_chains_v1"][0]
    status, output = run_check(core, "--json")
    assert status == 1
    report = json.loads(output)
    assert [e.split(": ", 1)[0] for e in report["errors"]] == [f"{corpus}:2", f"{corpus}:3"]
    assert "'lamp' is not a lemma" in report["errors"][1]
    assert report["warnings"] == []
    assert report["chains"] == 2
    status, output = run_check(core)
    assert status == 1
    assert output.splitlines()[-1] == (
        "checked 3 corpora (3 packs): 2 chains resolve, 0 inactive, 2 errors, 0 warnings")


def test_the_environment_names_the_checkout(tmp_path: Path) -> None:
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [LIGHT]})
    env = {"CORE_AUDIT_CORE": str(core), "CORE_AUDIT_PACKS": "", "CORE_AUDIT_TEACHING": ""}
    result = cli("surface", "light", "--intent", "cause", env=env)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert (printed["surface"], printed["pack_id"], printed["pack_version"]) == (
        LIGHT_SURFACE, COGNITION_PACK, "1.0.0")
    result = cli("surface", "light", "--intent", "cause", "--core", core)
    assert json.loads(result.output)["surface"] == LIGHT_SURFACE


def test_default_registry_reads_a_checkout_once(tmp_path: Path) -> None:
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [LIGHT]})
    registry = default_registry(core=core)
    assert default_registry(core=str(core)) is registry
    assert registry.chain("light", "cause") is not None


def test_ingest_takes_core_too(tmp_path: Path) -> None:
    core = write_core_checkout(tmp_path / "core", {"cognition_chains_v1": [LIGHT]})
    records = tmp_path / "in.jsonl"
    records.write_text(json.dumps({"grounding_source": "teaching", "surface": LIGHT_SURFACE})
                       + "\n", encoding="utf-8")
    result = cli("ingest", records, "--db", tmp_path / "a.db", "--core", core, "--json")
    assert result.exit_code == 0, result.output
