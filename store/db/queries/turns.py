"""CORE turns with the surface record each emitted: their facets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import CTE, Column, Connection, Select, func

from store.db.queries.as_of import Snapshot
from store.db.queries.facets import facet_counts, grouped_combos
from store.db.queries.filters import TurnFilter
from store.db.queries.records import TurnFacets
from store.db.schema.tables import surface_records as surfaces_t
from store.db.schema.tables import turn_fields as fields_t
from store.db.schema.tables import turns as turns_t

# Each facet: the filter field it selects -> its column of the rows a turn is read from (the
# turn, its emitted surface, its fields). The first ones are counted together (TurnFacets);
# chain and journal, which may have many values, a page at a time (facet_page).
TURN_FACETS: Mapping[str, Column[Any]] = {
    "grounding_source": turns_t.c.grounding_source,
    "verification": surfaces_t.c.verification,
    "epistemic_state": turns_t.c.epistemic_state,
    "normative_clearance": turns_t.c.normative_clearance,
    "corpus_id": surfaces_t.c.corpus_id,
    "kind": turns_t.c.kind,
    "trace_integrity": turns_t.c.trace_integrity,
    "surface_form": surfaces_t.c.surface_form,
    "chain_id": surfaces_t.c.chain_id,
    "journal": fields_t.c.journal_id,
}
COUNTED_TOGETHER = ("grounding_source", "verification", "epistemic_state",
                    "normative_clearance", "corpus_id", "kind", "trace_integrity",
                    "surface_form")


def turn_combos(rows: Select[Any], where: TurnFilter | None, snapshot: Snapshot | None,
                names: Sequence[str]) -> CTE:
    """The filtered turns (`rows`, joined to their surfaces and fields) grouped by the facets
    `names` (a turn is recorded once: its sightings are itself)."""
    return grouped_combos(rows, {name: TURN_FACETS[name] for name in names}, func.count(),
                          func.count())


def turn_facets_of(connection: Connection, rows: Select[Any], where: TurnFilter | None,
                   snapshot: Snapshot | None) -> TurnFacets:
    """Turns per grounding source, verification, epistemic state, clearance, corpus, kind,
    trace integrity and surface form."""
    total, _, lists = facet_counts(
        connection, turn_combos(rows, where, snapshot, COUNTED_TOGETHER), COUNTED_TOGETHER)
    return TurnFacets(total, *lists)
