"""A filter given as JSON (`core-audit export --filter`), read exactly as the API reads one.

The JSON is coerced against the GraphQL input type as graphql-core coerces a variable of
that type, converted by strawberry into the input class as it converts arguments, and mapped
by the input's own `to_query`: the CLI and the API cannot disagree on a field, an enum value
or a type.
"""

from __future__ import annotations

import functools
from typing import Any

import orjson
import strawberry
from graphql import (
    GraphQLEnumType,
    GraphQLError,
    GraphQLInputObjectType,
    Undefined,
    coerce_input_value,
    get_named_type,
)
from graphql.utilities import validate_input_value
from strawberry.types.arguments import convert_argument

from store.api.filter_types import INPUTS
from store.api.schema import build_schema
from store.db.queries.exports import ExportFilter
from store.errors import InputError


class FilterInputError(InputError):
    """The JSON is not a value of the filter's input type; the message names the field."""


@functools.cache
def _schema() -> strawberry.Schema:
    return build_schema()


def filter_from_json(text: str, filter_type: type[ExportFilter]) -> ExportFilter | None:
    """`text` (a JSON object with the GraphQL input's field names, e.g. `{"kind":
    ["MISSING_ROLE"]}`) as a `filter_type`; None for `null`. FilterInputError otherwise."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise FilterInputError(f"not JSON: {exc}") from None
    converted = input_from_value(value, INPUTS[filter_type])  # its `to_query` builds one
    if converted is None:
        return None
    where: ExportFilter = converted.to_query()
    return where


def input_type(input_class: type[Any]) -> GraphQLInputObjectType:
    """The GraphQL input type of a strawberry input class (its fields by GraphQL name)."""
    name = input_class.__strawberry_definition__.name
    graphql_type = _schema()._schema.get_type(name)
    assert isinstance(graphql_type, GraphQLInputObjectType), name
    return graphql_type


def input_from_value(value: object, input_class: type[Any]) -> Any:
    """`value` (JSON-shaped, GraphQL field names) as an instance of the strawberry input
    class, coerced as graphql-core coerces a variable; None for None. FilterInputError
    naming the field otherwise."""
    schema = _schema()
    graphql_type = input_type(input_class)
    value = core_spellings_named(value, graphql_type)
    coerced = coerce_input_value(value, graphql_type)
    if coerced is Undefined:
        raise FilterInputError("; ".join(_problems(value, graphql_type)))
    if coerced is None:
        return None
    return convert_argument(coerced, input_class, schema.schema_converter.scalar_registry,
                            schema.config)


def core_spellings_named(value: object, graphql_type: GraphQLInputObjectType) -> object:
    """`value` with each enum value spelled as CORE writes it (`missing_role`, as `export`
    writes it) given its GraphQL name (`MISSING_ROLE`): the CLI's and the console's filters
    take either spelling. Anything else is left for coercion to judge."""
    if not isinstance(value, dict):
        return value
    named: dict[str, object] = {}
    for name, given in value.items():
        field = graphql_type.fields.get(name)
        enum = get_named_type(field.type) if field is not None else None
        if isinstance(enum, GraphQLEnumType) and isinstance(given, list):
            given = [_enum_name(item, enum) for item in given]
        elif isinstance(enum, GraphQLEnumType):
            given = _enum_name(given, enum)
        named[name] = given
    return named


def _enum_name(item: object, enum: GraphQLEnumType) -> object:
    if isinstance(item, str) and item == item.lower() and item.upper() in enum.values:
        return item.upper()
    return item


def _problems(value: object, graphql_type: GraphQLInputObjectType) -> list[str]:
    """graphql-core's own messages, each led by the field it is about (e.g. `kind[0]`)."""
    found: list[str] = []

    def collect(error: GraphQLError, path: list[str | int]) -> None:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
        found.append(f"{graphql_type.name}{where}: {error.message}")

    validate_input_value(value, graphql_type, collect)
    return found or [f"not a {graphql_type.name}"]
