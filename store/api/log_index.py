"""`LogIndex`: the GraphQL scalar of tree sizes and leaf indexes.

GraphQL's `Int` is 32-bit (a value past 2^31 - 1 fails to serialize): a store past 2^31
leaves could not be addressed. A LogIndex is a JSON number from 0 to 2^53 (9007199254740992,
the largest integer below which every integer is exact in a JavaScript number or an IEEE
754 double, so any JSON client reads it as sent).
"""

from __future__ import annotations

from typing import Any, NewType

import strawberry
from graphql import GraphQLError, IntValueNode, ValueNode
from strawberry.types.scalar import ScalarDefinition

MAX_LOG_INDEX = 2**53


def _integer(value: Any) -> int:
    # bool is an int in Python, not a number in JSON: refused, as graphql-core's Int does.
    if isinstance(value, bool) or not isinstance(value, int):
        raise GraphQLError(f"LogIndex cannot represent a non-integer value: {value!r}")
    if not 0 <= value <= MAX_LOG_INDEX:
        raise GraphQLError(f"LogIndex must be between 0 and 2^53 ({MAX_LOG_INDEX}), got {value}")
    return value


def _literal(node: ValueNode, _variables: dict[str, Any] | None = None) -> int:
    if not isinstance(node, IntValueNode):
        raise GraphQLError("LogIndex cannot represent a non-integer value", node)
    return _integer(int(node.value))


LogIndex = NewType("LogIndex", int)

# The schema's StrawberryConfig(scalar_map=...) entry that makes LogIndex this scalar.
LOG_INDEX_SCALAR: dict[object, ScalarDefinition] = {LogIndex: strawberry.scalar(
        name="LogIndex",
        description="A tree size or a leaf index: an integer from 0 to 2^53 "
                    "(9007199254740992), exact as a JSON number in any client (GraphQL's Int "
                    "stops at 2^31 - 1).",
        serialize=_integer, parse_value=_integer, parse_literal=_literal)}
