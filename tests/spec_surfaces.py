"""Expected surface values, written out from ADR-0052, core-facts.md and the example file.

examples/adr_0052_surfaces.jsonl holds 17 lines: the ADR's three teaching surfaces byte for
byte, a teaching surface that drops a pack domain (mismatch), one from an unregistered corpus
(unresolvable), one record of every other grounding_source, turns seen again in session
`eval-b`, and one line repeated verbatim. Ids follow docs/design.md's recipe, reimplemented here.
"""

from __future__ import annotations

import hashlib
import json
from typing import NamedTuple

from teaching_data import (
    ADR_DOMAINS,
    CHECKED_AGAINST_SAMPLE,
    CORPUS_ID,
    KNOWLEDGE_SURFACE,
    LIGHT_SURFACE,
    PROVENANCE,
    SAMPLE_PACK_ID,
    SAMPLE_PACK_VERSION,
    verified_single,
)

PACK_ID = SAMPLE_PACK_ID  # the examples are checked against the repository's sample pack



def spec_surface_id(*, grounding_source: str, surface: str | None, subject: str | None,
                    intent: str | None, corpus_id: str | None = None,
                    chain_id: str | None = None, pack_id: str | None = None,
                    subject_domains: list[str] | None = None,
                    object_domains: list[str] | None = None,
                    check: dict[str, object] | None = None) -> str:
    """docs/design.md: sha256 of the canonical surface, its provenance and the pack domains used;
    since revision 0005 a checked teaching surface adds how it verified (`check`: its
    non-null verification, surface_form, hops, hop_chain_ids, candidate_chain_ids,
    surface_prefix and checked_against)."""
    body = {"grounding_source": grounding_source, "surface": surface, "subject": subject,
            "intent": intent, "corpus_id": corpus_id, "chain_id": chain_id, "pack_id": pack_id,
            "subject_domains": subject_domains, "object_domains": object_domains,
            **(check or {})}
    encoded = json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


class Expected(NamedTuple):
    grounding_source: str  # GraphQL enum name; CORE writes it lower case
    subject: str
    intent: str
    verification: str
    turns: int  # distinct turns (occurrences); the verbatim repeat is not a new one


# Every surface of the example file, in append order (first sighting).
SURFACES = [
    Expected("TEACHING", "light", "cause", "VERIFIED", 2),
    Expected("TEACHING", "knowledge", "cause", "VERIFIED", 2),
    Expected("TEACHING", "memory", "verification", "VERIFIED", 1),
    Expected("NONE", "correction", "correction", "NOT_CHECKED", 2),
    Expected("PACK", "knowledge", "definition", "NOT_CHECKED", 2),
    Expected("VAULT", "memory", "recall", "NOT_CHECKED", 1),
    Expected("TEACHING", "knowledge", "cause", "MISMATCH", 1),
    Expected("TEACHING", "justice", "cause", "UNRESOLVABLE", 1),
    Expected("PARTIAL", "memory", "cause", "NOT_CHECKED", 1),
    Expected("OOV", "glimmerwort", "definition", "NOT_CHECKED", 1),
    Expected("DEDUCTION", "knowledge", "verification", "NOT_CHECKED", 1),
    Expected("CURRICULUM", "light", "recall", "NOT_CHECKED", 1),
]
TOTAL_SURFACES = 12
TOTAL_SURFACE_TURNS = 16

LIGHT_CHAIN = "cause_light_reveals_truth"
KNOWLEDGE_CHAIN = "cause_knowledge_requires_evidence"
MEMORY_CHAIN = "verification_memory_requires_recall"

LIGHT_ID = spec_surface_id(
    grounding_source="teaching", surface=LIGHT_SURFACE, subject="light", intent="cause",
    corpus_id=CORPUS_ID, chain_id=LIGHT_CHAIN, pack_id=PACK_ID,
    subject_domains=ADR_DOMAINS["light"], object_domains=ADR_DOMAINS["truth"],
    check=verified_single(LIGHT_CHAIN))
LIGHT_NODE = {
    "surfaceId": LIGHT_ID,
    "groundingSource": "TEACHING",
    "surface": LIGHT_SURFACE,
    "subject": "light",
    "intent": "cause",
    "corpusId": CORPUS_ID,
    "chainId": LIGHT_CHAIN,
    "chainProvenance": PROVENANCE,
    "packId": PACK_ID,
    "packVersion": SAMPLE_PACK_VERSION,
    "connective": "reveals",
    "object": "truth",
    "subjectDomains": ["cognition.illumination", "logos.core"],
    "objectDomains": ["cognition.truth"],
    "verification": "VERIFIED",
    "expectedSurface": None,
    "occurrenceCount": 2,
}
# (sessionId, turnId, prompt): cause_light_007 in two eval runs.
LIGHT_TURNS = [
    ("eval-a", "cause_light_007", "Why does light exist?"),
    ("eval-b", "cause_light_007", "Why does light exist?"),
]

# A surface composed with one subject domain where the chain asks for two.
MISMATCHED_KNOWLEDGE_SURFACE = (
    "knowledge — teaching-grounded (cognition_chains_v1): cognition.knowledge."
    " knowledge requires evidence (cognition.evidence). No session evidence yet."
)
MISMATCH_ID = spec_surface_id(
    grounding_source="teaching", surface=MISMATCHED_KNOWLEDGE_SURFACE, subject="knowledge",
    intent="cause", corpus_id=CORPUS_ID, chain_id=KNOWLEDGE_CHAIN, pack_id=PACK_ID,
    subject_domains=ADR_DOMAINS["knowledge"], object_domains=ADR_DOMAINS["evidence"],
    check={"verification": "mismatch", "surface_form": "single", "hops": 0,
           "hop_chain_ids": [], "candidate_chain_ids": [KNOWLEDGE_CHAIN],
           "checked_against": CHECKED_AGAINST_SAMPLE})
MISMATCH_NODE = {
    "surfaceId": MISMATCH_ID,
    "surface": MISMATCHED_KNOWLEDGE_SURFACE,
    "corpusId": CORPUS_ID,
    "chainId": KNOWLEDGE_CHAIN,
    "packId": PACK_ID,
    "verification": "MISMATCH",
    "expectedSurface": KNOWLEDGE_SURFACE,
}

# No chain registered for (justice, cause): kept as CORE said it, without pack provenance.
JUSTICE_SURFACE = (
    "justice — teaching-grounded (cognition_chains_v2): ethics.justice."
    " justice requires fairness (ethics.fairness). No session evidence yet."
)
UNRESOLVABLE_ID = spec_surface_id(
    grounding_source="teaching", surface=JUSTICE_SURFACE, subject="justice", intent="cause",
    corpus_id="cognition_chains_v2", chain_id="cause_justice_requires_fairness",
    # No such corpus: nothing was checked against, only the template was read.
    check={"verification": "unresolvable", "surface_form": "single", "hops": 0,
           "hop_chain_ids": []})
UNRESOLVABLE_NODE = {
    "surfaceId": UNRESOLVABLE_ID,
    "surface": JUSTICE_SURFACE,
    "corpusId": "cognition_chains_v2",
    "chainId": "cause_justice_requires_fairness",
    "packId": None,
    "subjectDomains": None,
    "verification": "UNRESOLVABLE",
    "expectedSurface": None,
}

# correction_specific_015 fell through to the disclosure: grounding_source none, no surface.
NONE_ID = spec_surface_id(grounding_source="none", surface=None, subject="correction",
                          intent="correction")


def facet(value: str | None, count: int, occurrences: int) -> dict[str, object]:
    return {"value": value, "count": count, "occurrences": occurrences}


SURFACE_FACETS_ALL = {
    "total": 12,
    "occurrences": 16,
    "byGroundingSource": [
        facet("teaching", 5, 7),
        facet("curriculum", 1, 1),
        facet("deduction", 1, 1),
        facet("none", 1, 2),
        facet("oov", 1, 1),
        facet("pack", 1, 2),
        facet("partial", 1, 1),
        facet("vault", 1, 1),
    ],
    "byCorpus": [
        facet(None, 7, 9),  # every source but teaching
        facet("cognition_chains_v1", 4, 6),
        facet("cognition_chains_v2", 1, 1),
    ],
    "byIntent": [
        facet("cause", 5, 7),
        facet("definition", 2, 3),
        facet("recall", 2, 2),
        facet("verification", 2, 2),
        facet("correction", 1, 2),
    ],
    "byVerification": [
        facet("not_checked", 7, 9),
        facet("verified", 3, 5),
        facet("mismatch", 1, 1),
        facet("unresolvable", 1, 1),
    ],
}

# The same over teaching surfaces only.
TEACHING_FACETS = {
    "total": 5,
    "occurrences": 7,
    "byGroundingSource": [facet("teaching", 5, 7)],
    "byCorpus": [facet("cognition_chains_v1", 4, 6), facet("cognition_chains_v2", 1, 1)],
    "byIntent": [facet("cause", 4, 6), facet("verification", 1, 1)],
    "byVerification": [facet("verified", 3, 5), facet("mismatch", 1, 1),
                       facet("unresolvable", 1, 1)],
}
