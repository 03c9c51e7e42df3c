"""GraphQL filter inputs: any-of lists per field, and the batch ranges every filter takes.

Each input is generated from the query layer's filter of the same name (the one each listing
takes), with its fields, and becomes that filter.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar

import strawberry
from strawberry.types.arguments import InputContext
from strawberry.types.base import StrawberryList, StrawberryOptional
from strawberry.types.enum import StrawberryEnumDefinition, has_enum_definition

import store.api.surface_types
import store.api.turn_types
import store.api.types  # noqa: F401  the domain enums, registered with strawberry
from store.db import queries
from store.db.queries.filters import RecordId, filter_order

ANY_OF = "Any-of lists, ANDed across fields; null or [] = no constraint."
RANGES = ("Batch and ingest-time ranges are inclusive at both ends and bound the batch that "
          "first stored a record.")


def _fields_of(filter_input: Any) -> dict[str, Any]:
    """A filter input's fields by name: the query layer's filter has the same ones."""
    return {f.name: getattr(filter_input, f.name) for f in dataclasses.fields(filter_input)}


@strawberry.input(description="Inclusive bounds on the batch that stored a record.")
class BatchRange:
    batch_id_from: int | None = strawberry.field(
        default=None, description="Stored by this batch or a later one.")
    batch_id_to: int | None = strawberry.field(
        default=None, description="Stored by this batch or an earlier one.")
    ingested_from: datetime | None = strawberry.field(
        default=None, description="Stored by a batch ingested at or after this ISO 8601 "
        "time (UTC if it has no offset), e.g. 2026-05-01T00:00:00Z.")
    ingested_to: datetime | None = strawberry.field(
        default=None, description="Stored by a batch ingested at or before this time.")

    _query_filter: ClassVar[type[Any]]  # the query filter a generated input becomes

    def to_query(self) -> Any:
        return self._query_filter(**_fields_of(self))


def _input_type(query_type: Any) -> Any:
    """A query filter field's type as GraphQL takes it: a Sequence of values as a list."""
    if typing.get_origin(query_type) in (types.UnionType, typing.Union):
        return functools.reduce(operator.or_, map(_input_type, typing.get_args(query_type)))
    if typing.get_origin(query_type) is Sequence:
        (item,) = typing.get_args(query_type)
        return list[_input_type(item)]  # type: ignore[misc]
    return strawberry.ID if query_type is RecordId else query_type


def _id_field(query_field: dataclasses.Field[Any]) -> Any:
    return strawberry.field(default=None, description=(
        f"Any of these ids; at most {queries.MAX_IDS} (a page's worth), else LIMIT_EXCEEDED."))


@functools.cache
def filter_input(query_filter: type[Any], notes: str = "") -> type[Any]:
    """The GraphQL input of a query filter: a BatchRange with the filter's other fields, each
    an optional list (or flag) of the same values; `to_query` builds the query filter."""
    hints = typing.get_type_hints(query_filter)
    own = [f for f in dataclasses.fields(query_filter) if f.name not in _BATCH_RANGE_FIELDS]
    namespace = {
        # An id list (the query filter's `ids` fields) is `[ID!]`, as records' ids are.
        "__annotations__": {f.name: list[strawberry.ID] | None if f.metadata.get("ids")
                            else _input_type(hints[f.name]) for f in own},
        "__module__": __name__,
        "_query_filter": query_filter,
        **{f.name: _id_field(f) if f.metadata.get("ids") else None for f in own},
    }
    description = " ".join(part for part in (ANY_OF, RANGES, notes) if part)
    made: type[Any] = strawberry.input(type(query_filter.__name__, (BatchRange,), namespace),
                                       description=description)
    _convert_as_leaves(made)
    return made


def _convert_as_leaves(input_type: type[Any]) -> None:
    """Build the input from its GraphQL value in one call when every field is a leaf (a
    built-in scalar, an ID, a datetime, an enum) or a list of leaves, as a filter's are:
    strawberry's own conversion returns each such value as it is (a list copied), but spends
    ~15 µs a field working out its type again on every request. A field of any other type
    leaves strawberry's conversion in place."""
    definition = input_type.__strawberry_definition__
    for field in definition.fields:
        field_type = field.type
        while isinstance(field_type, StrawberryOptional | StrawberryList):
            field_type = field_type.of_type
        if not (field_type in _LEAVES or has_enum_definition(field_type)
                or isinstance(field_type, StrawberryEnumDefinition)):
            return
    fields = tuple(definition.fields)
    named: dict[int, tuple[tuple[str, str], ...]] = {}  # id(config) -> (GraphQL, Python) names

    def from_input(cls: type[Any], value: Mapping[str, Any], context: InputContext) -> Any:
        names = named.get(id(context.config))
        if names is None:
            convert = context.config.name_converter.from_field
            names = named.setdefault(id(context.config), tuple(
                (convert(field), field.python_name) for field in fields))
        return cls(**{python: list(given) if isinstance(given := value[graphql], list)
                      else given for graphql, python in names if graphql in value})

    definition.from_input = from_input


_LEAVES = (str, int, bool, float, datetime, strawberry.ID)


_BATCH_RANGE_FIELDS = {f.name for f in dataclasses.fields(queries.BatchRange)}


def _inputs(listings: Iterable[queries.RecordListing[Any, Any]]
            ) -> dict[type[Any], type[Any]]:
    notes: dict[type[Any], str] = {}
    for listing in listings:
        if listing.filter_type is not None:
            notes.setdefault(listing.filter_type, listing.filter_help)
    return {query_filter: filter_input(query_filter, notes[query_filter])  # type: ignore[arg-type]
            for query_filter in sorted(notes, key=filter_order)}


# The GraphQL input of each query filter a listing takes.
INPUTS: dict[type[Any], type[Any]] = _inputs(queries.LISTINGS.values())

FILTER_INPUTS: tuple[tuple[type[Any], type[Any]], ...] = tuple(
    (api_input, query_filter) for query_filter, api_input in INPUTS.items())


def check_filter_inputs(pairs: tuple[tuple[type[Any], type[Any]], ...] = FILTER_INPUTS) -> None:
    """Each input has exactly its query filter's fields (`to_query` passes them by name):
    a field added on one side only fails here, when the module loads."""
    problems = []
    for api_input, query_filter in pairs:
        given = {f.name for f in dataclasses.fields(api_input)}
        taken = {f.name for f in dataclasses.fields(query_filter)}
        if given != taken:
            problems.append(f"{api_input.__name__}: only in the GraphQL input "
                            f"{sorted(given - taken)}, only in the query filter "
                            f"{sorted(taken - given)}")
    if problems:
        raise TypeError("; ".join(problems))


check_filter_inputs()
