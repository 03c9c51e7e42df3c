"""Running one GraphQL operation in-process: what `core-audit query` and the benches use."""

from __future__ import annotations

from typing import Any

from strawberry.schema.exceptions import CannotGetOperationTypeError

from store.api.context import RequestContext
from store.api.error_codes import ErrorCode, coded, graphql_response
from store.api.operation_choice import unknown_operation
from store.api.schema import build_schema
from store.db.audit_store import AuditStore


async def execute_operation(database: AuditStore, source: str,
                            variables: dict[str, Any] | None,
                            operation: str | None) -> dict[str, Any]:
    """The same schema, limits and masking as the server, without HTTP."""
    try:
        result = await build_schema().execute(
            source, variable_values=variables, operation_name=operation,
            context_value=RequestContext(database),
        )
    except CannotGetOperationTypeError:  # the HTTP view answers 422 with the same error
        return {"errors": [coded(unknown_operation(operation or ""),
                                 ErrorCode.OPERATION_NOT_DETERMINED).formatted]}
    return graphql_response(result.data, result.errors or [])
