"""Surface records CORE emits (grounding_source provenance), and their re-derivation check."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from store.model.corpora import TeachingRegistry
from store.model.fields import RecordError, json_object, required, string
from store.model.teaching_surface import (
    GroundingSource,
    TeachingSurfaceProvenance,
    resolve_teaching_surface,
)

OPTIONAL_TEXT_FIELDS = ("intent", "subject", "prompt", "turn_id", "session_id", "corpus_id",
                        "chain_id")


class SurfaceVerification(StrEnum):
    VERIFIED = "verified"  # re-derived byte for byte from the registered corpora and packs
    MISMATCH = "mismatch"  # a chain exists but composes another surface: kept as evidence
    UNRESOLVABLE = "unresolvable"  # no registered chain for (subject, intent)
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
class CheckedSurface:
    record: SurfaceRecord
    verification: SurfaceVerification
    derived: TeachingSurfaceProvenance | None


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


def check_surface(record: SurfaceRecord, registry: TeachingRegistry) -> CheckedSurface:
    """Re-derive a teaching surface; record the outcome, never rewrite what CORE said."""
    if record.grounding_source is not GroundingSource.TEACHING:
        return CheckedSurface(record, SurfaceVerification.NOT_CHECKED, None)
    derived = resolve_teaching_surface(registry, record.subject, record.intent)
    if derived is None:
        return CheckedSurface(record, SurfaceVerification.UNRESOLVABLE, None)
    same = (
        record.surface == derived.surface
        and record.corpus_id in (None, derived.corpus_id)
        and record.chain_id in (None, derived.chain_id)
    )
    verification = SurfaceVerification.VERIFIED if same else SurfaceVerification.MISMATCH
    return CheckedSurface(record, verification, derived)
