"""Chains and their surfaces in every form, typed out from core-interop.md 3.1-3.5 (invented
lemmas and domains; see teaching_data.CHECKOUT_DOMAINS)."""

from __future__ import annotations

from typing import Any

from teaching_data import (
    COGNITION_PACK,
    KNOWLEDGE,
    LIGHT,
    MEMORY,
    RELATIONS_PACK,
    chain,
)

JUDGMENT = chain("cause_judgment_requires_wisdom", "judgment", "cause", "requires", "wisdom")
WISDOM_CYCLE = chain("cause_wisdom_grounds_judgment", "wisdom", "cause", "grounds", "judgment")
WISDOM_KNOWLEDGE = chain("verification_wisdom_requires_knowledge", "wisdom", "verification",
                         "requires", "knowledge", domains_object_k=2)
EVIDENCE_BACK = chain("cause_evidence_supports_wisdom", "evidence", "cause", "supports",
                      "wisdom")
COGNITION = [LIGHT, KNOWLEDGE, MEMORY, JUDGMENT, WISDOM_CYCLE, WISDOM_KNOWLEDGE, EVIDENCE_BACK]
TRUTH_GROUNDS_REALITY = chain("cause_truth_grounds_reality", "truth", "cause", "grounds",
                              "reality")

JUDGMENT_HEAD = ("judgment — teaching-grounded (cognition_chains_v1): cognition.judgment;"
                 " practice.discernment. judgment requires wisdom (cognition.wisdom)")
ENDING = ". No session evidence yet."
JUDGMENT_SINGLE = JUDGMENT_HEAD + ENDING
# (wisdom, cause) is a cycle back to judgment, so (wisdom, verification) is used; the hop's
# own domains_object_k (2) decides its domains.
JUDGMENT_COMPOSED = (JUDGMENT_HEAD + ", which requires knowledge (cognition.knowledge;"
                     " epistemic.ground)" + ENDING)
JUDGMENT_TRANSITIVE = (JUDGMENT_HEAD + ", which requires knowledge (cognition.knowledge;"
                       " epistemic.ground), which requires evidence (cognition.evidence)"
                       + ENDING)

CROSS_IDENTITY: dict[str, Any] = {
    "subject": "identity", "intent": "verification", "connective": "is_grounded_in",
    "object": "memory", "subject_pack_id": RELATIONS_PACK, "object_pack_id": COGNITION_PACK,
    "provenance": "adr-0067:fixture",
}
IDENTITY_SURFACE = (
    "identity \u2014 cross-pack-grounded (cross_pack_chains_v1: en_core_relations_v1"
    " \u00d7 en_core_cognition_v1): relation.identity; self.core. identity is grounded in"
    " memory (cognition.memory). No session evidence yet."
)
