"""Refuse, before execution, an operation that may resolve more objects than the server's
bound (see object_estimate for how they are counted)."""

from __future__ import annotations

from collections.abc import Iterator

from graphql import ExecutionResult
from strawberry.extensions import SchemaExtension

from store.api.error_codes import ErrorCode, coded
from store.api.object_estimate import DEFAULT_MAX_OBJECTS, estimate_objects
from store.db.queries import DEFAULT_PAGE_SIZE


class ObjectLimit(SchemaExtension):
    """Refuses, before execution, an operation estimated to resolve over `max_objects`."""

    def __init__(self, *, max_objects: int = DEFAULT_MAX_OBJECTS) -> None:
        self.max_objects = max_objects

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        if context.result is None and context.graphql_document is not None:
            estimate = estimate_objects(context.schema._schema, context.graphql_document,
                                        context.operation_name, context.variables)
            if estimate > self.max_objects:
                context.result = ExecutionResult(None, [coded(
                    f"this query may resolve {estimate} objects, over this server's limit of "
                    f"{self.max_objects}: ask for smaller pages (`first`) or fewer nested lists "
                    "(each list in a page holds up to `first` items, default "
                    f"{DEFAULT_PAGE_SIZE})", ErrorCode.LIMIT_EXCEEDED)])
        yield
