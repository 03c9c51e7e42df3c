"""ADR-0052's teaching-grounded surface, its engagement conditions and its provenance."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any, Final

from store.model.canonical import content_id
from store.model.corpora import (
    TeachingChain,
    TeachingIntent,
    TeachingRegistry,
    lemma_key,
    load_teaching_registry,
    parse_intent,
)
from store.model.locations import packs_dir, teaching_dir
from store.model.packs import Pack
from store.model.predicates import humanize_predicate


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

SURFACE_FORMAT: Final = (
    "{subject} — teaching-grounded ({corpus_id}): {subject_domains}. "
    "{subject} {connective} {object} ({object_domains}). No session evidence yet."
)


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
        }

    @property
    def surface_id(self) -> str:
        """sha256 over the surface and its provenance (DESIGN.md), with the lemma subject and
        the enum intent: the surface_records key only when CORE sent them in this form (the
        store keys a record by the subject and intent as sent)."""
        return surface_key(
            grounding_source=self.grounding_source.value,
            surface=self.surface,
            subject=self.subject,
            intent=self.intent.value,
            corpus_id=self.corpus_id,
            chain_id=self.chain_id,
            pack_id=self.pack_id,
            subject_domains=list(self.subject_domains),
            object_domains=list(self.object_domains),
        )


def surface_key(
    *,
    grounding_source: str,
    surface: str | None,
    subject: str | None,
    intent: str | None,
    corpus_id: str | None,
    chain_id: str | None,
    pack_id: str | None,
    subject_domains: list[str] | None,
    object_domains: list[str] | None,
) -> str:
    """DESIGN.md's surface id: the surface, its provenance and the pack domains used."""
    return content_id({
        "grounding_source": grounding_source,
        "surface": surface,
        "subject": subject,
        "intent": intent,
        "corpus_id": corpus_id,
        "chain_id": chain_id,
        "pack_id": pack_id,
        "subject_domains": subject_domains,
        "object_domains": object_domains,
    })


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


def compose_surface(chain: TeachingChain, pack: Pack) -> TeachingSurfaceProvenance:
    """The ADR-0052 surface for an admitted chain; every atom is a lemma or a pack string."""
    subject_domains = pack.semantic_domains(chain.subject)[: max(1, chain.domains_subject_k)]
    object_domains = pack.semantic_domains(chain.object)[: max(1, chain.domains_object_k)]
    surface = SURFACE_FORMAT.format(
        subject=chain.subject,
        corpus_id=chain.corpus_id,
        subject_domains="; ".join(subject_domains),
        connective=humanize_predicate(chain.connective),
        object=chain.object,
        object_domains="; ".join(object_domains),
    )
    return TeachingSurfaceProvenance(
        corpus_id=chain.corpus_id,
        chain_id=chain.chain_id,
        chain_provenance=chain.provenance,
        pack_id=pack.pack_id,
        pack_version=pack.version,
        subject=chain.subject,
        intent=chain.intent,
        connective=chain.connective,
        object=chain.object,
        subject_domains=subject_domains,
        object_domains=object_domains,
        surface=surface,
    )


def resolve_teaching_surface(
    registry: TeachingRegistry, subject: object, intent: object
) -> TeachingSurfaceProvenance | None:
    """None for an empty subject, an intent other than cause/verification, or no chain."""
    if not isinstance(subject, str) or not lemma_key(subject):
        return None
    chain = registry.chain(subject, intent)
    if chain is None:
        return None
    return compose_surface(chain, registry.pack_of(chain))


@cache
def _registry_at(packs: Path, teaching: Path) -> TeachingRegistry:
    # Corpora and packs are immutable at runtime (ADR-0052), so one load per location.
    return load_teaching_registry(teaching, packs)


def default_registry(
    packs: Path | str | None = None, teaching: Path | str | None = None
) -> TeachingRegistry:
    """The registry at the located data dirs (see store.model.locations), loaded once."""
    return _registry_at(packs_dir(packs).resolve(), teaching_dir(teaching).resolve())


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
    return compose_surface(chain, pack)
