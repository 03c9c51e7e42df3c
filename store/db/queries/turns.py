"""CORE turns with the surface record each emitted: their facets."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Select, func

from store.db.queries.as_of import Snapshot
from store.db.queries.facets import grouped_facets
from store.db.queries.filters import TurnFilter
from store.db.queries.records import TurnFacets
from store.db.schema.tables import surface_records as surfaces_t
from store.db.schema.tables import turns as turns_t


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
