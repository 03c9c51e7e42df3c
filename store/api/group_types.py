"""`<one>Groups(by, filter, first, asOf)`: the GraphQL side of `queries.groups` — a dimension
enum per listing that groups, and the groups' view."""

from __future__ import annotations

import enum
import functools
from typing import Any

import strawberry

from store.db.queries import groups as group_queries


@strawberry.type(description="One combination of the dimensions asked for, with its counts.")
class GroupCount:
    values: list[str | None] = strawberry.field(
        description="One value per dimension of `by`, in its order, as facets give them "
                    "(null: the record has none); a time bucket as sortable text: "
                    "2026-12-06T07 (hour), 2026-12-06 (day), the Monday of an ISO week "
                    "(week), 2026-12 (month), UTC.")
    count: int = strawberry.field(description="Records in the group.")
    occurrences: int = strawberry.field(description="Their sightings.")


@strawberry.type(description="Counts per combination of up to three dimensions, largest "
                             "first (count, then sightings, then values), the first `first`.")
class Groups:
    by: list[str] = strawberry.field(description="The dimensions, as asked.")
    total: int = strawberry.field(description="Records over every group, shown or not.")
    occurrences: int = strawberry.field(description="Their sightings.")
    group_count: int = strawberry.field(description="Groups in all, shown or not.")
    has_more: bool = strawberry.field(description="More groups than shown: ask a larger "
                                                  "`first` or a narrower filter.")
    groups: list[GroupCount]

    @classmethod
    def of(cls, found: group_queries.Groups) -> Groups:
        return cls(by=list(found.by), total=found.total, occurrences=found.occurrences,
                   group_count=found.group_count, has_more=found.has_more,
                   groups=[GroupCount(values=list(g.values), count=g.count,
                                      occurrences=g.occurrences) for g in found.groups])


@functools.cache
def dimension_enum(api_type: str, grouping: group_queries.Grouping) -> Any:
    """`<ApiType>Dimension`: the grouping's dimensions as a GraphQL enum."""
    members = enum.Enum(f"{api_type}Dimension",  # type: ignore[misc]
                        {d.name: strawberry.enum_value(d.name, description=d.help)
                         for d in grouping.dimensions})
    return strawberry.enum(members, description=f"What {api_type} groups count by.")
