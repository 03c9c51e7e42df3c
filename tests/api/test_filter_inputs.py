"""A GraphQL filter input and its query filter have the same fields, checked at import."""

from __future__ import annotations

import dataclasses

import pytest
import strawberry

from store.api.filter_types import FILTER_INPUTS, check_filter_inputs


def test_every_filter_input_matches_its_query_filter() -> None:
    check_filter_inputs()
    assert [(api.__name__, query.__name__) for api, query in FILTER_INPUTS] == [
        ("ResidualFilter", "ResidualFilter"), ("AssessmentFilter", "AssessmentFilter"),
        ("SurfaceFilter", "SurfaceFilter"), ("TurnFilter", "TurnFilter")]


def test_a_field_on_one_side_only_is_named() -> None:
    @strawberry.input
    class Drifted:
        organ: list[str] | None = None
        colour: list[str] | None = None

    @dataclasses.dataclass
    class Query:
        organ: list[str] | None = None
        family_id: list[str] | None = None

    with pytest.raises(TypeError, match=r"Drifted: only in the GraphQL input \['colour'\], "
                                        r"only in the query filter \['family_id'\]"):
        check_filter_inputs(((Drifted, Query),))



def test_a_filter_is_built_from_its_graphql_value_as_strawberry_builds_it() -> None:
    """Each filter input is built in one call (filter_types._convert_as_leaves), as the query
    filter strawberry's field by field conversion would give: lists, enums, ids, numbers."""
    from strawberry.types.arguments import convert_argument

    from store.api.schema import build_schema
    from store.db.queries import ResidualFilter, TurnFilter
    from store.model.taxonomy import ResidualKind, ResidualSourceAxis
    from store.model.teaching_surface import GroundingSource

    schema = build_schema()
    inputs = {query: api for api, query in FILTER_INPUTS}
    assert all(api.__strawberry_definition__.from_input is not None for api in inputs.values())
    value = {"kind": [ResidualKind.MISSING_ROLE, ResidualKind.HAZARD_BLOCKED],
             "axis": [ResidualSourceAxis.ROLE], "organ": ["unary_delta_transition"],
             "residualId": ["ab" * 32], "familyId": None, "code": None,
             "batchIdFrom": 2, "batchIdTo": None, "ingestedFrom": None, "ingestedTo": None}
    made = convert_argument(value, inputs[ResidualFilter],
                            schema.schema_converter.scalar_registry, schema.config)
    assert made.to_query() == ResidualFilter(  # type: ignore[attr-defined]
        kind=[ResidualKind.MISSING_ROLE, ResidualKind.HAZARD_BLOCKED],
        axis=[ResidualSourceAxis.ROLE], organ=["unary_delta_transition"],
        residual_id=["ab" * 32], batch_id_from=2)
    assert made.kind is not value["kind"]  # type: ignore[attr-defined]  # graphql-core shares defaults
    made = convert_argument({"groundingSource": [GroundingSource.TEACHING]},
                            inputs[TurnFilter], schema.schema_converter.scalar_registry,
                            schema.config)
    assert made.to_query() == TurnFilter(  # type: ignore[attr-defined]
        grounding_source=[GroundingSource.TEACHING])
