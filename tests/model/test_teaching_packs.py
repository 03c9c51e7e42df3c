"""Pack loading: checksum refusal, lower-cased lemmas, last line wins, dropped lexicon lines."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from cli_runs import cli
from teaching_data import (
    ADR_DOMAINS,
    LIGHT,
    PACK_ID,
    SAMPLE_PACK_ID,
    SAMPLE_PACK_VERSION,
    entry,
    one_corpus,
    write_pack,
)

from store.model.packs import PackError, load_pack
from store.model.teaching_registry import load_teaching_registry
from store.model.teaching_surface import teaching_grounded_surface

REPO = Path(__file__).resolve().parents[2]
FORGED = "0" * 64


def test_the_shipped_pack_matches_its_checksum_and_the_adr_domains() -> None:
    pack = load_pack(REPO / "packs" / SAMPLE_PACK_ID)
    assert (pack.pack_id, pack.language, pack.version) == (SAMPLE_PACK_ID, "en",
                                                           SAMPLE_PACK_VERSION)
    assert "core-audit's own sample" in pack.provenance  # never passes for CORE's pack
    lexicon = (REPO / "packs" / SAMPLE_PACK_ID / "lexicon.jsonl").read_bytes()
    assert pack.checksum == hashlib.sha256(lexicon).hexdigest()
    for lemma, domains in ADR_DOMAINS.items():
        assert list(pack.semantic_domains(lemma)[: len(domains)]) == domains


def test_a_checksum_mismatch_refuses_the_pack(tmp_path: Path) -> None:
    folder = write_pack(tmp_path, checksum=FORGED)
    actual = hashlib.sha256((folder / "lexicon.jsonl").read_bytes()).hexdigest()
    with pytest.raises(PackError) as refused:
        load_pack(folder)
    message = str(refused.value)
    assert PACK_ID in message and FORGED in message and actual in message


def test_an_edited_lexicon_is_refused(tmp_path: Path) -> None:
    packs, teaching, _ = one_corpus(tmp_path, [LIGHT])
    lexicon = packs / PACK_ID / "lexicon.jsonl"
    lexicon.write_bytes(lexicon.read_bytes().replace(b"logos.core", b"logos.edit"))
    with pytest.raises(PackError, match="refused"):
        load_teaching_registry(teaching, packs)
    dirs = ["--packs", packs, "--teaching", teaching]
    checked = cli("corpus", "check", *dirs)
    assert checked.exit_code == 1 and PACK_ID in checked.output
    surfaced = cli("surface", "light", "--intent", "cause", *dirs)
    assert surfaced.exit_code == 1 and "refused" in surfaced.output


def test_lemmas_are_matched_lower_cased(tmp_path: Path) -> None:
    lines = [entry("Light", ["cognition.illumination", "logos.core"]),
             entry("TRUTH", ["cognition.truth"])]
    pack = load_pack(write_pack(tmp_path, lines))
    assert pack.semantic_domains("light") == ("cognition.illumination", "logos.core")
    assert pack.semantic_domains("LiGhT") == ("cognition.illumination", "logos.core")
    assert pack.entry("truth") is not None
    assert pack.entry("lamp") is None
    packs, teaching, _ = one_corpus(tmp_path / "corpus", [LIGHT], lines)
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("light", "cause", registry=registry) is not None


def test_the_last_line_of_a_lemma_wins(tmp_path: Path) -> None:
    lines = [entry("light", ["old.first", "old.second"]), entry("truth", ["cognition.truth"]),
             entry("LIGHT", ["new.first", "new.second"])]
    packs, teaching, _ = one_corpus(tmp_path, [LIGHT], lines)
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("light", "cause", registry=registry) == (
        "light — teaching-grounded (cognition_chains_v1): new.first; new.second."
        " light reveals truth (cognition.truth). No session evidence yet.")


def test_a_bad_lexicon_line_is_dropped_and_reported(tmp_path: Path) -> None:
    lines = [entry("light", ["cognition.illumination", "logos.core"]), "{not json",
             {**entry("truth", ["cognition.truth"]), "semantic_domains": "cognition.truth"},
             entry("truth", ["cognition.truth"]), {"lemma": 7, "semantic_domains": ["x"]}]
    packs, teaching, _ = one_corpus(tmp_path, [LIGHT], lines)
    registry = load_teaching_registry(teaching, packs)
    lexicon = packs / PACK_ID / "lexicon.jsonl"
    assert [(d.source, d.line, d.severity.value) for d in registry.dropped] == [
        (lexicon, 2, "error"), (lexicon, 3, "warning"), (lexicon, 5, "error")]
    result = cli("corpus", "check", "--packs", packs, "--teaching", teaching)
    assert result.exit_code == 1
    assert result.output.splitlines()[1] == (
        f"{lexicon}:3: warning: entry 'truth': semantic_domains is not a non-empty list:"
        " ignored")


def test_lexicon_lines_need_only_a_key_and_domains(tmp_path: Path) -> None:
    # core-interop.md section 1: key = lemma, or surface when lemma is empty; lower-cased,
    # not stripped; other fields are not read.
    lines = [{"surface": "Light", "lemma": "", "semantic_domains": ["s.light"]},
             {"surface": "truth", "semantic_domains": ["s.truth"], "pos": 7},
             {"lemma": " padded", "semantic_domains": ["s.padded"]}]
    pack = load_pack(write_pack(tmp_path, lines))
    assert pack.semantic_domains("light") == ("s.light",)
    assert pack.semantic_domains("truth") == ("s.truth",)
    assert pack.entry("padded") is None and pack.semantic_domains(" padded") == ("s.padded",)
    assert pack.dropped == ()


@pytest.mark.parametrize("no_domains", [[], None, "cognition.other", {}])
def test_a_line_without_domains_does_not_override(tmp_path: Path, no_domains: object) -> None:
    lines = [entry("light", ["cognition.illumination", "logos.core"]),
             entry("truth", ["cognition.truth"]),
             {**entry("light", []), "semantic_domains": no_domains}]
    packs, teaching, _ = one_corpus(tmp_path, [LIGHT], lines)
    registry = load_teaching_registry(teaching, packs)
    assert teaching_grounded_surface("light", "cause", registry=registry) == (
        "light — teaching-grounded (cognition_chains_v1): cognition.illumination; logos.core."
        " light reveals truth (cognition.truth). No session evidence yet.")


@pytest.mark.parametrize(("provenance", "text"), [
    ("reviewed", "reviewed"), ({"by": "core", "n": 2}, '{"by":"core","n":2}'), (None, "null"),
])
def test_manifest_provenance_may_be_any_json_value(tmp_path: Path, provenance: object,
                                                   text: str) -> None:
    folder = write_pack(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "provenance": provenance}))
    assert load_pack(folder).provenance == text


def test_a_missing_bound_pack_gives_its_corpus_no_chains(tmp_path: Path) -> None:
    packs, teaching, corpus = one_corpus(tmp_path, [LIGHT])
    shutil.rmtree(packs / PACK_ID)
    registry = load_teaching_registry(teaching, packs)
    assert registry.chains == {}
    [missing] = registry.errors
    assert (missing.source, missing.line) == (corpus, 0)
    assert f"pack {PACK_ID!r} is missing" in missing.reason


def test_manifest_must_name_its_own_folder(tmp_path: Path) -> None:
    with pytest.raises(PackError, match="other_pack"):
        load_pack(write_pack(tmp_path, manifest_pack_id="other_pack"))


def test_a_missing_pack_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PackError, match="cannot read"):
        load_pack(tmp_path / PACK_ID)


def test_manifest_fields_are_required(tmp_path: Path) -> None:
    folder = write_pack(tmp_path)
    (folder / "manifest.json").write_text('{"pack_id": "en_core_cognition_v1"}')
    with pytest.raises(PackError, match="language"):
        load_pack(folder)
