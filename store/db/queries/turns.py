"""CORE turns with the surface record each emitted: the row builder and facets."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from sqlalchemy import Connection, Select, func

from store.db.queries.as_of import Snapshot
from store.db.queries.facets import grouped_facets
from store.db.queries.filters import TurnFilter
from store.db.queries.records import StoredTurn, TurnFacets
from store.db.queries.surfaces import surface_of
from store.db.schema.tables import surface_records as surfaces_t
from store.db.schema.tables import turns as turns_t
from store.model.teaching_surface import GroundingSource

_SURFACE_PREFIX = "surface_"


def turn_of(row: Any) -> StoredTurn:
    mapping = row._mapping
    surface = SimpleNamespace(**{
        key.removeprefix(_SURFACE_PREFIX): value for key, value in mapping.items()
        if isinstance(key, str) and key.startswith(_SURFACE_PREFIX)
    })
    return StoredTurn(
        turn_key=row.turn_key,
        seq=row.seq,
        batch_id=row.batch_id,
        kind=row.kind,
        turn_id=row.turn_id,
        prompt=row.prompt,
        timestamp=row.timestamp,
        grounding_source=GroundingSource(row.grounding_source),
        epistemic_state=row.epistemic_state,
        normative_clearance=row.normative_clearance,
        normative_detail=row.normative_detail,
        verdict_identity=row.verdict_identity,
        verdict_safety=row.verdict_safety,
        verdict_ethics=row.verdict_ethics,
        refusal_emitted=None if row.refusal_emitted is None else bool(row.refusal_emitted),
        hedge_injected=None if row.hedge_injected is None else bool(row.hedge_injected),
        trace_hash=row.trace_hash,
        trace_integrity=row.trace_integrity,
        journal_digest=row.journal_digest,
        line=row.line,
        surface=surface_of(surface),
    )


def turn_facets_of(connection: Connection, rows: Select[Any], where: TurnFilter | None,
                   snapshot: Snapshot | None) -> TurnFacets:
    """Turns per grounding source, verification, epistemic state, clearance and corpus."""
    columns = {
        "grounding_source": turns_t.c.grounding_source,
        "verification": surfaces_t.c.verification,
        "epistemic_state": turns_t.c.epistemic_state,
        "normative_clearance": turns_t.c.normative_clearance,
        "corpus_id": surfaces_t.c.corpus_id,
    }
    total, _, lists = grouped_facets(connection, rows, columns, func.count(), func.count())
    return TurnFacets(total, *lists)
