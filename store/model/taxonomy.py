"""ADR-0225's closed taxonomy, its label map, the family registry and explanations."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final


class ResidualKind(StrEnum):
    MISSING_PROPOSAL = "missing_proposal"
    MISSING_RELATION = "missing_relation"
    MISSING_ROLE = "missing_role"
    AMBIGUOUS_RELATION = "ambiguous_relation"
    AMBIGUOUS_ROLE = "ambiguous_role"
    INEXACT_PROVENANCE = "inexact_provenance"
    NONLOCAL_BINDING = "nonlocal_binding"
    UNSUPPORTED_TOPOLOGY = "unsupported_topology"
    UNIT_OBJECT_CONFLICT = "unit_object_conflict"
    HAZARD_BLOCKED = "hazard_blocked"
    TARGET_UNBOUND = "target_unbound"
    CONTRACT_GAP_UNCLASSIFIED = "contract_gap_unclassified"


class ResidualSourceAxis(StrEnum):
    PROPOSAL = "proposal"
    RELATION = "relation"
    ROLE = "role"
    PROVENANCE = "provenance"
    LOCALITY = "locality"
    TOPOLOGY = "topology"
    HAZARD = "hazard"
    TARGET = "target"
    UNIT_OBJECT = "unit_object"
    UNKNOWN = "unknown"


K = ResidualKind
A = ResidualSourceAxis

# label -> (kind, axis, explanation). The map is global; labels the ADR lists
# under two families map identically there, so each appears once here.
_LABELS: Final[dict[str, tuple[ResidualKind, ResidualSourceAxis, str]]] = {
    # binding.quantity_entity
    "quantity_entity_proposal_required": (
        K.MISSING_PROPOSAL, A.PROPOSAL, "The quantity-entity proposal is missing."),
    "quantity_unbound": (K.MISSING_ROLE, A.ROLE, "The quantity role is unbound."),
    "entity_unbound": (K.MISSING_ROLE, A.ROLE, "The entity role is unbound."),
    "quantity_ambiguous": (
        K.AMBIGUOUS_ROLE, A.ROLE, "The quantity role binds to multiple candidate quantities."),
    "entity_ambiguous": (
        K.AMBIGUOUS_ROLE, A.ROLE, "The entity role binds to multiple candidate entities."),
    "local_binding_relation_unbound": (
        K.MISSING_RELATION, A.RELATION, "The local binding relation is missing."),
    "local_binding_relation_ambiguous": (
        K.AMBIGUOUS_RELATION, A.RELATION, "Multiple local binding relations compete."),
    "quantity_kind_unresolved": (
        K.MISSING_ROLE, A.ROLE, "The quantity kind disposition is unresolved."),
    "unit_kind_conflict": (
        K.UNIT_OBJECT_CONFLICT, A.UNIT_OBJECT, "The quantity unit kind conflicts with the entity."),
    "provenance_span_inexact": (
        K.INEXACT_PROVENANCE, A.PROVENANCE,
        "The provenance spans do not match the source exactly."),
    "quantity_entity_nonlocal": (
        K.NONLOCAL_BINDING, A.LOCALITY, "The binding spans are not local."),
    "competing_family_context": (
        K.HAZARD_BLOCKED, A.HAZARD, "A competing family context blocks the contract."),
    "percent_change_vs_percent_of": (
        K.HAZARD_BLOCKED, A.HAZARD,
        "Percent change and percent of are confusable; the hazard blocks the contract."),
    # proportional_change.decrease_to_fraction
    "decrease_relation_ambiguous": (
        K.AMBIGUOUS_RELATION, A.RELATION, "The decrease relation is ambiguous."),
    "base_quantity_unbound": (K.MISSING_ROLE, A.ROLE, "The base quantity role is unbound."),
    "scale_unbound": (K.MISSING_ROLE, A.ROLE, "The scale fraction role is unbound."),
    "state_entity_unbound": (K.MISSING_ROLE, A.ROLE, "The state entity role is unbound."),
    "base_quantity_provenance_missing": (
        K.INEXACT_PROVENANCE, A.PROVENANCE, "The base quantity lacks source provenance."),
    "scale_provenance_missing": (
        K.INEXACT_PROVENANCE, A.PROVENANCE, "The scale lacks source provenance."),
    "unit_continuity_unproven": (
        K.UNIT_OBJECT_CONFLICT, A.UNIT_OBJECT, "Unit continuity is not proven."),
    "delta_decrease_target_unbound": (
        K.TARGET_UNBOUND, A.TARGET, "The decrease target is unbound."),
    "delta_decrease_target_required": (
        K.TARGET_UNBOUND, A.TARGET, "The required decrease target is missing."),
    "state_entity_continuity_unproven": (
        K.HAZARD_BLOCKED, A.HAZARD, "State entity continuity is not proven."),
    "scale_out_of_range": (
        K.HAZARD_BLOCKED, A.HAZARD, "The scale value lies outside the (0, 1) bounds."),
    # partition.percent_partition
    "grounded_partition_subgroup": (
        K.MISSING_ROLE, A.ROLE, "The partition subgroup roles are not grounded."),
    "grounded_whole_entity": (K.MISSING_ROLE, A.ROLE, "The whole entity role is not grounded."),
    "original_whole_unbound": (K.MISSING_ROLE, A.ROLE, "The original whole is unbound."),
    "multiple_original_whole_candidates": (
        K.AMBIGUOUS_ROLE, A.ROLE, "Multiple candidates compete for the original whole."),
    "partition_subgroups_not_distinct": (
        K.HAZARD_BLOCKED, A.HAZARD, "The partition subgroups are not distinct."),
    "percent_subgroup_links_incomplete": (
        K.UNSUPPORTED_TOPOLOGY, A.TOPOLOGY, "The percent subgroup links are incomplete."),
    "grounded_question_target": (
        K.TARGET_UNBOUND, A.TARGET, "The question target is not grounded."),
    "forward_aggregate_target_required": (
        K.TARGET_UNBOUND, A.TARGET, "The partition requires an aggregate target."),
    "inverse_topology_unlicensed": (
        K.UNSUPPORTED_TOPOLOGY, A.TOPOLOGY, "Inverse query topology is unsupported."),
    # state_change.unary_delta
    "unary_delta_proposal_required": (
        K.MISSING_PROPOSAL, A.PROPOSAL, "The unary delta proposal is missing."),
    "unary_delta_relation_ambiguous": (
        K.AMBIGUOUS_RELATION, A.RELATION, "The unary delta relation is ambiguous."),
    "action_cue_unbound": (K.MISSING_ROLE, A.ROLE, "The action cue role is unbound."),
    "delta_quantity_unbound": (K.MISSING_ROLE, A.ROLE, "The delta quantity role is unbound."),
    "delta_quantity_ambiguous": (
        K.AMBIGUOUS_ROLE, A.ROLE, "The delta quantity role binds to multiple candidates."),
    "changed_object_unbound": (K.MISSING_ROLE, A.ROLE, "The changed object role is unbound."),
    "changed_object_ambiguous": (
        K.AMBIGUOUS_ROLE, A.ROLE, "The changed object role binds to multiple candidates."),
    "direction_unbound": (K.MISSING_ROLE, A.ROLE, "The direction role is unbound."),
    "unit_object_conflict": (
        K.UNIT_OBJECT_CONFLICT, A.UNIT_OBJECT, "Quantity unit conflicts with object type."),
    "pronoun_antecedent_unresolved": (
        K.NONLOCAL_BINDING, A.LOCALITY, "The pronoun antecedent is unresolved."),
    "event_assertion_unlicensed": (
        K.UNSUPPORTED_TOPOLOGY, A.TOPOLOGY, "The event assertion topology is unlicensed."),
    "passive_voice_unsupported": (
        K.UNSUPPORTED_TOPOLOGY, A.TOPOLOGY, "Passive voice topology is unsupported."),
    "multiple_actor_surface": (
        K.UNSUPPORTED_TOPOLOGY, A.TOPOLOGY, "Multiple coordinate actors are unsupported."),
}

del K, A

LABEL_MAP: Final = MappingProxyType(
    {label: (kind, axis) for label, (kind, axis, _) in _LABELS.items()}
)
EXPLANATIONS: Final = MappingProxyType(
    {label: sentence for label, (_, _, sentence) in _LABELS.items()}
)

FALLBACK: Final = (ResidualKind.CONTRACT_GAP_UNCLASSIFIED, ResidualSourceAxis.UNKNOWN)

FAMILY_BY_ORGAN: Final = MappingProxyType(
    {
        "quantity_entity_binding": "binding.quantity_entity",
        "fraction_decrease": "proportional_change.decrease_to_fraction",
        "percent_partition": "partition.percent_partition",
        "unary_delta_transition": "state_change.unary_delta",
    }
)
# Organs CORE emits that belong to no registered family (family_id is null).
FAMILYLESS_ORGANS: Final = frozenset({"nested_fraction_remainder_total", "temporal_tariff"})


def classify(label: str) -> tuple[ResidualKind, ResidualSourceAxis]:
    """Exact lookup: no case folding, no stripping; anything else is the fallback."""
    return LABEL_MAP.get(label, FALLBACK)


def explain(label: str) -> str:
    sentence = EXPLANATIONS.get(label)
    if sentence is not None:
        return sentence
    return f'The contract label "{label}" has no residual classification.'


def family_of(organ: str) -> str | None:
    return FAMILY_BY_ORGAN.get(organ)


@dataclass(frozen=True, slots=True)
class TaxonomyLabel:
    label: str
    kind: ResidualKind
    axis: ResidualSourceAxis


@dataclass(frozen=True, slots=True)
class Taxonomy:
    kinds: list[ResidualKind]
    axes: list[ResidualSourceAxis]
    labels: list[TaxonomyLabel]
    families_by_organ: list[tuple[str, str]]


def taxonomy() -> Taxonomy:
    """The closed taxonomy and label map; domain constants, no database needed."""
    return Taxonomy(
        kinds=list(ResidualKind),
        axes=list(ResidualSourceAxis),
        labels=[TaxonomyLabel(label, kind, axis) for label, (kind, axis) in LABEL_MAP.items()],
        families_by_organ=list(FAMILY_BY_ORGAN.items()),
    )
