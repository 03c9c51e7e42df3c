"""Expected values, written out from the example files and the ADR (not computed by the store).

The ids follow docs/design.md's recipe, reimplemented here independently of store.model.
"""

from __future__ import annotations

import hashlib
import json


def spec_residual_id(organ: str, kind: str, code: str, spans: list[dict[str, object]]) -> str:
    body = {"candidate_organ": organ, "residual_kind": kind, "residual_code": code,
            "evidence_spans": spans}
    encoded = json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


GAINED_AT_4 = [{"text": "gained", "start": 4, "end": 10, "sentence_index": None}]

# The residual "Tom gained apples." and "Sam gained pears." share (seen twice).
DELTA_QUANTITY_ID = spec_residual_id(
    "unary_delta_transition", "missing_role", "delta_quantity_unbound", GAINED_AT_4)
CHANGED_OBJECT_ID = spec_residual_id(
    "unary_delta_transition", "missing_role", "changed_object_unbound", GAINED_AT_4)

# Residual codes in append order: adr_0225_frames.jsonl, then core_frames_families.jsonl.
CODES_IN_APPEND_ORDER = [
    "action_cue_unbound", "direction_unbound", "changed_object_unbound",  # "Tom gained 3."
    "delta_quantity_unbound",  # "Tom gained apples." (and again "Sam gained pears.")
    "passive_voice_unsupported", "unit_object_conflict",
    "entity_unbound",  # "Mia has 5."
    "base_quantity_unbound", "state_entity_unbound",  # "The price fell to a third."
    "original_whole_unbound", "inverse_topology_unlicensed",  # "40% of the students walk."
    "unbound_base_quantity",  # "The tariff doubles after 6 pm." (not in the ADR table)
]
MISSING_ROLE_CODES = [
    "action_cue_unbound", "direction_unbound", "changed_object_unbound",
    "delta_quantity_unbound", "entity_unbound", "base_quantity_unbound",
    "state_entity_unbound", "original_whole_unbound",
]
TOTAL_RESIDUALS = 12
TOTAL_OCCURRENCES = 13
TOTAL_ASSESSMENTS = 10  # one of them runnable ("Tom gained 3 apples.")
TOTAL_BATCHES = 3  # adr_0225_frames.jsonl, core_frames_families.jsonl, adr_0052_surfaces.jsonl
# 10 assessments + 12 residuals + 13 occurrences + 2 batches, then 12 surfaces + 16 turns + 1.
LEDGER_LENGTH = 66


def facet(value: str | None, count: int, occurrences: int) -> dict[str, object]:
    return {"value": value, "count": count, "occurrences": occurrences}


# The facet lists of enums: GraphQL gives their values by the enum's names (MISSING_ROLE for
# CORE's missing_role), what a filter takes.
ENUM_FACETS = ("byKind", "byAxis", "byGroundingSource", "byVerification",
               "byNormativeClearance")


def graphql_facets(facets: dict[str, object]) -> dict[str, object]:
    """Facets as the query layer counts them (CORE's spelling), as GraphQL answers them."""
    return {name: [{**f, "value": f["value"].upper()} for f in value]  # type: ignore[attr-defined]
            if name in ENUM_FACETS else value for name, value in facets.items()}


FACETS_ALL = {
    "total": 12,
    "occurrences": 13,
    "byKind": [
        facet("missing_role", 8, 9),
        facet("unsupported_topology", 2, 2),
        facet("contract_gap_unclassified", 1, 1),
        facet("unit_object_conflict", 1, 1),
    ],
    "byAxis": [
        facet("role", 8, 9),
        facet("topology", 2, 2),
        facet("unit_object", 1, 1),
        facet("unknown", 1, 1),
    ],
    "byOrgan": [
        facet("unary_delta_transition", 6, 7),
        facet("fraction_decrease", 2, 2),
        facet("percent_partition", 2, 2),
        facet("quantity_entity_binding", 1, 1),
        facet("temporal_tariff", 1, 1),
    ],
    "byFamily": [
        facet("state_change.unary_delta", 6, 7),
        facet("partition.percent_partition", 2, 2),
        facet("proportional_change.decrease_to_fraction", 2, 2),
        facet("binding.quantity_entity", 1, 1),
        facet(None, 1, 1),  # temporal_tariff belongs to no family
    ],
    "byCode": [
        facet("action_cue_unbound", 1, 1),
        facet("base_quantity_unbound", 1, 1),
        facet("changed_object_unbound", 1, 1),
        facet("delta_quantity_unbound", 1, 2),
        facet("direction_unbound", 1, 1),
        facet("entity_unbound", 1, 1),
        facet("inverse_topology_unlicensed", 1, 1),
        facet("original_whole_unbound", 1, 1),
        facet("passive_voice_unsupported", 1, 1),
        facet("state_entity_unbound", 1, 1),
        facet("unbound_base_quantity", 1, 1),
        facet("unit_object_conflict", 1, 1),
    ],
}


# The tree size after each batch of the example store, and of `journal_db` (batch 4, the
# Workbench journal: 6 turns, 6 surface sightings, 4 new surfaces, its batch row = 17 leaves).
# Batch 1 = 5 assessments + 6 residuals + 6 occurrences + its batch row = 18 leaves;
# batch 2 = 5 + 6 + 7 + 1 = 19; batch 3 = 12 surfaces + 16 sightings + 1 = 29.
HEADS = {1: 18, 2: 37, 3: 66, 4: 83}

# The store as of batch 1 (adr_0225_frames.jsonl): "Tom gained apples." seen once only.
CODES_OF_BATCH_1 = CODES_IN_APPEND_ORDER[:6]
FACETS_BATCH_1 = {
    "total": 6,
    "occurrences": 6,
    "byKind": [
        facet("missing_role", 4, 4),
        facet("unit_object_conflict", 1, 1),
        facet("unsupported_topology", 1, 1),
    ],
    "byAxis": [facet("role", 4, 4), facet("topology", 1, 1), facet("unit_object", 1, 1)],
    "byOrgan": [facet("unary_delta_transition", 6, 6)],
    "byFamily": [facet("state_change.unary_delta", 6, 6)],
    "byCode": [facet(code, 1, 1) for code in sorted(CODES_OF_BATCH_1)],
}
# Most sightings first, ties in append order: only "Tom gained apples." was seen twice.
CODES_MOST_SEEN = ["delta_quantity_unbound", *(
    code for code in CODES_IN_APPEND_ORDER if code != "delta_quantity_unbound")]
