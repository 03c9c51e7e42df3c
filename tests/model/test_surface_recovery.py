"""Checking a teaching surface from its text alone (core-interop.md section 7).

Surfaces are typed out from the spec; the record's subject, intent and ids are only hints.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from surface_form_data import (
    COGNITION,
    CROSS_IDENTITY,
    IDENTITY_SURFACE,
    JUDGMENT_COMPOSED,
    JUDGMENT_SINGLE,
    JUDGMENT_TRANSITIVE,
)
from teaching_data import (
    COGNITION_PACK,
    CORE_CORPORA,
    KNOWLEDGE,
    LIGHT,
    MEMORY,
    chain,
    entry,
    write_core_checkout,
)

from store.model.corpora import TeachingRegistry
from store.model.surface_records import (
    CheckedFile,
    SurfaceForm,
    SurfaceRecord,
    SurfaceVerification,
    check_surface,
)
from store.model.teaching_registry import load_core_registry
from store.model.teaching_surface import GroundingSource

V = SurfaceVerification
HEDGE = "Grounded but not geometrically certified — "
SPECULATIVE = "(speculative, not yet reviewed) "
# core-interop.md section 5's worked example, verbatim.
WORKED_EXAMPLE = (
    "light — teaching-grounded (cognition_chains_v1): cognition.illumination; logos.core."
    " light reveals truth (cognition.truth). No session evidence yet."
)
LIGHT_VERIFICATION = chain("verification_light_reveals_truth", "light", "verification",
                           "reveals", "truth")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return write_core_checkout(tmp_path, {"cognition_chains_v1": [*COGNITION,
                                                                  LIGHT_VERIFICATION]},
                               cross_pack=[CROSS_IDENTITY])


@pytest.fixture
def registry(checkout: Path) -> TeachingRegistry:
    return load_core_registry(checkout)


def teaching(surface: str, **hints: str) -> SurfaceRecord:
    return SurfaceRecord(grounding_source=GroundingSource.TEACHING, surface=surface, **hints)


def test_the_worked_example_verifies_without_subject_or_intent(checkout: Path,
                                                               registry: TeachingRegistry
                                                               ) -> None:
    check = check_surface(teaching(WORKED_EXAMPLE), registry).check
    assert (check.verification, check.form, check.subject, check.corpus_id) == (
        V.VERIFIED, SurfaceForm.SINGLE, "light", "cognition_chains_v1")
    assert (check.hops, check.hop_chain_ids, check.prefix, check.expected_surface) == (
        0, (), None, None)
    corpus_bytes = (checkout / CORE_CORPORA["cognition_chains_v1"][0]).read_bytes()
    lexicon = (checkout / "packs/data" / COGNITION_PACK / "lexicon.jsonl").read_bytes()
    assert check.checked_against == (
        CheckedFile("corpus", "cognition_chains_v1", hashlib.sha256(corpus_bytes).hexdigest(),
                    None),
        CheckedFile("pack", COGNITION_PACK, hashlib.sha256(lexicon).hexdigest(), "1.0.0"),
    )
    assert check.checked_against[1].as_dict() == {
        "kind": "pack", "id": COGNITION_PACK, "sha256": hashlib.sha256(lexicon).hexdigest(),
        "version": "1.0.0"}


def test_light_cause_and_verification_are_indistinguishable(registry: TeachingRegistry
                                                           ) -> None:
    both = ("cause_light_reveals_truth", "verification_light_reveals_truth")
    check = check_surface(teaching(WORKED_EXAMPLE), registry).check
    assert (check.verification, check.chain_id, check.candidate_chain_ids) == (
        V.VERIFIED, None, both)
    assert check.derived is not None and check.derived.chain_id == "cause_light_reveals_truth"
    named = check_surface(teaching(WORKED_EXAMPLE, chain_id="verification_light_reveals_truth"),
                          registry).check
    assert (named.verification, named.chain_id, named.candidate_chain_ids) == (
        V.VERIFIED, "verification_light_reveals_truth", both)
    hinted = check_surface(teaching(WORKED_EXAMPLE, intent="verification"), registry).check
    assert hinted.chain_id is None and hinted.derived is not None
    assert hinted.derived.chain_id == "verification_light_reveals_truth"


@pytest.mark.parametrize(("surface", "form", "hops", "hop_chain_ids"), [
    (JUDGMENT_SINGLE, SurfaceForm.SINGLE, 0, ()),
    (JUDGMENT_COMPOSED, SurfaceForm.COMPOSED, 1, ("verification_wisdom_requires_knowledge",)),
    (JUDGMENT_TRANSITIVE, SurfaceForm.TRANSITIVE, 2,
     ("verification_wisdom_requires_knowledge", "cause_knowledge_requires_evidence")),
    (IDENTITY_SURFACE, SurfaceForm.CROSS_PACK, 0, ()),
])
@pytest.mark.parametrize("prefix", [None, HEDGE, SPECULATIVE, HEDGE + SPECULATIVE,
                                    SPECULATIVE + HEDGE])
def test_every_form_is_recovered_with_or_without_prefixes(
        registry: TeachingRegistry, surface: str, form: SurfaceForm, hops: int,
        hop_chain_ids: tuple[str, ...], prefix: str | None) -> None:
    check = check_surface(teaching((prefix or "") + surface), registry).check
    assert (check.verification, check.form, check.hops, check.hop_chain_ids, check.prefix) == (
        V.VERIFIED, form, hops, hop_chain_ids, prefix)
    assert len(check.candidate_chain_ids) == 1 and check.chain_id in check.candidate_chain_ids


def test_cross_pack_records_both_packs(registry: TeachingRegistry) -> None:
    check = check_surface(teaching(IDENTITY_SURFACE), registry).check
    assert (check.subject, check.corpus_id, check.chain_id) == (
        "identity", "cross_pack_chains_v1", "identity_verification_memory")
    assert [(f.kind, f.id) for f in check.checked_against] == [
        ("corpus", "cross_pack_chains_v1"), ("pack", "en_core_relations_v1"),
        ("pack", COGNITION_PACK)]


def test_a_composed_surface_is_not_taken_for_a_longer_walk(registry: TeachingRegistry) -> None:
    # One clause: composed (or transitive with N = 1) must give exactly these bytes.
    wrong_hop = JUDGMENT_COMPOSED.replace("requires knowledge", "grounds judgment")
    check = check_surface(teaching(wrong_hop), registry).check
    assert (check.verification, check.form, check.hops) == (V.MISMATCH, SurfaceForm.COMPOSED, 1)
    assert check.expected_surface == JUDGMENT_COMPOSED
    assert check.chain_id == "cause_judgment_requires_wisdom"


def test_a_mismatch_keeps_what_the_chain_renders(registry: TeachingRegistry) -> None:
    edited = WORKED_EXAMPLE.replace("logos.core", "logos.edited")
    check = check_surface(teaching(HEDGE + edited), registry).check
    assert (check.verification, check.subject, check.corpus_id, check.prefix) == (
        V.MISMATCH, "light", "cognition_chains_v1", HEDGE)
    assert check.candidate_chain_ids == ("cause_light_reveals_truth",
                                         "verification_light_reveals_truth")
    assert check.chain_id is None
    assert check.expected_surface == WORKED_EXAMPLE
    assert check.checked_against[0].kind == "corpus"


def test_a_wrong_chain_or_corpus_hint_is_a_mismatch(registry: TeachingRegistry) -> None:
    by_chain = check_surface(teaching(JUDGMENT_SINGLE, chain_id="cause_light_reveals_truth"),
                             registry).check
    assert (by_chain.verification, by_chain.expected_surface) == (V.MISMATCH, JUDGMENT_SINGLE)
    by_corpus = check_surface(teaching(JUDGMENT_SINGLE, corpus_id="relations_chains_v1"),
                              registry).check
    assert by_corpus.verification is V.MISMATCH


@pytest.mark.parametrize("surface", [
    WORKED_EXAMPLE.replace("cognition_chains_v1", "cognition_chains_v9"),  # unknown corpus
    WORKED_EXAMPLE.replace("light", "lamp"),  # no chain for lamp
    WORKED_EXAMPLE.replace("cognition_chains_v1", "relations_chains_v1"),  # none for light
    "Maybe: " + WORKED_EXAMPLE,  # an unknown prefix becomes part of S
])
def test_unresolvable(registry: TeachingRegistry, surface: str) -> None:
    check = check_surface(teaching(surface, subject="light", intent="cause"), registry).check
    assert check.verification is V.UNRESOLVABLE
    assert (check.chain_id, check.derived, check.expected_surface) == (None, None, None)


@pytest.mark.parametrize("surface", [
    "light — narrative-grounded (cognition_chains_v1 + relations_chains_v1): light reveals"
    " truth.",
    "light — example-grounded (cognition_chains_v1): light reveals truth. Example: a lamp.",
    "Light reveals truth, and it matters because truth grounds knowledge.",
    WORKED_EXAMPLE.replace("\u2014", "\u2013"),  # an en dash is not the template
])
def test_other_teaching_forms(registry: TeachingRegistry, surface: str) -> None:
    check = check_surface(teaching(surface), registry).check
    assert (check.verification, check.form, check.checked_against) == (V.OTHER_FORM, None, ())


def test_other_sources_are_not_checked(registry: TeachingRegistry) -> None:
    record = SurfaceRecord(grounding_source=GroundingSource.PACK, surface=WORKED_EXAMPLE)
    checked = check_surface(record, registry)
    assert checked.record is record
    assert (checked.check.verification, checked.check.checked_against) == (V.NOT_CHECKED, ())


def test_the_spec_pack_domains_decide(tmp_path: Path) -> None:
    # Only light and truth with section 5's domains: the worked example verifies.
    packs = {COGNITION_PACK: [entry("light", ["cognition.illumination", "logos.core"]),
                              entry("truth", ["cognition.truth"])]}
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": [LIGHT, KNOWLEDGE, MEMORY]},
                               packs=packs)
    check = check_surface(teaching(WORKED_EXAMPLE), load_core_registry(core)).check
    assert (check.verification, check.chain_id) == (V.VERIFIED, "cause_light_reveals_truth")
