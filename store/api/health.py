"""/healthz: a cheap read of the store on a path of its own, answered even while a slow
request holds the pool: 200 with the tree size, or 503 with the reason it cannot read."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.to_thread
from sqlalchemy.exc import DBAPIError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from store.db.audit_store import AuditStore

logger = logging.getLogger(__name__)


def health_check(db: AuditStore) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    """The /healthz endpoint: the tree head, read by `db.probe` on its own connection, in a
    thread outside the pool the GraphQL queries share, within the time limit."""

    async def healthz(_: Request) -> Response:
        try:
            with anyio.fail_after(db.time_limit):
                head = await anyio.to_thread.run_sync(
                    db.probe, abandon_on_cancel=True, limiter=anyio.CapacityLimiter(1))
        except TimeoutError:
            return _unavailable("the store did not answer within the time limit")
        except Exception as exc:  # any failure to read is "unavailable", with its reason
            reason = exc.orig if isinstance(exc, DBAPIError) else exc
            first_line = (str(reason).strip().splitlines() or [type(reason).__name__])[0]
            return _unavailable(f"cannot read the store: {first_line}")
        return JSONResponse({"status": "ok", "tree_size": head.tree_size})

    return healthz


def _unavailable(reason: str) -> Response:
    logger.warning("healthz: %s", reason)
    return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
