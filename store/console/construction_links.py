"""The console's links between a Workbench turn and what its construction evidence came to:
a turn's status, assessments and residuals; an assessment's turn; a residual's turns."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from store.db import queries

TURNS_SHOWN = 20


def _short(key: str) -> str:
    return key[:16] + "…"


def turn_construction(connection: Connection, turn: queries.StoredTurn, as_of: int | None
                      ) -> tuple[queries.TurnConstruction, list[dict[str, Any]]]:
    """The turn's construction status, and its assessments and residuals as related lists."""
    line = queries.TurnLine(turn.turn_key, turn.kind, turn.line)
    construction = queries.turn_constructions(connection, [line], as_of=as_of)[turn.turn_key]
    assessments = construction.assessments
    produced = queries.assessment_residuals(
        connection, [a.assessment_id for a in assessments], as_of=as_of)
    residuals = {r.residual.residual_id: r for found in produced.values() for r in found}
    related = [
        {"title": f"Construction evidence: its contract assessments ({len(assessments)})",
         "headings": ["assessment", "organ", "runnable", "missing bindings", "hazards"],
         "rows": [[{"text": _short(a.assessment_id), "href": f"/assessments/{a.assessment_id}"},
                   {"text": a.assessment.candidate_organ},
                   {"text": "true" if a.assessment.runnable else "false"},
                   {"text": ", ".join(a.assessment.missing_bindings) or "—"},
                   {"text": ", ".join(a.assessment.unresolved_hazards) or "—"}]
                  for a in assessments]},
        {"title": f"Residuals its assessments project to ({len(residuals)})",
         "headings": ["residual", "kind", "axis", "code"],
         "rows": [[{"text": _short(rid), "href": f"/residuals/{rid}"},
                   {"text": residuals[rid].residual.residual_kind.name},
                   {"text": residuals[rid].residual.source_axis.name},
                   {"text": residuals[rid].residual.residual_code}]
                  for rid in sorted(residuals)]},
    ]
    return construction, related


def assessment_turn(connection: Connection, assessment_id: str, as_of: int | None
                    ) -> queries.StoredTurn | None:
    """The journal turn the assessment was projected from, if any."""
    return queries.assessment_turns(connection, [assessment_id], as_of=as_of)[assessment_id]


def residual_turns(connection: Connection, residual_id: str, as_of: int | None
                   ) -> dict[str, Any]:
    """The first turns whose construction evidence projected to the residual."""
    page = queries.list_residual_turns(connection, residual_id, TURNS_SHOWN, as_of=as_of)
    total = queries.count_residual_turns(connection, residual_id, as_of=as_of)
    shown = f", the first {len(page.items)}" if total > len(page.items) else ""
    return {
        "title": f"Turns whose construction evidence projected to it ({total}{shown})",
        "headings": ["turn", "turn id", "prompt", "timestamp", "batch"],
        "rows": [[{"text": _short(t.turn_key), "href": f"/turns/{t.turn_key}"},
                  {"text": "—" if t.turn_id is None else str(t.turn_id)},
                  {"text": t.prompt or "—"}, {"text": t.timestamp or "—"},
                  {"text": str(t.batch_id), "href": f"/batches/{t.batch_id}"}]
                 for t in page.items],
    }
