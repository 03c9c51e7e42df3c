"""The overview (`/`): the log's head and checkpoint, counts, facet charts (each bar a link to
its filtered list) and the ingest timeline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from sqlalchemy import Connection
from starlette.requests import Request

from store.console.charts import Bar, bar_chart, histogram, timeline_columns
from store.console.glossary import explain
from store.console.page_json import Links
from store.console.proofs import signed_checkpoint, signed_json
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
        ("Residuals by kind", _bars(base, "residuals", "kind", residuals.by_kind, as_of)),
        ("Residuals by source axis", _bars(base, "residuals", "axis", residuals.by_axis,
                                           as_of)),
        ("Residuals by organ", _bars(base, "residuals", "organ", residuals.by_organ, as_of,
                                     enum=False)),
        ("Surfaces by verification", _bars(base, "surfaces", "verification",
                                           surfaces.by_verification, as_of)),
        ("Surfaces by grounding source", _bars(base, "surfaces", "groundingSource",
                                               surfaces.by_grounding_source, as_of)),
        ("Turns by grounding source", _bars(base, "turns", "groundingSource",
                                            turns.by_grounding_source, as_of)),
        ("Turns by epistemic state", _bars(base, "turns", "epistemicState",
                                           turns.by_epistemic_state, as_of, enum=False)),
    ]
    points = [(p.day, p.batches, p.new_rows) for p in ingest_timeline(connection, as_of)]
    days = timeline_columns(points, base)
    return {
        "title": "Overview", "ledger": ledger, "counts": counts,
        "charts": [{"heading": heading, "bars": bars,
                    "chart": bar_chart(heading.lower(), bars)} for heading, bars in charts],
        "checkpoint": None if ledger.origin is None else checkpoint_note(
            ledger.origin, ledger.tree_size, ledger.root_hash),
        "days": days,
        "timeline": histogram("rows ingested per day", days, "no batch yet"),
        "signed": signed_checkpoint(connection, head), "proof_script": True,
    }


def overview_json(context: dict[str, Any], links: Links) -> dict[str, Any]:
    """The overview as JSON: the log's head and checkpoints, the record counts, each chart's
    bars and the ingest timeline's days, with the links the page's bars carry."""
    ledger = context["ledger"]
    return {
        "log": {"treeSize": ledger.tree_size, "rootHash": ledger.root_hash,
                "origin": ledger.origin, "checkpoint": context["checkpoint"],
                "signedCheckpoint": signed_json(context["signed"])},
        "counts": [{"records": name, "title": title, "count": n,
                    "href": links.at(f"/{name}")} for name, title, n in context["counts"]],
        "charts": [{"title": chart["heading"],
                    "bars": [{"label": b.label, "count": b.count, "href": b.href,
                              "explanation": b.explanation} for b in chart["bars"]]}
                   for chart in context["charts"]],
        "timeline": [{"day": c.label, "newRows": c.count, "href": c.href, "title": c.title}
                     for c in context["days"]],
    }
