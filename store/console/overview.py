"""The overview (`/`): the log's head and checkpoint, counts, facet charts (each bar a link to
its filtered list) and the ingest timeline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from sqlalchemy import Connection
from starlette.requests import Request

from store.console.charts import Bar, bar_chart, timeline
from store.console.glossary import explain
from store.console.proofs import signed_checkpoint
from store.db import queries
from store.db.queries.browsing import count_batches_where, ingest_timeline
from store.db.queries.records import FacetCount
from store.model.proof_file import checkpoint_note

if TYPE_CHECKING:
    from store.console.pages import Console, Head


def _bars(base: str, path: str, param: str, counts: list[FacetCount], as_of: int | None,
          enum: bool = True) -> list[Bar]:
    def href(value: str) -> str:
        params = {param: value} | ({} if as_of is None else {"asOf": str(as_of)})
        return f"{base}/{path}?{urlencode(params)}"

    return [Bar(label=_spelled(c.value, enum), count=c.count,
                href=None if c.value is None else href(_spelled(c.value, enum)),
                explanation=explain(param, c.value)) for c in counts]


def _spelled(value: str | None, enum: bool) -> str:
    """As the filter parameter takes it: an enum value by its GraphQL name."""
    return "(none)" if value is None else value.upper() if enum else value


def read_overview(connection: Connection, request: Request, head: Head,
                  console: Console) -> dict[str, Any]:
    as_of = head.as_of
    base = request.scope.get("root_path", "")
    ledger = queries.ledger_status(connection, as_of)
    residuals = queries.residual_facets(connection, None, as_of)
    surfaces = queries.surface_facets(connection, None, as_of)
    turns = queries.turn_facets(connection, None, as_of)
    counts = [
        ("residuals", "Residuals", residuals.total),
        ("assessments", "Assessments", queries.count_assessments(connection, None, as_of)),
        ("surfaces", "Surfaces", surfaces.total),
        ("turns", "Turns", turns.total),
        ("batches", "Batches", count_batches_where(connection, None, as_of)),
    ]
    charts = [
        ("Residuals by kind", bar_chart("residuals by kind",
                                        _bars(base, "residuals", "kind", residuals.by_kind,
                                              as_of))),
        ("Residuals by source axis", bar_chart("residuals by axis",
                                               _bars(base, "residuals", "axis",
                                                     residuals.by_axis, as_of))),
        ("Residuals by organ", bar_chart("residuals by organ",
                                         _bars(base, "residuals", "organ", residuals.by_organ,
                                               as_of, enum=False))),
        ("Surfaces by verification", bar_chart("surfaces by verification",
                                               _bars(base, "surfaces", "verification",
                                                     surfaces.by_verification, as_of))),
        ("Surfaces by grounding source", bar_chart(
            "surfaces by grounding source",
            _bars(base, "surfaces", "groundingSource", surfaces.by_grounding_source, as_of))),
        ("Turns by grounding source", bar_chart(
            "turns by grounding source",
            _bars(base, "turns", "groundingSource", turns.by_grounding_source, as_of))),
        ("Turns by epistemic state", bar_chart(
            "turns by epistemic state",
            _bars(base, "turns", "epistemicState", turns.by_epistemic_state, as_of,
                  enum=False))),
    ]
    points = [(p.day, p.batches, p.new_rows) for p in ingest_timeline(connection, as_of)]
    return {
        "title": "Overview", "ledger": ledger, "counts": counts, "charts": charts,
        "checkpoint": None if ledger.origin is None else checkpoint_note(
            ledger.origin, ledger.tree_size, ledger.root_hash),
        "timeline": timeline(points, base),
        "signed": signed_checkpoint(connection, head), "proof_script": True,
    }
