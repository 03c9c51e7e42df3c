"""ADR-0225's closed taxonomy and label map, checked against the ADR table typed out."""

from __future__ import annotations

import pytest
from spec_adr0225 import (
    ADR_0225_TABLE,
    FAMILY_BY_ORGAN,
    FAMILYLESS_ORGANS,
    MAPPED_LABELS,
)

from store.model.projection import project_assessment
from store.model.records import ContractAssessment, ContractResidual, SourceSpan
from store.model.taxonomy import LABEL_MAP, ResidualKind, ResidualSourceAxis, classify

GAINED = SourceSpan(text="gained", start=4, end=10)


def refused(organ: str, *codes: str) -> ContractAssessment:
    return ContractAssessment(
        candidate_organ=organ,
        missing_bindings=codes,
        runnable=False,
        explanation="diagnostic candidate is not runnable: " + ", ".join(codes),
        evidence_spans=(GAINED,),
    )


def only_residual(organ: str, code: str) -> ContractResidual:
    residuals = project_assessment(refused(organ, code))
    assert len(residuals) == 1
    return residuals[0]


# --- closed taxonomy -------------------------------------------------------------------------

KIND_VALUES = {
    "MISSING_PROPOSAL": "missing_proposal",
    "MISSING_RELATION": "missing_relation",
    "MISSING_ROLE": "missing_role",
    "AMBIGUOUS_RELATION": "ambiguous_relation",
    "AMBIGUOUS_ROLE": "ambiguous_role",
    "INEXACT_PROVENANCE": "inexact_provenance",
    "NONLOCAL_BINDING": "nonlocal_binding",
    "UNSUPPORTED_TOPOLOGY": "unsupported_topology",
    "UNIT_OBJECT_CONFLICT": "unit_object_conflict",
    "HAZARD_BLOCKED": "hazard_blocked",
    "TARGET_UNBOUND": "target_unbound",
    "CONTRACT_GAP_UNCLASSIFIED": "contract_gap_unclassified",
}
AXIS_VALUES = {
    "PROPOSAL": "proposal",
    "RELATION": "relation",
    "ROLE": "role",
    "PROVENANCE": "provenance",
    "LOCALITY": "locality",
    "TOPOLOGY": "topology",
    "HAZARD": "hazard",
    "TARGET": "target",
    "UNIT_OBJECT": "unit_object",
    "UNKNOWN": "unknown",
}


def test_residual_kind_is_exactly_the_twelve_adr_kinds():
    assert {member.name: member.value for member in ResidualKind} == KIND_VALUES
    assert len(ResidualKind) == 12


def test_source_axis_is_exactly_the_ten_adr_axes():
    assert {member.name: member.value for member in ResidualSourceAxis} == AXIS_VALUES
    assert len(ResidualSourceAxis) == 10


@pytest.mark.parametrize("forbidden", ["MATH_FAILED", "REASONING_FAILED", "UNKNOWN_TRUTH"])
def test_broad_kinds_do_not_exist(forbidden):
    with pytest.raises(KeyError):
        ResidualKind[forbidden]
    with pytest.raises(ValueError):
        ResidualKind(forbidden.lower())


def _residual(kind, axis) -> ContractResidual:
    return ContractResidual(
        residual_id="0" * 64,
        candidate_organ="unary_delta_transition",
        family_id="state_change.unary_delta",
        residual_kind=kind,
        residual_code="changed_object_unbound",
        source_axis=axis,
        evidence_spans=(GAINED,),
        explanation="The changed object role is unbound.",
    )


def test_residual_with_enum_members_constructs():
    residual = _residual(ResidualKind.MISSING_ROLE, ResidualSourceAxis.ROLE)
    assert residual.residual_kind.value == "missing_role"
    assert residual.source_axis.value == "role"


@pytest.mark.parametrize(
    "kind", ["math_failed", "MATH_FAILED", "missing_role", "MISSING_ROLE", "", None, 3]
)
def test_residual_kind_outside_the_enum_is_rejected(kind):
    with pytest.raises((ValueError, TypeError)):
        _residual(kind, ResidualSourceAxis.ROLE)


@pytest.mark.parametrize("axis", ["math", "role", "ROLE", "UNKNOWN", None])
def test_source_axis_outside_the_enum_is_rejected(axis):
    with pytest.raises((ValueError, TypeError)):
        _residual(ResidualKind.MISSING_ROLE, axis)


def test_kind_and_axis_cannot_be_swapped():
    with pytest.raises((ValueError, TypeError)):
        _residual(ResidualSourceAxis.ROLE, ResidualKind.MISSING_ROLE)


# --- the label map -------------------------------------------------------------------------


def test_label_map_holds_exactly_the_46_adr_labels():
    assert len(ADR_0225_TABLE) == 50
    assert len(MAPPED_LABELS) == 46
    assert set(LABEL_MAP) == set(MAPPED_LABELS)
    assert len(LABEL_MAP) == 46


@pytest.mark.parametrize(
    ("family", "label", "kind", "axis"),
    ADR_0225_TABLE,
    ids=[f"{family}:{label}" for family, label, _, _ in ADR_0225_TABLE],
)
def test_every_adr_row_maps_to_its_kind_and_axis(family, label, kind, axis):
    got_kind, got_axis = classify(label)
    assert (got_kind.value, got_axis.value) == (kind, axis)
    # ...and a refused assessment of that family's organ projects it that way.
    organ = next(o for o, f in FAMILY_BY_ORGAN.items() if f == family)
    residual = only_residual(organ, label)
    assert residual.residual_kind.value == kind
    assert residual.source_axis.value == axis
    assert residual.residual_code == label
    assert residual.family_id == family
    assert residual.explanation  # every mapped label has a sentence
    assert residual.residual_kind is not ResidualKind.CONTRACT_GAP_UNCLASSIFIED


UNMAPPED = [
    "Quantity_Unbound",
    "QUANTITY_UNBOUND",
    " quantity_unbound",
    "quantity_unbound ",
    "quantity_unbound\n",
    "\tquantity_unbound",
    "quantity-unbound",
    "unbound_base_quantity",
    "math_failed",
    "",
    "quantité_non_liée",
]


@pytest.mark.parametrize("code", UNMAPPED, ids=repr)
def test_unmapped_labels_fall_back_with_the_code_verbatim(code):
    residual = only_residual("unary_delta_transition", code)
    assert residual.residual_kind.value == "contract_gap_unclassified"
    assert residual.source_axis.value == "unknown"
    assert residual.residual_code == code  # verbatim: no case folding, no stripping
    assert code in residual.explanation


def test_fallback_explanations_differ_per_code():
    first = only_residual("temporal_tariff", "tariff_window_unbound")
    second = only_residual("temporal_tariff", "tariff_rate_unbound")
    assert "tariff_window_unbound" in first.explanation
    assert "tariff_rate_unbound" in second.explanation
    assert first.explanation != second.explanation


# --- organ -> family -------------------------------------------------------------------------


@pytest.mark.parametrize(("organ", "family"), sorted(FAMILY_BY_ORGAN.items()))
def test_registered_organs_carry_their_family(organ, family):
    assert only_residual(organ, "changed_object_unbound").family_id == family


@pytest.mark.parametrize(
    "organ",
    [*FAMILYLESS_ORGANS, "made_up_organ", "Unary_Delta_Transition", "unary_delta_transition "],
)
def test_other_organs_have_no_family(organ):
    residual = only_residual(organ, "unbound_base_quantity")
    assert residual.family_id is None
    assert residual.candidate_organ == organ
    assert residual.residual_kind.value == "contract_gap_unclassified"
