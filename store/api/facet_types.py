"""`facet(field, first, after)` on every facets type: one facet's values a page at a time,
for every filter field with a facet (`RecordListing.facet_fields`), its null value included.

What a page gives pastes into the filter field it names: an enum's values by their GraphQL
names, other values as CORE writes them, and null as null (a filter field whose column can be
null takes null in its list, selecting the records without a value).
"""

from __future__ import annotations

import enum
import functools
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import strawberry
from strawberry.types import Info

from store.api.context import RequestContext
from store.api.record_views import RecordView
from store.db import queries


@strawberry.type(description="Records (residuals, surfaces or turns) sharing one value, and "
                             "sightings.")
class FacetCount(RecordView):
    value: str | None = strawberry.field(
        description="What a filter takes for it: an enum's GraphQL name for a facet of an "
        "enum (MISSING_ROLE, TEACHING, VERIFIED), else the value as CORE writes it "
        "(unary_delta_transition, decoded); null for a null column (family_id, corpus_id, "
        "intent)."
    )
    count: int = strawberry.field(description="Distinct records.")
    occurrences: int = strawberry.field(description="Sightings of those records.")

    @classmethod
    def named(cls, facet: queries.FacetCount) -> FacetCount:
        """A facet of an enum's values, by their GraphQL names (the stored value upper-cased,
        as every enum of this schema names its members): pasted into a filter, it selects."""
        return cls(value=None if facet.value is None else facet.value.upper(),
                   count=facet.count, occurrences=facet.occurrences)


def enum_facets(*names: str) -> Mapping[str, Callable[[Any], Any]]:
    """`_computed` for a facets view: the lists `names` (facets of enums) by GraphQL name,
    and its `facet_reader`, set once the view is built (what its `facet` pages read over)."""
    return {"facet_reader": lambda record: (None, None), **{
        name: (lambda record, name=name: [  # type: ignore[misc]
            FacetCount.named(facet) for facet in getattr(record, name)]) for name in names}}


@strawberry.type(description="Some values of one facet, by count desc then value (null last), "
                             "past `after`: pass endCursor as `after` for the next.")
class FacetPage:
    field: str = strawberry.field(description="The filter field its values select, e.g. "
                                              "chainId.")
    values: list[FacetCount]
    value_count: int = strawberry.field(description="The facet's distinct values in all, "
                                                    "null included.")
    has_more: bool = strawberry.field(description="More values follow this page.")
    end_cursor: str | None = strawberry.field(description="Past the last value shown, when "
                                                          "more follow.")


def graphql_name(python_name: str) -> str:
    head, *rest = python_name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def enum_fields(filter_type: type[Any]) -> frozenset[str]:
    """The filter fields whose values are an enum's (named in GraphQL by the stored value
    upper-cased)."""
    found = set()
    for name, hint in typing.get_type_hints(filter_type).items():
        for item in _items(hint):
            if isinstance(item, type) and issubclass(item, enum.Enum):
                found.add(name)
    return frozenset(found)


def _items(hint: Any) -> Sequence[Any]:
    args = typing.get_args(hint)
    if not args:
        return (hint,)
    return [inner for arg in args for inner in _items(arg)]


@functools.cache
def facet_field_enum(listing_name: str) -> Any:
    """`<ApiType>FacetField`: a listing's facets, named as their filter fields (CHAIN_ID)."""
    listing = queries.LISTINGS[listing_name]
    members = enum.Enum(f"{listing.api_type}FacetField",  # type: ignore[misc]
                        {name.upper(): name for name in listing.facet_fields})
    return strawberry.enum(members, description=(
        f"The facets of {listing.name}, each named as the filter field its values select."))


def facet_page_field(listing_name: str) -> Any:
    """The `facet` field of a listing's facets view: reads over the filter and asOf the
    view was read with (its `facet_reader`)."""
    listing = queries.LISTINGS[listing_name]
    assert listing.filter_type is not None
    enums = enum_fields(listing.filter_type)
    field_enum = facet_field_enum(listing_name)

    async def facet(self: Any, info: Info[RequestContext, None], field: Any,
                    first: int | None = None, after: str | None = None) -> FacetPage:
        where, as_of = self.facet_reader
        name = str(field.value)
        page = await info.context.run(listing.facet_page, name, where, first, after, as_of)
        named = FacetCount.named if name in enums else FacetCount.of
        return FacetPage(field=graphql_name(name), values=[named(v) for v in page.values],
                         value_count=page.value_count, has_more=page.has_more,
                         end_cursor=page.end_cursor)

    facet.__annotations__["field"] = field_enum
    return strawberry.field(facet, description=(
        f"One facet's values a page at a time (first: default {queries.DEFAULT_PAGE_SIZE}, at "
        f"most {queries.MAX_PAGE_SIZE}), over the same filter and asOf: every filter field "
        "with a facet, those not listed above included."))
