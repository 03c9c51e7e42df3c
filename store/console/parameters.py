"""A list page's query parameters: the filter, read through the GraphQL filter input of its
kind (store/api/filter_json.py), so a parameter is named as the filter field and means what
it means in the API; and the page options (order, first, after, before, last, asOf).

A bad parameter is a ParameterError: a 400 page naming it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    get_named_type,
    get_nullable_type,
)
from starlette.datastructures import QueryParams

from store.api.filter_json import FilterInputError, input_from_value, input_type
from store.db.queries import MAX_KEY, MAX_PAGE_SIZE, Order
from store.errors import QueryError

# `facet` names the facet shown in full (every value, a page at a time from `facetAfter`).
PAGE_OPTIONS = ("order", "first", "last", "after", "before", "asOf", "facet", "facetAfter",
                "search")
# `isNull=familyId`: the records whose familyId is null, any-of with familyId's other values
# (GraphQL's `familyId: [null, ...]`): what a facet's "(none)" links to.
IS_NULL = "isNull"
DEFAULT_ROWS = 50
_INTEGER = re.compile(r"-?[0-9]{1,20}")
# An offset typed into a URL unencoded: its '+' arrives as a space (2026-07-30T18:01:00 00:00).
_SPACED_OFFSET = re.compile(r"(?<=\d) (?=\d\d(:?\d\d)?$)")


class ParameterError(QueryError):
    """A query parameter this page cannot take; the message starts with its name."""

    def __init__(self, parameter: str, problem: str) -> None:
        super().__init__(f"{parameter}: {problem}")
        self.parameter = parameter


@dataclass(frozen=True, slots=True)
class PageOptions:
    order: Order = Order.OLDEST_FIRST
    first: int | None = None
    last: int | None = None
    after: str | None = None
    before: str | None = None
    as_of: int | None = None


def _single(params: QueryParams, name: str) -> str | None:
    values = [v for v in params.getlist(name) if v != ""]
    if len(values) > 1:
        raise ParameterError(name, f"give it once, got {len(values)} values")
    return values[0] if values else None


def integer(text: str, name: str, low: int, high: int) -> int:
    if not _INTEGER.fullmatch(text.strip()):
        raise ParameterError(name, f"not an integer: {text[:80]!r}")
    value = int(text)
    if not low <= value <= high:
        raise ParameterError(name, f"must be between {low} and {high}, got {value}")
    return value


def as_of_of(params: QueryParams) -> int | None:
    text = _single(params, "asOf")
    return None if text is None else integer(text, "asOf", 0, MAX_KEY)


def page_options(params: QueryParams, orders: Sequence[Order]) -> PageOptions:
    order_text = _single(params, "order")
    order = Order.OLDEST_FIRST
    if order_text is not None:
        found = Order.__members__.get(order_text)
        if found is None or found not in orders:
            raise ParameterError("order", f"{order_text[:80]!r} is not one of "
                                 f"{', '.join(o.name for o in orders)}")
        order = found
    sizes = {name: (None if (t := _single(params, name)) is None
                    else integer(t, name, 1, MAX_PAGE_SIZE)) for name in ("first", "last")}
    if sizes["first"] is not None and sizes["last"] is not None:
        raise ParameterError("last", "give first or last, not both")
    return PageOptions(order=order, first=sizes["first"], last=sizes["last"],
                       after=_single(params, "after"), before=_single(params, "before"),
                       as_of=as_of_of(params))


def _raw(field_type: Any, values: list[str], name: str) -> Any:
    """The parameter's values as JSON-shaped input for a field of `field_type`."""
    nullable = get_nullable_type(field_type)
    named = get_named_type(field_type)

    def one(text: str) -> Any:
        if isinstance(named, GraphQLScalarType) and named.name == "Int":
            return integer(text, name, -MAX_KEY, MAX_KEY)
        if isinstance(named, GraphQLScalarType) and named.name == "Boolean":
            if text not in ("true", "false"):
                raise ParameterError(name, f"true or false, got {text[:80]!r}")
            return text == "true"
        if isinstance(named, GraphQLScalarType) and named.name == "DateTime":
            return _SPACED_OFFSET.sub("+", text, count=1)
        return text

    if isinstance(nullable, GraphQLList):
        return [one(v) for v in values]
    if len(values) > 1:
        raise ParameterError(name, f"give it once, got {len(values)} values")
    return one(values[0])


def filter_fields(input_class: type[Any]) -> GraphQLInputObjectType:
    return input_type(input_class)


def filter_input(params: QueryParams, input_class: type[Any]) -> Any:
    """The strawberry input the filter parameters make, or None. Every parameter must be a
    page option or a field of the input."""
    graphql_type = filter_fields(input_class)
    fields = graphql_type.fields
    value: dict[str, Any] = {}
    for name in dict.fromkeys(params.keys()):
        if name in PAGE_OPTIONS or name == IS_NULL:
            continue
        values = [v for v in params.getlist(name) if v != ""]
        if name not in fields:
            known = ", ".join([*fields, IS_NULL, *PAGE_OPTIONS])
            raise ParameterError(name[:80], f"not a parameter of this page; it takes {known}")
        if values:
            value[name] = _raw(fields[name].type, values, name)
    for name in dict.fromkeys(v for v in params.getlist(IS_NULL) if v != ""):
        if name not in nullable_fields(graphql_type):
            takes = ", ".join(nullable_fields(graphql_type))
            raise ParameterError(IS_NULL, f"{name[:80]!r} is not a field that can be null; "
                                 f"one of {takes}")
        value[name] = [*value.get(name, []), None]
    for name, field_value in value.items():  # each alone first: the error names its field
        try:
            input_from_value({name: field_value}, input_class)
        except FilterInputError as exc:
            raise ParameterError(name, _problem(str(exc))) from None
    try:
        return input_from_value(value, input_class) if value else None
    except FilterInputError as exc:
        raise ParameterError("filter", str(exc)) from None


def nullable_fields(graphql_type: GraphQLInputObjectType) -> list[str]:
    """The filter fields whose lists take null (their column can be null)."""
    found = []
    for name, field in graphql_type.fields.items():
        listed = get_nullable_type(field.type)
        if isinstance(listed, GraphQLList) and not isinstance(listed.of_type, GraphQLNonNull):
            found.append(name)
    return found


def _problem(message: str) -> str:
    """graphql-core's message without the input type and path that lead it."""
    return message.split(": ", 1)[1] if ": " in message else message


def parameter_value(field_type: Any, stored: object) -> str:
    """A stored value as the filter parameter spells it (enum values by their GraphQL name)."""
    named = get_named_type(field_type)
    if isinstance(named, GraphQLEnumType):
        return str(stored).upper()
    if isinstance(stored, bool):
        return "true" if stored else "false"
    return str(stored)


def query_string(params: Mapping[str, Sequence[str]]) -> str:
    from urllib.parse import urlencode

    pairs = [(name, value) for name, values in params.items() for value in values]
    return ("?" + urlencode(pairs)) if pairs else ""


RANGE_FIELDS = ("batchIdFrom", "batchIdTo", "ingestedFrom", "ingestedTo")


def batch_filter(params: QueryParams, lists: Sequence[str]) -> Any:
    """The batch list's filter: `lists` (any-of strings) and the batch range every GraphQL
    filter takes, read as those fields read (the API has no batch filter input of its own)."""
    from store.db.queries import parse_ingest_time
    from store.db.queries.browsing import BatchFilter

    values: dict[str, Any] = {}
    for name in dict.fromkeys(params.keys()):
        if name in PAGE_OPTIONS:
            continue
        if name not in (*lists, *RANGE_FIELDS):
            known = ", ".join([*lists, *RANGE_FIELDS, *PAGE_OPTIONS])
            raise ParameterError(name[:80], f"not a parameter of this page; it takes {known}")
        given = [v for v in params.getlist(name) if v != ""]
        if not given:
            continue
        if name in lists:
            values[name] = given
            continue
        if len(given) > 1:
            raise ParameterError(name, f"give it once, got {len(given)} values")
        if name.startswith("batchId"):
            values[name] = integer(given[0], name, 0, MAX_KEY)
        else:
            values[name] = parse_ingest_time(given[0].replace(" ", "+"), name)
    if not values:
        return None
    return BatchFilter(record_type=values.get("recordType"), source=values.get("source"),
                       batch_id_from=values.get("batchIdFrom"),
                       batch_id_to=values.get("batchIdTo"),
                       ingested_from=values.get("ingestedFrom"),
                       ingested_to=values.get("ingestedTo"))
