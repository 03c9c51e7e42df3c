"""Reading a teaching surface's own text (core-interop.md section 7): the Workbench prefixes,
the subject S, the corpus C and the number of hop clauses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from store.model.teaching_surface import CROSS, CROSS_PACK_MARKER, TEACHING_MARKER

# What the Workbench pipeline may put before a served surface (section 3.4).
KNOWN_PREFIXES: Final = (
    "Grounded but not geometrically certified — ",
    "(speculative, not yet reviewed) ",
)
HOP_CLAUSE: Final = ", which "
CORPUS_END: Final = "): "


@dataclass(frozen=True, slots=True)
class SurfaceTemplate:
    prefix: str | None  # the known prefixes stripped, verbatim
    body: str  # the surface without them: what a chain renders
    subject: str
    corpus_id: str  # "" when the text has no `): ` after the marker
    cross_pack: bool
    pack_ids: tuple[str, str] | None  # a cross-pack surface's subject and object packs
    hops: int  # `, which` clauses; no lemma or domain holds that text at CORE HEAD


def strip_prefixes(surface: str) -> tuple[str | None, str]:
    stripped = ""
    remaining = list(KNOWN_PREFIXES)
    found = True
    while found:
        found = False
        for prefix in remaining:
            if surface.startswith(prefix):
                stripped, surface = stripped + prefix, surface[len(prefix):]
                remaining.remove(prefix)
                found = True
                break
    return (stripped or None), surface


def _first_marker(body: str) -> tuple[int, str] | None:
    found = [(body.find(marker), marker) for marker in (TEACHING_MARKER, CROSS_PACK_MARKER)]
    found = [(at, marker) for at, marker in found if at >= 0]
    return min(found) if found else None


def parse_template(surface: str) -> SurfaceTemplate | None:
    """None when the text is not a chain template (planner prose, narrative, example...)."""
    prefix, body = strip_prefixes(surface)
    marker = _first_marker(body)
    if marker is None:
        return None
    at, text = marker
    rest = body[at + len(text):]
    end = rest.find(CORPUS_END)
    inside = rest[:end] if end >= 0 else ""
    cross_pack = text == CROSS_PACK_MARKER
    pack_ids: tuple[str, str] | None = None
    corpus_id = inside
    if cross_pack and ": " in inside:
        corpus_id, packs = inside.split(": ", 1)
        subject_pack, sep, object_pack = packs.partition(f" {CROSS} ")
        pack_ids = (subject_pack, object_pack) if sep else None
    return SurfaceTemplate(prefix=prefix, body=body, subject=body[:at], corpus_id=corpus_id,
                           cross_pack=cross_pack, pack_ids=pack_ids,
                           hops=body.count(HOP_CLAUSE))
