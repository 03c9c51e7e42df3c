"""Variables must be text: JSON lets a string hold a lone surrogate (`"\\ud800"`), which no
database can bind or compare, so such a variable is refused by name before any resolver runs.
(The query text itself cannot hold one: GraphQL's lexer refuses it.)"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from graphql import ExecutionResult
from strawberry.extensions import SchemaExtension

from store.api.error_codes import ErrorCode, coded

_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(variables: Mapping[str, Any]) -> tuple[str, str] | None:
    """(where, U+XXXX) of a lone surrogate in a variable's keys or strings, e.g.
    `$filter.organ[0]`; None when every string is text."""
    pending: list[tuple[str, object, Any]] = [
        (f"${name}", name, value) for name, value in variables.items()]
    while pending:  # a loop, not recursion: JSON variables may nest deeply
        where, key, value = pending.pop()
        for text in (key, value):
            found = _SURROGATE.search(text) if isinstance(text, str) else None
            if found:
                return where, f"U+{ord(found.group()):04X}"
        if isinstance(value, dict):
            pending.extend((f"{where}.{k}", k, item) for k, item in value.items())
        elif isinstance(value, list):
            pending.extend((f"{where}[{i}]", None, item) for i, item in enumerate(value))
    return None


class TextVariables(SchemaExtension):
    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        found = lone_surrogate(context.variables or {})
        if found is not None and context.result is None:
            where, code_point = found
            # The message carries only the path's ASCII and the code point, not the bad text.
            context.result = ExecutionResult(None, [coded(
                f"Variable {where.encode('ascii', 'backslashreplace').decode()}: not text "
                f"(a lone surrogate, {code_point}); send valid Unicode",
                ErrorCode.BAD_USER_INPUT)])
        yield
