"""A malformed `search` argument refused before execution, as a request error.

A search string is a String (so a client declares `$search: String`), read by the syntax of
docs/graphql.md#searching-text. Checked here, once the operation's variables are coerced and
before any field runs, one this syntax does not read is a request error — `BAD_USER_INPUT`,
no `data`, the 4xx status of a malformed variable — naming what is wrong, rather than a field
error inside a 200 answer; one past its bounds (characters, terms) is `LIMIT_EXCEEDED`, as
every bound. The resolvers parse it again (the query layer's own guard).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from graphql import (
    ArgumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    StringValueNode,
    VariableNode,
)

from store.db.queries.errors import LimitExceeded
from store.db.queries.search_syntax import SearchSyntaxError, parse_search

ARGUMENT = "search"


def _fields(selections: SelectionSetNode | None,
            fragments: Mapping[str, FragmentDefinitionNode], seen: set[str]
            ) -> Iterator[FieldNode]:
    """Every field of a selection set, its fragments' included (each fragment once)."""
    for selection in () if selections is None else selections.selections:
        if isinstance(selection, FieldNode):
            yield selection
            yield from _fields(selection.selection_set, fragments, seen)
        elif isinstance(selection, InlineFragmentNode):
            yield from _fields(selection.selection_set, fragments, seen)
        elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in seen:
            seen.add(selection.name.value)
            fragment = fragments.get(selection.name.value)
            if fragment is not None:
                yield from _fields(fragment.selection_set, fragments, seen)


# id(operation) -> (it, its `search` arguments in order): found once per parsed document (the
# parser cache hands the same nodes back for the same text), not by a walk per request.
_SEARCHES: dict[int, tuple[OperationDefinitionNode, tuple[ArgumentNode, ...]]] = {}
CACHED_OPERATIONS = 256  # past it the cache starts afresh


def _search_arguments(operation: OperationDefinitionNode,
                      fragments: Mapping[str, FragmentDefinitionNode]
                      ) -> tuple[ArgumentNode, ...]:
    found = _SEARCHES.get(id(operation))
    if found is not None and found[0] is operation:
        return found[1]
    arguments = tuple(argument for field in _fields(operation.selection_set, fragments, set())
                      for argument in field.arguments or () if argument.name.value == ARGUMENT)
    if len(_SEARCHES) >= CACHED_OPERATIONS:
        _SEARCHES.clear()
    _SEARCHES[id(operation)] = (operation, arguments)
    return arguments


def malformed_search(operation: OperationDefinitionNode,
                     fragments: Mapping[str, FragmentDefinitionNode],
                     variables: Mapping[str, Any]) -> GraphQLError | None:
    """The first `search` argument of the operation whose text the syntax does not read, as
    a request error naming it (None: every one reads)."""
    for argument in _search_arguments(operation, fragments):
        value = argument.value
        text = (value.value if isinstance(value, StringValueNode) else
                variables.get(value.name.value) if isinstance(value, VariableNode)
                else None)
        if not isinstance(text, str):
            continue
        try:
            parse_search(text)
        except SearchSyntaxError as error:
            return GraphQLError(str(error), argument, extensions={"code": "BAD_USER_INPUT"})
        except LimitExceeded as error:  # over its characters or terms, as every bound
            return GraphQLError(str(error), argument, extensions={"code": "LIMIT_EXCEEDED"})
    return None
