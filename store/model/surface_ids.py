"""Id recipes of surface records and their sightings (docs/design.md, extended by revision 0005).

A surface record's id names the surface, its provenance, the pack domains used and, for a
checked teaching surface, how it verified and against which corpus and pack files: the same
surface checked against other files is another record, never a conflict.

The recipes take the values as a row stores them (JSON columns decoded), so the writer and
`verify` compute every id with the same function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.model.canonical import content_id
from store.model.surface_records import CheckedSurface, SurfaceVerification

# The check columns (revision 0005) in the order they enter an id.
CHECK_COLUMNS: tuple[str, ...] = ("surface_form", "hops", "hop_chain_ids",
                                  "candidate_chain_ids", "surface_prefix", "checked_against")


@dataclass(frozen=True, slots=True)
class SurfaceIdentity:
    """A surface record's identifying values, exactly as its row stores them."""

    grounding_source: str
    surface: str | None
    subject: str | None
    intent: str | None
    corpus_id: str | None
    chain_id: str | None
    pack_id: str | None
    subject_domains: list[str] | None
    object_domains: list[str] | None
    verification: str
    surface_form: str | None = None
    hops: int | None = None
    hop_chain_ids: list[str] | None = None
    candidate_chain_ids: list[str] | None = None
    surface_prefix: str | None = None
    checked_against: list[dict[str, Any]] | None = None

    def provenance(self) -> dict[str, Any]:
        return {"grounding_source": self.grounding_source, "surface": self.surface,
                "subject": self.subject, "intent": self.intent, "corpus_id": self.corpus_id,
                "chain_id": self.chain_id, "pack_id": self.pack_id}

    def check(self) -> dict[str, Any]:
        """The check's outcome as it enters the id; empty for a surface that was not checked,
        so records of other sources keep the ids they had before revision 0005."""
        if self.verification == SurfaceVerification.NOT_CHECKED.value:
            return {}
        found: dict[str, Any] = {"verification": self.verification}
        for column in CHECK_COLUMNS:
            value = getattr(self, column)
            if value is not None:
                found[column] = value
        return found


def surface_identity(checked: CheckedSurface) -> SurfaceIdentity:
    """What the record says (its hints win), what the check recovered from the text and how."""
    record, check = checked.record, checked.check
    derived = check.derived
    intent = record.intent
    if intent is None and derived is not None and check.chain_id is not None:
        intent = derived.intent.value
    checked_at_all = check.verification is not SurfaceVerification.NOT_CHECKED
    return SurfaceIdentity(
        grounding_source=record.grounding_source.value,
        surface=record.surface,
        subject=record.subject if record.subject is not None else check.subject,
        intent=intent,
        corpus_id=record.corpus_id or check.corpus_id,
        chain_id=record.chain_id or check.chain_id,
        pack_id=derived.pack_id if derived else None,
        subject_domains=list(derived.subject_domains) if derived else None,
        object_domains=list(derived.object_domains) if derived else None,
        verification=check.verification.value,
        surface_form=check.form.value if checked_at_all and check.form is not None else None,
        hops=check.hops if checked_at_all else None,
        hop_chain_ids=(list(check.hop_chain_ids)
                       if checked_at_all and check.hops is not None else None),
        candidate_chain_ids=(list(check.candidate_chain_ids) or None) if checked_at_all else None,
        surface_prefix=check.prefix if checked_at_all else None,
        checked_against=([f.as_dict() for f in check.checked_against] or None
                         if checked_at_all else None),
    )


def surface_id(identity: SurfaceIdentity) -> str:
    return content_id({
        **identity.provenance(),
        "subject_domains": identity.subject_domains,
        "object_domains": identity.object_domains,
        **identity.check(),
    })


def surface_id_before_0005(identity: SurfaceIdentity) -> str:
    """The recipe rows stored before revision 0005 were keyed by: no check outcome."""
    return content_id({
        **identity.provenance(),
        "subject_domains": identity.subject_domains,
        "object_domains": identity.object_domains,
    })


def sighting_id(surface: str, session_id: str | None, turn_id: str | None,
                prompt: str | None, turn_key: str | None) -> str:
    """One sighting of a surface: the turn that emitted it (its stored key, when it has one)."""
    sighting: dict[str, Any] = {"surface_id": surface, "session_id": session_id,
                                "turn_id": turn_id, "prompt": prompt}
    if turn_key is not None:
        sighting["turn_key"] = turn_key
    return content_id(sighting)
