"""CORE turns with the surface record each emitted: pages, lookups, counts and facets."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from sqlalchemy import Connection, Label, Select, func, select

from store.db.queries.as_of import Snapshot, held, snapshot_at
from store.db.queries.facets import facet_counts
from store.db.queries.filters import TurnFilter, equals
from store.db.queries.orders import Order, in_seq_order
from store.db.queries.pages import count_rows, page_of
from store.db.queries.records import Page, StoredTurn, TurnFacets
from store.db.queries.surfaces import surface_of, surface_sightings
from store.db.schema.tables import surface_records as surfaces_t
from store.db.schema.tables import turns as turns_t
from store.model.teaching_surface import GroundingSource

_SURFACE_PREFIX = "surface_"


def _surface_columns(snapshot: Snapshot | None) -> list[Label[Any]]:
    """The surface's columns under a prefix: turns and surfaces share column names (seq,
    prompt...); its sightings counted by `snapshot`, if given."""
    return [
        *(c.label(f"{_SURFACE_PREFIX}{c.name}") for c in surfaces_t.c),
        surface_sightings(snapshot).element.label(f"{_SURFACE_PREFIX}occurrence_count"),
    ]


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


def _joined(where: TurnFilter | None, snapshot: Snapshot | None) -> Select[Any]:
    # A turn's surface was stored by its batch or an earlier one: only turns need the snapshot.
    return (
        select(turns_t)
        .join(surfaces_t, surfaces_t.c.surface_id == turns_t.c.surface_id)
        .where(*(where.conditions() if where else []),
               *held(snapshot, turns_t))
    )


def _turns_select(where: TurnFilter | None, snapshot: Snapshot | None) -> Select[Any]:
    return _joined(where, snapshot).add_columns(*_surface_columns(snapshot))


def turn_by_key(connection: Connection, turn_key: str,
                as_of: int | None = None) -> StoredTurn | None:
    row = connection.execute(
        _turns_select(None, snapshot_at(connection, as_of))
        .where(equals(turns_t.c.turn_key, turn_key))).first()
    return None if row is None else turn_of(row)


def list_turns(
    connection: Connection,
    where: TurnFilter | None = None,
    first: int | None = None,
    after: str | None = None,
    *,
    last: int | None = None,
    before: str | None = None,
    order: Order = Order.OLDEST_FIRST,
    as_of: int | None = None,
) -> Page[StoredTurn]:
    statement = _turns_select(where, snapshot_at(connection, as_of))
    listing = in_seq_order(order, statement, turns_t.c.seq, listing="turns")
    return page_of(connection, listing, order, turn_of, first, after, last, before)


def count_turns(connection: Connection, where: TurnFilter | None = None,
                as_of: int | None = None) -> int:
    return count_rows(connection, _joined(where, snapshot_at(connection, as_of))
                      .with_only_columns(turns_t.c.seq))


def turn_facets(connection: Connection, where: TurnFilter | None = None,
                as_of: int | None = None) -> TurnFacets:
    """Turns per grounding source, verification, epistemic state, clearance and corpus."""
    columns = {
        "grounding_source": turns_t.c.grounding_source,
        "verification": surfaces_t.c.verification,
        "epistemic_state": turns_t.c.epistemic_state,
        "normative_clearance": turns_t.c.normative_clearance,
        "corpus_id": surfaces_t.c.corpus_id,
    }
    labelled = [column.label(name) for name, column in columns.items()]
    combos = (
        _joined(where, snapshot_at(connection, as_of))
        .with_only_columns(*labelled, func.count().label("n"), func.count().label("s"))
        .group_by(*columns.values())
        .cte("combos")
    )
    total, _, (by_source, by_verification, by_state, by_clearance, by_corpus) = facet_counts(
        connection, combos, tuple(columns))
    return TurnFacets(
        total=total,
        by_grounding_source=by_source,
        by_verification=by_verification,
        by_epistemic_state=by_state,
        by_normative_clearance=by_clearance,
        by_corpus=by_corpus,
    )
