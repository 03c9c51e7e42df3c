"""Expected values typed out from the specification, never read from `store`.

- ADR_0225_TABLE: the ADR's "Mapping from Existing Labels" table, row by row
  (family heading, label, kind value, axis value), with enum values in the lower
  snake case CORE serializes (core-facts: "Enum values are lower snake case").
- spec_residual_id: docs/design.md's identity recipe (canonical JSON + sha256),
  written out here so the tests do not check the code against itself.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

QE = "binding.quantity_entity"
FD = "proportional_change.decrease_to_fraction"
PP = "partition.percent_partition"
UD = "state_change.unary_delta"

# (family heading in the ADR table, label, residual_kind value, source_axis value): 50 rows.
ADR_0225_TABLE: tuple[tuple[str, str, str, str], ...] = (
    # Quantity Entity (binding.quantity_entity)
    (QE, "quantity_entity_proposal_required", "missing_proposal", "proposal"),
    (QE, "quantity_unbound", "missing_role", "role"),
    (QE, "entity_unbound", "missing_role", "role"),
    (QE, "quantity_ambiguous", "ambiguous_role", "role"),
    (QE, "entity_ambiguous", "ambiguous_role", "role"),
    (QE, "local_binding_relation_unbound", "missing_relation", "relation"),
    (QE, "local_binding_relation_ambiguous", "ambiguous_relation", "relation"),
    (QE, "quantity_kind_unresolved", "missing_role", "role"),
    (QE, "unit_kind_conflict", "unit_object_conflict", "unit_object"),
    (QE, "provenance_span_inexact", "inexact_provenance", "provenance"),
    (QE, "quantity_entity_nonlocal", "nonlocal_binding", "locality"),
    (QE, "competing_family_context", "hazard_blocked", "hazard"),
    (QE, "percent_change_vs_percent_of", "hazard_blocked", "hazard"),
    # Fraction Decrease (proportional_change.decrease_to_fraction)
    (FD, "decrease_relation_ambiguous", "ambiguous_relation", "relation"),
    (FD, "base_quantity_unbound", "missing_role", "role"),
    (FD, "scale_unbound", "missing_role", "role"),
    (FD, "state_entity_unbound", "missing_role", "role"),
    (FD, "base_quantity_provenance_missing", "inexact_provenance", "provenance"),
    (FD, "scale_provenance_missing", "inexact_provenance", "provenance"),
    (FD, "unit_continuity_unproven", "unit_object_conflict", "unit_object"),
    (FD, "delta_decrease_target_unbound", "target_unbound", "target"),
    (FD, "delta_decrease_target_required", "target_unbound", "target"),
    (FD, "state_entity_continuity_unproven", "hazard_blocked", "hazard"),
    (FD, "scale_out_of_range", "hazard_blocked", "hazard"),
    # Percent Partition (partition.percent_partition)
    (PP, "grounded_partition_subgroup", "missing_role", "role"),
    (PP, "grounded_whole_entity", "missing_role", "role"),
    (PP, "original_whole_unbound", "missing_role", "role"),
    (PP, "multiple_original_whole_candidates", "ambiguous_role", "role"),
    (PP, "partition_subgroups_not_distinct", "hazard_blocked", "hazard"),
    (PP, "percent_subgroup_links_incomplete", "unsupported_topology", "topology"),
    (PP, "grounded_question_target", "target_unbound", "target"),
    (PP, "forward_aggregate_target_required", "target_unbound", "target"),
    (PP, "inverse_topology_unlicensed", "unsupported_topology", "topology"),
    # Unary Delta (state_change.unary_delta)
    (UD, "unary_delta_proposal_required", "missing_proposal", "proposal"),
    (UD, "unary_delta_relation_ambiguous", "ambiguous_relation", "relation"),
    (UD, "action_cue_unbound", "missing_role", "role"),
    (UD, "delta_quantity_unbound", "missing_role", "role"),
    (UD, "delta_quantity_ambiguous", "ambiguous_role", "role"),
    (UD, "changed_object_unbound", "missing_role", "role"),
    (UD, "changed_object_ambiguous", "ambiguous_role", "role"),
    (UD, "local_binding_relation_unbound", "missing_relation", "relation"),
    (UD, "direction_unbound", "missing_role", "role"),
    (UD, "quantity_kind_unresolved", "missing_role", "role"),
    (UD, "unit_object_conflict", "unit_object_conflict", "unit_object"),
    (UD, "provenance_span_inexact", "inexact_provenance", "provenance"),
    (UD, "quantity_entity_nonlocal", "nonlocal_binding", "locality"),
    (UD, "pronoun_antecedent_unresolved", "nonlocal_binding", "locality"),
    (UD, "event_assertion_unlicensed", "unsupported_topology", "topology"),
    (UD, "passive_voice_unsupported", "unsupported_topology", "topology"),
    (UD, "multiple_actor_surface", "unsupported_topology", "topology"),
)

# The 46 distinct labels of the table (four appear under two families).
MAPPED_LABELS: tuple[str, ...] = tuple(dict.fromkeys(row[1] for row in ADR_0225_TABLE))

# core-facts "Families and organs".
FAMILY_BY_ORGAN: dict[str, str] = {
    "quantity_entity_binding": "binding.quantity_entity",
    "fraction_decrease": "proportional_change.decrease_to_fraction",
    "percent_partition": "partition.percent_partition",
    "unary_delta_transition": "state_change.unary_delta",
}
FAMILYLESS_ORGANS: tuple[str, ...] = ("nested_fraction_remainder_total", "temporal_tariff")


def spec_canonical(obj: Any) -> bytes:
    """docs/design.md: json.dumps(ensure_ascii=False, separators=(",", ":"), sort_keys=True),
    UTF-8."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode(
        "utf-8"
    )


def spec_residual_id(organ: str, kind: str, code: str, spans: list[dict[str, Any]]) -> str:
    """docs/design.md's residual_id: sha256 over organ, kind value, code and the ordered spans."""
    payload = {
        "candidate_organ": organ,
        "residual_kind": kind,
        "residual_code": code,
        "evidence_spans": [
            {
                "text": s["text"],
                "start": s["start"],
                "end": s["end"],
                "sentence_index": s.get("sentence_index"),
            }
            for s in spans
        ],
    }
    return hashlib.sha256(spec_canonical(payload)).hexdigest()
