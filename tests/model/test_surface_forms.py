"""Single, composed, transitive and cross-pack surfaces (core-interop.md 3.1, 3.2, 3.5),
rendered from fixture checkouts and compared with text typed out from the spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import cli
from surface_form_data import (
    COGNITION,
    CROSS_IDENTITY,
    IDENTITY_SURFACE,
    JUDGMENT_COMPOSED,
    JUDGMENT_SINGLE,
    JUDGMENT_TRANSITIVE,
    TRUTH_GROUNDS_REALITY,
)
from teaching_data import (
    LIGHT_SURFACE,
    RELATIONS_PACK,
    chain,
    write_core_checkout,
)

from store.model.corpora import TeachingIntent, TeachingRegistry
from store.model.surface_forms import SurfaceForm
from store.model.teaching_registry import load_core_registry
from store.model.teaching_surface import render_chain, resolve_teaching_surface


@pytest.fixture
def registry(tmp_path: Path) -> TeachingRegistry:
    core = write_core_checkout(tmp_path, {
        "cognition_chains_v1": COGNITION,
        "relations_chains_v1": [TRUTH_GROUNDS_REALITY],
    }, cross_pack=[CROSS_IDENTITY])
    return load_core_registry(core)


@pytest.mark.parametrize(("form", "max_depth", "expected", "hops"), [
    (SurfaceForm.SINGLE, 2, JUDGMENT_SINGLE, ()),
    (SurfaceForm.COMPOSED, 2, JUDGMENT_COMPOSED, ("verification_wisdom_requires_knowledge",)),
    (SurfaceForm.TRANSITIVE, 2, JUDGMENT_TRANSITIVE,
     ("verification_wisdom_requires_knowledge", "cause_knowledge_requires_evidence")),
    # (evidence, cause) goes back to wisdom, already visited: the walk stops at 2 hops.
    (SurfaceForm.TRANSITIVE, 3, JUDGMENT_TRANSITIVE,
     ("verification_wisdom_requires_knowledge", "cause_knowledge_requires_evidence")),
    (SurfaceForm.TRANSITIVE, 1, JUDGMENT_COMPOSED, ("verification_wisdom_requires_knowledge",)),
    (SurfaceForm.TRANSITIVE, 0, JUDGMENT_SINGLE, ()),
    (SurfaceForm.TRANSITIVE, -1, JUDGMENT_SINGLE, ()),
])
def test_judgment_in_every_form(registry: TeachingRegistry, form: SurfaceForm, max_depth: int,
                                expected: str, hops: tuple[str, ...]) -> None:
    found = resolve_teaching_surface(registry, "judgment", "cause", form, max_depth)
    assert found is not None
    assert found.surface.encode("utf-8") == expected.encode("utf-8")
    assert found.hop_chain_ids == hops
    assert (found.form, found.as_dict()["hops"], found.as_dict()["hop_chain_ids"]) == (
        form, len(hops), list(hops))


def test_a_hop_in_another_corpus_is_rejected(registry: TeachingRegistry) -> None:
    # (truth, cause) resolves in relations_chains_v1, not light's corpus: no hop.
    for form in SurfaceForm:
        found = resolve_teaching_surface(registry, "light", "cause", form)
        assert found is not None and found.surface == LIGHT_SURFACE


def test_a_chain_whose_only_hop_is_a_cycle_stays_single(registry: TeachingRegistry) -> None:
    found = resolve_teaching_surface(registry, "wisdom", "cause", SurfaceForm.TRANSITIVE)
    assert found is not None and found.surface == (
        "wisdom — teaching-grounded (cognition_chains_v1): cognition.wisdom; practice.insight."
        " wisdom grounds judgment (cognition.judgment). No session evidence yet.")


def test_cross_pack_surface(registry: TeachingRegistry) -> None:
    for form in (SurfaceForm.SINGLE, SurfaceForm.TRANSITIVE):  # never hops
        found = resolve_teaching_surface(registry, " Identity", "VERIFICATION", form)
        assert found is not None
        assert found.surface.encode("utf-8") == IDENTITY_SURFACE.encode("utf-8")
        assert (found.form, found.hop_chain_ids, found.chain_id, found.pack_id) == (
            SurfaceForm.CROSS_PACK, (), "identity_verification_memory", RELATIONS_PACK)
        assert found.grounding_source.value == "teaching"


def test_cross_pack_rules(tmp_path: Path) -> None:
    parent_cross = {**CROSS_IDENTITY, "subject": "parent", "intent": "cause",
                    "connective": "precedes", "object": "memory"}
    later_same_key = {**CROSS_IDENTITY, "connective": "requires", "chain_id": "later"}
    same_packs = {**CROSS_IDENTITY, "subject": "child", "object": "parent",
                  "object_pack_id": RELATIONS_PACK}
    parent = chain("cause_parent_precedes_child", "parent", "cause", "precedes", "child")
    core = write_core_checkout(tmp_path, {"relations_chains_v1": [parent]},
                               cross_pack=[CROSS_IDENTITY, parent_cross, later_same_key,
                                           same_packs])
    registry = load_core_registry(core)
    identity = registry.chain("identity", "verification")
    assert identity is not None and identity.chain_id == "identity_verification_memory"
    parent_chain = registry.chain("parent", "cause")  # the in-pack chain shadows cross-pack
    assert parent_chain is not None and parent_chain.corpus_id == "relations_chains_v1"
    [error] = registry.errors
    assert error.line == 4 and "both 'en_core_relations_v1'" in error.reason
    assert [i.chain.line for i in registry.inactive] == [3]


def test_cli_form_and_max_depth(tmp_path: Path) -> None:
    core = write_core_checkout(tmp_path, {"cognition_chains_v1": COGNITION})
    base = ["surface", "judgment", "--intent", "cause", "--core", str(core)]
    for extra, expected, hops in [
        ([], JUDGMENT_SINGLE, 0),
        (["--form", "composed"], JUDGMENT_COMPOSED, 1),
        (["--form", "transitive"], JUDGMENT_TRANSITIVE, 2),
        (["--form", "transitive", "--max-depth", "1"], JUDGMENT_COMPOSED, 1),
    ]:
        result = cli(*base, *extra)
        assert result.exit_code == 0, result.output
        printed = json.loads(result.output)
        assert (printed["surface"], printed["hops"], len(printed["hop_chain_ids"])) == (
            expected, hops, hops)


def test_render_chain_takes_any_resolved_chain(registry: TeachingRegistry) -> None:
    chain_ = registry.chains[("memory", TeachingIntent.VERIFICATION)]
    assert render_chain(registry, chain_, SurfaceForm.COMPOSED).surface == (
        "memory — teaching-grounded (cognition_chains_v1): cognition.memory; memory.semantic."
        " memory requires recall (operation.recall). No session evidence yet.")
