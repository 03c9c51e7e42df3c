"""The forms a teaching surface takes (core-interop.md 3.1, 3.2, 3.5) and the hop walk that
composed and transitive forms add."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from store.model.corpora import TeachingChain, TeachingIntent, TeachingRegistry

DEFAULT_MAX_DEPTH: Final = 2  # CORE's transitive_max_depth default


class SurfaceForm(StrEnum):
    SINGLE = "single"  # ADR-0052
    COMPOSED = "composed"  # ADR-0062: at most 1 hop
    TRANSITIVE = "transitive"  # ADR-0083: at most max_depth hops
    CROSS_PACK = "cross_pack"  # ADR-0067: never hops


def hop_limit(form: SurfaceForm, max_depth: int = DEFAULT_MAX_DEPTH) -> int:
    """Transitive adds N = max_depth hops (CORE's code, not its docstring's max_depth - 1)."""
    if form is SurfaceForm.COMPOSED:
        return 1
    if form is SurfaceForm.TRANSITIVE:
        return max(0, max_depth)
    return 0


def form_of_hops(hops: int) -> SurfaceForm:
    """The form a surface with `hops` clauses claims: 0 single, 1 composed, more transitive."""
    if hops <= 0:
        return SurfaceForm.SINGLE
    return SurfaceForm.COMPOSED if hops == 1 else SurfaceForm.TRANSITIVE


def next_hops(registry: TeachingRegistry, root: TeachingChain, limit: int
              ) -> tuple[TeachingChain, ...]:
    """From object X try (X, cause) then (X, verification) among the resolved chains; a
    rejected cause candidate falls through to verification; stop when neither is accepted."""
    if limit <= 0 or root.subject_pack_id != root.object_pack_id:
        return ()
    visited = {root.subject, root.object}
    hops: list[TeachingChain] = []
    current = root.object
    while len(hops) < limit:
        accepted = None
        for intent in (TeachingIntent.CAUSE, TeachingIntent.VERIFICATION):
            candidate = registry.chains.get((current, intent))
            if (candidate is None or candidate.object in visited
                    or candidate.corpus_id != root.corpus_id
                    or not registry.object_pack_of(candidate).semantic_domains(
                        candidate.object)):
                continue
            accepted = candidate
            break
        if accepted is None:
            break
        hops.append(accepted)
        visited.add(accepted.object)
        current = accepted.object
    return tuple(hops)
