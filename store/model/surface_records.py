"""Surface records CORE emits (grounding_source provenance), and their check from the surface
text alone (core-interop.md section 7): the record's subject, intent and ids are only hints."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from store.model.corpora import (
    TeachingChain,
    TeachingCorpus,
    TeachingIntent,
    TeachingRegistry,
    parse_intent,
)
from store.model.fields import RecordError, json_object, required, string
from store.model.surface_forms import SurfaceForm, form_of_hops
from store.model.surface_text import SurfaceTemplate, parse_template
from store.model.teaching_surface import (
    GroundingSource,
    TeachingSurfaceProvenance,
    render_chain,
)

OPTIONAL_TEXT_FIELDS = ("intent", "subject", "prompt", "turn_id", "session_id", "corpus_id",
                        "chain_id")


class SurfaceVerification(StrEnum):
    VERIFIED = "verified"  # some active chain renders exactly these bytes
    MISMATCH = "mismatch"  # the template names a chain that renders other bytes: kept
    UNRESOLVABLE = "unresolvable"  # no chain of the named corpus has the named subject
    OTHER_FORM = "other_form"  # teaching, but no chain template (planner prose, narrative...)
    NOT_CHECKED = "not_checked"  # sources other than teaching are stored as received


@dataclass(frozen=True, slots=True)
class SurfaceRecord:
    grounding_source: GroundingSource
    surface: str | None
    intent: str | None = None
    subject: str | None = None
    prompt: str | None = None
    turn_id: str | None = None
    session_id: str | None = None
    corpus_id: str | None = None
    chain_id: str | None = None


@dataclass(frozen=True, slots=True)
class CheckedFile:
    """What a verification was checked against."""

    kind: str  # "corpus" or "pack"
    id: str  # corpus_id or pack_id
    sha256: str  # of the corpus file bytes, or the pack's lexicon checksum
    version: str | None  # pack version; None for a corpus

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "sha256": self.sha256,
                "version": self.version}


@dataclass(frozen=True, slots=True)
class SurfaceCheck:
    verification: SurfaceVerification
    form: SurfaceForm | None  # by the hop clauses found; cross_pack for that marker
    subject: str | None  # recovered S
    corpus_id: str | None  # recovered C
    chain_id: str | None  # the one matching chain, or the record's among several
    candidate_chain_ids: tuple[str, ...]  # VERIFIED: every match; MISMATCH: C's chains of S
    hops: int | None
    hop_chain_ids: tuple[str, ...]
    prefix: str | None  # the known prefix(es) stripped, verbatim
    expected_surface: str | None  # MISMATCH only: what the chain renders in the same form
    derived: TeachingSurfaceProvenance | None  # of chain_id, else of the first candidate
    checked_against: tuple[CheckedFile, ...]


@dataclass(frozen=True, slots=True)
class CheckedSurface:
    record: SurfaceRecord
    check: SurfaceCheck


def is_surface_line(value: Any) -> bool:
    return isinstance(value, dict) and "grounding_source" in value


def parse_surface_record(value: Any) -> SurfaceRecord:
    obj = json_object(value, "record")
    raw_source = string(required(obj, "grounding_source", "record"), "grounding_source")
    try:
        source = GroundingSource(raw_source)
    except ValueError:
        allowed = ", ".join(s.value for s in GroundingSource)
        raise RecordError(
            f"grounding_source: {raw_source!r} is not one of {allowed}"
        ) from None
    surface = obj.get("surface")
    if surface is None and source is not GroundingSource.NONE:
        raise RecordError("surface: missing (only a 'none' record may omit its surface)")
    if surface is not None:
        string(surface, "surface")
    fields = {
        key: string(obj[key], key) if obj.get(key) is not None else None
        for key in OPTIONAL_TEXT_FIELDS
    }
    return SurfaceRecord(grounding_source=source, surface=surface, **fields)


def _unchecked(verification: SurfaceVerification) -> SurfaceCheck:
    return SurfaceCheck(verification, None, None, None, None, (), None, (), None, None, None, ())


def _servable(registry: TeachingRegistry, corpus: TeachingCorpus, subject: str
              ) -> list[TeachingChain]:
    """C's chains of S that CORE can serve: resolved in-pack ones, or unshadowed cross-pack."""
    found: list[TeachingChain] = []
    for intent in TeachingIntent:
        if corpus.cross_pack:
            chain = corpus.chains.get((subject, intent))
            if chain is not None and registry.in_pack_chain(subject, intent) is None:
                found.append(chain)
        else:
            chain = registry.chains.get((subject, intent))
            if chain is not None and chain.corpus_id == corpus.corpus_id:
                found.append(chain)
    return found


def _hinted_first(chains: list[TeachingChain], record: SurfaceRecord) -> list[TeachingChain]:
    """The record's chain_id, else its intent, puts a chain first; else cause, verification."""
    intent = parse_intent(record.intent)
    return sorted(chains, key=lambda c: (c.chain_id != record.chain_id, c.intent != intent))


def _checked_files(registry: TeachingRegistry, corpus: TeachingCorpus,
                   chains: list[TeachingChain]) -> tuple[CheckedFile, ...]:
    files = [CheckedFile("corpus", corpus.corpus_id, corpus.sha256, None)]
    pack_ids = [p for c in chains for p in (c.subject_pack_id, c.object_pack_id)]
    if corpus.pack is not None:
        pack_ids.insert(0, corpus.pack.pack_id)
    for pack_id in dict.fromkeys(pack_ids):
        pack = registry.packs.get(pack_id)
        if pack is not None and pack.present:
            files.append(CheckedFile("pack", pack.pack_id, pack.checksum, pack.version))
    return tuple(files)


def _corpus(registry: TeachingRegistry, template: SurfaceTemplate) -> TeachingCorpus | None:
    try:
        return registry.corpus(template.corpus_id)
    except KeyError:
        return None


def check_template(record: SurfaceRecord, template: SurfaceTemplate,
                   registry: TeachingRegistry) -> SurfaceCheck:
    form = SurfaceForm.CROSS_PACK if template.cross_pack else form_of_hops(template.hops)
    corpus = _corpus(registry, template)
    candidates = _servable(registry, corpus, template.subject) if corpus is not None else []

    def outcome(verification: SurfaceVerification, **found: Any) -> SurfaceCheck:
        fields: dict[str, Any] = dict(
            chain_id=None, candidate_chain_ids=(), hop_chain_ids=(), expected_surface=None,
            derived=None, checked_against=())
        fields.update(found)
        return SurfaceCheck(verification=verification, form=form, subject=template.subject,
                            corpus_id=template.corpus_id or None, hops=template.hops,
                            prefix=template.prefix, **fields)

    if corpus is None:
        return outcome(SurfaceVerification.UNRESOLVABLE)
    checked_against = _checked_files(registry, corpus, candidates)
    if not candidates:
        return outcome(SurfaceVerification.UNRESOLVABLE, checked_against=checked_against)
    # The form the hop count allows: render with exactly that many hops at most.
    rendered = {c.chain_id: render_chain(registry, c, form, template.hops)
                for c in candidates}
    matched = [c for c in _hinted_first(candidates, record)
               if rendered[c.chain_id].surface == template.body]
    matched_ids = {c.chain_id for c in matched}
    contradicted = (record.corpus_id not in (None, corpus.corpus_id)
                    or (record.chain_id is not None and record.chain_id not in matched_ids))
    if matched and not contradicted:
        chain_id = matched[0].chain_id if len(matched) == 1 else (
            record.chain_id if record.chain_id in matched_ids else None)
        derived = rendered[chain_id or matched[0].chain_id]
        return outcome(SurfaceVerification.VERIFIED, chain_id=chain_id,
                       candidate_chain_ids=tuple(sorted(matched_ids)),
                       hop_chain_ids=derived.hop_chain_ids, derived=derived,
                       checked_against=checked_against)
    ordered = matched or _hinted_first(candidates, record)
    ids = {c.chain_id for c in candidates}
    chain_id = record.chain_id if record.chain_id in ids else (
        candidates[0].chain_id if len(candidates) == 1 else None)
    derived = rendered[chain_id or ordered[0].chain_id]
    return outcome(SurfaceVerification.MISMATCH, chain_id=chain_id,
                   candidate_chain_ids=tuple(sorted(ids)), expected_surface=derived.surface,
                   derived=derived, checked_against=checked_against)


def check_surface(record: SurfaceRecord, registry: TeachingRegistry) -> CheckedSurface:
    """Check a teaching surface from its own text; record the outcome, never rewrite it."""
    if record.grounding_source is not GroundingSource.TEACHING:
        return CheckedSurface(record, _unchecked(SurfaceVerification.NOT_CHECKED))
    template = parse_template(record.surface or "")
    if template is None:
        return CheckedSurface(record, _unchecked(SurfaceVerification.OTHER_FORM))
    return CheckedSurface(record, check_template(record, template, registry))


__all__ = [
    "CheckedFile", "CheckedSurface", "SurfaceCheck", "SurfaceForm", "SurfaceRecord",
    "SurfaceVerification", "check_surface", "is_surface_line", "parse_surface_record",
]
