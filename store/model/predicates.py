"""The connectives CORE's `humanize_predicate` recognises, and how each one reads."""

from __future__ import annotations

from typing import Final

# Exactly the 26 keys of generate.semantic_templates.humanize_predicate (core-facts.md).
CONNECTIVES: Final = frozenset({
    "is_defined_as", "is_caused_by", "has_steps", "contrasts_with", "corrects", "recalls",
    "is_verified_as", "addresses", "defines", "means", "grounds", "supports", "causes",
    "reveals", "precedes", "follows", "belongs_to", "answers", "is_grounded_in",
    "is_distinguished_from", "implies", "entails", "requires", "verifies", "evidences",
    "orders",
})

_IRREGULAR: Final = {"has_steps": "has the following steps"}


def is_connective(name: str) -> bool:
    """Exact key match: no case folding, no stripping, as CORE's lookup does."""
    return name in CONNECTIVES


def humanize_predicate(connective: str) -> str:
    """`is_grounded_in` -> "is grounded in"; any other key reads the same way, case kept
    (CORE's loader does not check connectives against the 26: core-interop.md section 2)."""
    return _IRREGULAR.get(connective, connective.replace("_", " "))
