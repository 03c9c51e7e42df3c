"""The store's own words with the ADRs' explanations, shown on hover (title attributes)."""

from __future__ import annotations

# ADR-0225: the closed ResidualKind taxonomy and the ResidualSourceAxis layers.
KINDS = {
    "missing_proposal": "The required construction proposal is absent.",
    "missing_relation": "The underlying relation edge (e.g. quantity_entity) is missing.",
    "missing_role": "A required role slot on the relation is unbound.",
    "ambiguous_relation": "Multiple candidate relations exist with no unique resolution.",
    "ambiguous_role": "A role binds to multiple candidate mentions ambiguously.",
    "inexact_provenance": "Spans or quantities lack exact, source-grounded provenance.",
    "nonlocal_binding": "The binding requires non-local references (e.g. pronoun resolution "
                        "or cross-sentence leaps).",
    "unsupported_topology": "The clause contains grammar or structure unsupported by the "
                            "family (e.g. passive voice, multiple coordinate actors).",
    "unit_object_conflict": "Grounded quantity units conflict with the object type (e.g. count "
                            "vs. measurement mismatch).",
    "hazard_blocked": "An active semantic confuser or hazard blocks the contract.",
    "target_unbound": "The question target cannot be bound or is missing.",
    "contract_gap_unclassified": "A fallback classification for unmapped contract failures "
                                 "(non-searchable).",
}
AXES = {
    "proposal": "Bounded proposal detection layer.",
    "relation": "Binding graph / relational edge layer.",
    "role": "Slot-binding role layer.",
    "provenance": "Source-grounding and span layer.",
    "locality": "Clause and sentence distance bounds.",
    "topology": "Grammatical and structural patterns.",
    "hazard": "Cognitive / confuser hazard detection.",
    "target": "Question target binding.",
    "unit_object": "Count / measurement unit boundary.",
    "unknown": "Fallback for unmapped boundaries.",
}
# ADR-0052 and CORE's later values of grounding_source.
GROUNDING_SOURCES = {
    "vault": "Grounded in the session vault.",
    "pack": "Grounded in a ratified pack.",
    "teaching": "Grounded in a reviewed teaching chain (ADR-0052): reviewed memory, not pack "
                "memory.",
    "none": "Not grounded: the universal disclosure.",
    "partial": "Partly grounded.",
    "oov": "Out of vocabulary.",
    "deduction": "Grounded by deduction.",
    "curriculum": "Grounded in the curriculum.",
}
VERIFICATIONS = {
    "verified": "An active teaching chain renders exactly these bytes.",
    "mismatch": "The surface names a chain that renders other bytes: kept, with the expected "
                "text.",
    "unresolvable": "No chain of the named corpus has the named subject.",
    "other_form": "Teaching, but no chain template (planner prose, narrative...).",
    "not_checked": "Sources other than teaching are stored as received.",
}
FIELDS = {
    "kind": KINDS, "residual_kind": KINDS, "axis": AXES, "source_axis": AXES,
    "grounding_source": GROUNDING_SOURCES, "groundingSource": GROUNDING_SOURCES,
    "verification": VERIFICATIONS,
}


def explain(field: str, value: object) -> str | None:
    """The explanation of `value` of `field` (a filter or column name), if the ADRs give one."""
    return FIELDS.get(field, {}).get(str(value).lower()) if value is not None else None
