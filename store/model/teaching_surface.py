"""ADR-0052's teaching-grounded surface, its engagement conditions and its provenance."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any, Final

from store.model.corpora import (
    TeachingChain,
    TeachingIntent,
    TeachingRegistry,
    lemma_key,
    parse_intent,
)
from store.model.locations import core_dir, packs_dir, teaching_dir
from store.model.packs import Pack
from store.model.predicates import humanize_predicate
from store.model.surface_forms import DEFAULT_MAX_DEPTH, SurfaceForm, hop_limit, next_hops
from store.model.teaching_registry import load_core_registry, load_teaching_registry


class GroundingSource(StrEnum):
    """The closed set of `grounding_source` values CORE emits (ADR-0052 and later)."""

    VAULT = "vault"
    PACK = "pack"
    TEACHING = "teaching"
    NONE = "none"
    PARTIAL = "partial"
    OOV = "oov"
    DEDUCTION = "deduction"
    CURRICULUM = "curriculum"


EMPTY_VAULT: Final = "empty_vault"  # the UnknownDomainGate source of a cold-start turn
OUTPUT_LANGUAGE: Final = "en"  # ADR-0052 scope: English only

TEACHING_MARKER: Final = " — teaching-grounded ("
CROSS_PACK_MARKER: Final = " — cross-pack-grounded ("
ENDING: Final = ". No session evidence yet."
CROSS: Final = "\u00d7"  # the multiplication sign between a cross-pack line's two pack ids


@dataclass(frozen=True, slots=True)
class TeachingSurfaceProvenance:
    """One composed surface and every atom it was built from, for the audit store."""

    corpus_id: str
    chain_id: str
    chain_provenance: str
    pack_id: str
    pack_version: str
    subject: str
    intent: TeachingIntent
    connective: str  # the corpus key, e.g. `is_grounded_in`, not its humanised reading
    object: str
    subject_domains: tuple[str, ...]
    object_domains: tuple[str, ...]
    surface: str
    hop_chain_ids: tuple[str, ...] = ()  # each ", which ..." clause's chain, in order
    form: SurfaceForm = SurfaceForm.SINGLE  # the mode rendered (cross_pack for such a chain)
    grounding_source: GroundingSource = field(default=GroundingSource.TEACHING, init=False)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, keys in the order `core-audit surface` prints them."""
        return {
            "surface": self.surface,
            "grounding_source": self.grounding_source.value,
            "corpus_id": self.corpus_id,
            "chain_id": self.chain_id,
            "chain_provenance": self.chain_provenance,
            "pack_id": self.pack_id,
            "pack_version": self.pack_version,
            "subject": self.subject,
            "intent": self.intent.value,
            "connective": self.connective,
            "object": self.object,
            "subject_domains": list(self.subject_domains),
            "object_domains": list(self.object_domains),
            "hops": len(self.hop_chain_ids),
            "hop_chain_ids": list(self.hop_chain_ids),
        }



class DisengageReason(StrEnum):
    GATE_SOURCE = "gate_source_not_empty_vault"
    OUTPUT_LANGUAGE = "output_language_not_en"
    INTENT = "intent_not_cause_or_verification"
    EMPTY_SUBJECT = "empty_subject"
    NO_CHAIN = "no_chain"
    PACK_LANGUAGE = "pack_language_not_output_language"


@dataclass(frozen=True, slots=True)
class NotEngaged:
    """Why the teaching branch stayed silent; the runtime falls through to the disclosure."""

    reason: DisengageReason
    detail: str
    grounding_source: GroundingSource = field(default=GroundingSource.NONE, init=False)


def _domains(pack: Pack, lemma: str, k: int) -> tuple[str, ...]:
    return pack.semantic_domains(lemma)[: max(1, k)]


def render_chain(
    registry: TeachingRegistry,
    chain: TeachingChain,
    form: SurfaceForm = SurfaceForm.SINGLE,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> TeachingSurfaceProvenance:
    """The surface CORE serves for `chain` in `form`; a cross-pack chain has its own form."""
    subject_pack = registry.pack_of(chain)
    object_pack = registry.object_pack_of(chain)
    subject_domains = _domains(subject_pack, chain.subject, chain.domains_subject_k)
    object_domains = _domains(object_pack, chain.object, chain.domains_object_k)
    cross_pack = chain.subject_pack_id != chain.object_pack_id
    if cross_pack:
        form = SurfaceForm.CROSS_PACK
        head = (f"{chain.subject}{CROSS_PACK_MARKER}{chain.corpus_id}: {chain.subject_pack_id}"
                f" {CROSS} {chain.object_pack_id}): ")
    else:
        head = f"{chain.subject}{TEACHING_MARKER}{chain.corpus_id}): "
    hops = next_hops(registry, chain, hop_limit(form, max_depth))
    clauses = "".join(
        f", which {humanize_predicate(hop.connective)} {hop.object}"
        f" ({'; '.join(_domains(object_pack, hop.object, hop.domains_object_k))})"
        for hop in hops
    )
    surface = (f"{head}{'; '.join(subject_domains)}. {chain.subject}"
               f" {humanize_predicate(chain.connective)} {chain.object}"
               f" ({'; '.join(object_domains)}){clauses}{ENDING}")
    return TeachingSurfaceProvenance(
        corpus_id=chain.corpus_id,
        chain_id=chain.chain_id,
        chain_provenance=chain.provenance,
        pack_id=subject_pack.pack_id,
        pack_version=subject_pack.version,
        subject=chain.subject,
        intent=chain.intent,
        connective=chain.connective,
        object=chain.object,
        subject_domains=subject_domains,
        object_domains=object_domains,
        surface=surface,
        hop_chain_ids=tuple(hop.chain_id for hop in hops),
        form=form,
    )


def resolve_teaching_surface(
    registry: TeachingRegistry, subject: object, intent: object,
    form: SurfaceForm = SurfaceForm.SINGLE, max_depth: int = DEFAULT_MAX_DEPTH,
) -> TeachingSurfaceProvenance | None:
    """None for an empty subject, an intent other than cause/verification, or no chain."""
    if not isinstance(subject, str) or not lemma_key(subject):
        return None
    chain = registry.chain(subject, intent)
    if chain is None:
        return None
    return render_chain(registry, chain, form, max_depth)


@cache
def _registry_in_files(packs: Path, teaching: Path) -> TeachingRegistry:
    # Corpora and packs are immutable at runtime (ADR-0052), so one load per location.
    return load_teaching_registry(teaching, packs)


@cache
def _registry_in_checkout(core: Path) -> TeachingRegistry:
    return load_core_registry(core)


def default_registry(
    packs: Path | str | None = None, teaching: Path | str | None = None,
    core: Path | str | None = None,
) -> TeachingRegistry:
    """The registry at the located data (see store.model.locations), loaded once per place:
    a CORE checkout when `core` (or, with no dirs given, $CORE_AUDIT_CORE) names one."""
    checkout = core_dir(core) if packs is None and teaching is None else core
    if checkout is not None:
        return _registry_in_checkout(Path(checkout).resolve())
    return _registry_in_files(packs_dir(packs).resolve(), teaching_dir(teaching).resolve())


def teaching_grounded_surface(
    subject: object, intent: object, *, registry: TeachingRegistry | None = None
) -> str | None:
    """ADR-0052's `teaching_grounded_surface(subject_lemma, intent_tag)`: the surface or None."""
    found = resolve_teaching_surface(registry or default_registry(), subject, intent)
    return found.surface if found is not None else None


def engage_teaching_surface(
    registry: TeachingRegistry,
    subject: object,
    intent: object,
    *,
    gate_source: str,
    output_language: str,
) -> TeachingSurfaceProvenance | NotEngaged:
    """The runtime's branch conditions, checked in the ADR's order, then the surface."""
    if gate_source != EMPTY_VAULT:
        return NotEngaged(DisengageReason.GATE_SOURCE,
                          f"gate source is {gate_source!r}, not {EMPTY_VAULT!r}")
    if output_language != OUTPUT_LANGUAGE:
        return NotEngaged(DisengageReason.OUTPUT_LANGUAGE,
                          f"output language is {output_language!r}, not {OUTPUT_LANGUAGE!r}")
    parsed = parse_intent(intent)
    if parsed is None:
        return NotEngaged(DisengageReason.INTENT, f"intent {intent!r} is not cause or verification")
    if not isinstance(subject, str) or not lemma_key(subject):
        return NotEngaged(DisengageReason.EMPTY_SUBJECT, "subject is empty")
    chain = registry.chain(subject, parsed)
    if chain is None:
        return NotEngaged(DisengageReason.NO_CHAIN,
                          f"no teaching chain for subject {lemma_key(subject)!r},"
                          f" intent {parsed.value!r}")
    pack = registry.pack_of(chain)
    if pack.language != output_language:
        return NotEngaged(DisengageReason.PACK_LANGUAGE,
                          f"chain {chain.chain_id!r} is bound to pack {pack.pack_id!r}"
                          f" in {pack.language!r}")
    return render_chain(registry, chain)
