"""Id recipes of surface records and their sightings (DESIGN.md, extended by revision 0005).

A surface record's id names the surface, its provenance, the pack domains used and, for a
checked teaching surface, how it verified and against which corpus and pack files: the same
surface checked against other files is another record, never a conflict.
"""

from __future__ import annotations

from typing import Any

from store.model.canonical import content_id
from store.model.surface_records import CheckedSurface, SurfaceVerification


def surface_provenance(checked: CheckedSurface) -> dict[str, Any]:
    """What the record says (its hints win) and what the check recovered from the text."""
    record, check = checked.record, checked.check
    derived = check.derived
    intent = record.intent
    if intent is None and derived is not None and check.chain_id is not None:
        intent = derived.intent.value
    return {
        "grounding_source": record.grounding_source.value,
        "surface": record.surface,
        "subject": record.subject if record.subject is not None else check.subject,
        "intent": intent,
        "corpus_id": record.corpus_id or check.corpus_id,
        "chain_id": record.chain_id or check.chain_id,
        "pack_id": derived.pack_id if derived else None,
    }


def check_identity(checked: CheckedSurface) -> dict[str, Any]:
    """The check's outcome as it enters the id; empty for a surface that was not checked, so
    records of other sources keep the ids they had before revision 0005."""
    check = checked.check
    if check.verification is SurfaceVerification.NOT_CHECKED:
        return {}
    found: dict[str, Any] = {
        "verification": check.verification.value,
        "surface_form": check.form.value if check.form is not None else None,
        "hops": check.hops,
        "hop_chain_ids": list(check.hop_chain_ids) if check.hops is not None else None,
        "candidate_chain_ids": list(check.candidate_chain_ids) or None,
        "surface_prefix": check.prefix,
        "checked_against": [f.as_dict() for f in check.checked_against] or None,
    }
    return {key: value for key, value in found.items() if value is not None}


def surface_id(checked: CheckedSurface) -> str:
    derived = checked.check.derived
    return content_id({
        **surface_provenance(checked),
        "subject_domains": list(derived.subject_domains) if derived else None,
        "object_domains": list(derived.object_domains) if derived else None,
        **check_identity(checked),
    })


def sighting_id(surface: str, checked: CheckedSurface, turn_key: str | None) -> str:
    """One sighting of a surface: the turn that emitted it (its stored key, when it has one)."""
    record = checked.record
    sighting: dict[str, Any] = {"surface_id": surface, "session_id": record.session_id,
                                "turn_id": record.turn_id, "prompt": record.prompt}
    if turn_key is not None:
        sighting["turn_key"] = turn_key
    return content_id(sighting)
