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
