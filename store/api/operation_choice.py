"""GraphQL's GetOperation (spec §6.1): a document with several operations needs an
operationName. strawberry would run the first one instead, silently answering another
question than the caller may have meant."""

from __future__ import annotations

from collections.abc import Iterator

from graphql import ExecutionResult, OperationDefinitionNode
from strawberry.extensions import SchemaExtension

from store.api.error_codes import ErrorCode, coded

# graphql-core's own wording for this request error.
NAME_NEEDED = "Must provide operation name if query contains multiple operations."


def unknown_operation(name: str) -> str:
    """The message strawberry's HTTP view gives for a name the document does not hold."""
    return f'Unknown operation named "{name}".'


class OperationChoice(SchemaExtension):
    """Refuses, before execution, a document of several operations sent without a name."""

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        document = context.graphql_document
        # operation_name falls back to the first operation's; only this says what was sent.
        sent_name = context._provided_operation_name
        if context.result is None and document is not None and sent_name is None:
            operations = sum(isinstance(d, OperationDefinitionNode) for d in document.definitions)
            if operations > 1:
                context.result = ExecutionResult(
                    None, [coded(NAME_NEEDED, ErrorCode.OPERATION_NOT_DETERMINED)])
        yield
