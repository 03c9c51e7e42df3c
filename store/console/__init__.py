"""The auditor's console: read-only HTML pages over the store (overview, lists with facets,
record pages with their inclusion proof checked in the browser, the log), served beside the
GraphQL API by `core-audit serve` and `demo` (`--no-console` switches it off)."""

from __future__ import annotations

from starlette.routing import BaseRoute

from store.db.audit_store import AuditStore


def console_routes(db: AuditStore, *, graphiql: bool = True) -> list[BaseRoute]:
    from store.console.pages import Console

    return Console(db, graphiql=graphiql).routes()


__all__ = ["console_routes"]
