"""CORE turns with the surface record each emitted: their facets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

from sqlalchemy import CTE, Column, ColumnElement, Select, func, select

from store.db.queries.as_of import Snapshot, held
from store.db.queries.facets import FacetSet
from store.db.queries.filters import TurnFilter, tables_read
from store.db.queries.records import TurnFacets
from store.db.queries.search import Searched
from store.db.queries.statement_shapes import SlotList
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
    """The filtered turns grouped by the facets `names` (a turn is recorded once: its
    sightings are itself). Read from the turns alone, grouped with their surface_id first,
    then joined to those few surfaces: a turn's surface and fields are joined row by row
    only where the filter (or the journal facet) needs them (`rows`, every column joined, is
    not read)."""
    columns = {name: TURN_FACETS[name] for name in names}
    if all(column.table is fields_t for column in columns.values()) and on_fields(where):
        return _fields_combos(where, snapshot, columns)
    filtered = _filtered_tables(where)
    conditions = where.conditions() if where is not None else []
    if all(column.table is not fields_t for column in columns.values()):
        semi = fields_semi_join(where, conditions)
        if semi is not None:
            conditions, filtered = semi, filtered - {fields_t}
    needs = {column.table for column in columns.values()} | filtered
    source: Any = turns_t
    if surfaces_t in filtered:
        source = source.join(surfaces_t, surfaces_t.c.surface_id == turns_t.c.surface_id)
    if fields_t in needs:
        # Outer: a turn without its fields row (verify names it) is counted, as listed.
        source = source.outerjoin(fields_t, fields_t.c.turn_key == turns_t.c.turn_key)
    own = {name: column for name, column in columns.items() if column.table is not surfaces_t}
    grouped = (select(*(column.label(name) for name, column in own.items()),
                      turns_t.c.surface_id.label("turn_surface_id"), func.count().label("n"))
               .select_from(source)
               .where(*conditions, *held(snapshot, turns_t))
               .group_by(*own.values(), turns_t.c.surface_id)
               .subquery("turns_by_surface"))
    labelled = [grouped.c[name] if name in own else columns[name].label(name)
                for name in names]
    return (select(*labelled, func.sum(grouped.c.n).label("n"), func.sum(grouped.c.n).label("s"))
            .select_from(grouped.join(surfaces_t,
                                      surfaces_t.c.surface_id == grouped.c.turn_surface_id))
            .group_by(*labelled).cte("combos"))


def fields_semi_join(where: TurnFilter | Searched | None,
                     conditions: Sequence[ColumnElement[bool]]
                     ) -> list[ColumnElement[bool]] | None:
    """`conditions` (`where`'s) with those on turn_fields made one `turns.seq IN (SELECT
    turn_seq FROM turn_fields WHERE ...)`: the turns are then read by their seq from the
    fields index's own entries, not by a search of turn_fields and a lookup by the 64-character
    turn_key each (a 25,000-turn journal's facets: ~90 -> ~50 ms on SQLite). None where
    nothing is on turn_fields, or where a turn without its fields row (which verify names)
    could match, as the outer join lets it: a journal list with a null."""
    base = where.base if isinstance(where, Searched) else where
    if base is None or (base.journal and _with_null(base.journal)):
        return None
    on: list[ColumnElement[bool]] = []
    rest: list[ColumnElement[bool]] = []
    for condition in conditions:
        (on if tables_read(condition) == {fields_t} else rest).append(condition)
    if not on:
        return None
    # turn_seq is the turn's seq (written with it; verify holds them equal).
    return [*rest, turns_t.c.seq.in_(select(fields_t.c.turn_seq).where(*on))]


def read_by_seq(where: Any, conditions: list[ColumnElement[bool]], reading: bool
                ) -> list[ColumnElement[bool]] | None:
    """Turns counted, or searched, within a journal (or CORE-time bounds): their conditions
    with those on turn_fields read by seq (`fields_semi_join`), not through the fields join
    that looks each turn up by key. A one-word search within a 25,000-turn journal: its count
    57-72 -> 4-25 ms, its page statement 55-95 -> 11-13 ms on SQLite. Both ways the engine
    lists every match of the search first; reading by seq then costs a probe per match rather
    than per journal turn, worse only for a word in most turns of the store (one in every
    turn: 77-81 -> 92-99 ms a request). A journal's page without a search keeps walking the
    journal's index (`journal_seq`). None: nothing to read so."""
    if reading and not isinstance(where, Searched):
        return None
    return fields_semi_join(where, conditions)


def counted_on_fields(where: TurnFilter | None, snapshot: Snapshot | None
                      ) -> Select[Any] | None:
    """Turns whose filter is on turn_fields alone and selects by it (journals without a
    null, CORE-time bounds), counted from turn_fields' own index (one row per turn, in the
    turn's batch), as `_fields_combos` counts their facets: a 25,000-turn journal ~48 -> ~2 ms
    on SQLite. None: the listing's default count (`read_by_seq` with other fields)."""
    if (where is None or isinstance(where, Searched) or not on_fields(where)
            or fields_semi_join(where, where.conditions()) is None):
        return None
    return select(func.count()).select_from(fields_t).where(
        *where.conditions(fields_t),
        *([] if snapshot is None else [snapshot.covers(fields_t.c.batch_id)]))


def on_fields(where: TurnFilter | None) -> bool:
    """Whether a filter's conditions are all on turn_fields (or the batch range, which
    turn_fields holds too)."""
    if where is None:
        return True
    if isinstance(where, Searched):
        return False  # a search matches the turns' own seq: read from the turns
    return _filtered_tables(where) <= {fields_t} and not any(
        getattr(where, f.name) for f in fields(where)
        if f.metadata.get("column") is not None and f.metadata["column"].table is turns_t)


def _fields_combos(where: TurnFilter | None, snapshot: Snapshot | None,
                   columns: Mapping[str, Column[Any]]) -> CTE:
    """Turns grouped by columns of turn_fields, read from turn_fields alone (one row per
    turn, written with it, in the turn's batch): a walk of its index, not a join per turn (a
    turn missing its row, which verify names, is not counted here)."""
    # On turn_fields' own columns of the same names (journal_id, batch_id), CORE time too.
    conditions = [] if where is None else where.conditions(fields_t)
    return (select(*(column.label(name) for name, column in columns.items()),
                   func.count().label("n"), func.count().label("s"))
            .where(*conditions, *([] if snapshot is None else
                                  [snapshot.covers(fields_t.c.batch_id)]))
            .group_by(*columns.values()).cte("combos"))


def _filtered_tables(where: TurnFilter | None) -> set[Any]:
    """The tables besides turns a filter's conditions read."""
    if isinstance(where, Searched):
        return _filtered_tables(where.base)  # its match is on the turns themselves
    if where is None:
        return set()
    found = {f.metadata["column"].table for f in fields(where)
             if f.metadata.get("column") is not None and getattr(where, f.name)}
    if where.time_from is not None or where.time_to is not None:
        found.add(fields_t)
    return found - {turns_t}


# Turns per grounding source, verification, epistemic state, clearance, corpus, kind, trace
# integrity and surface form (a turn is its own sighting: no sightings of their own).
TURN_FACET_SET = FacetSet(COUNTED_TOGETHER,
                          lambda total, _sightings, lists: TurnFacets(total, *lists))


def journal_seq(where: TurnFilter | None) -> ColumnElement[int] | None:
    """A journal's turns in seq order read through turn_fields' (journal_id, turn_seq) index:
    turn_seq is the turn's seq, and a journal list without a null leaves only turns with a
    fields row. Sorting every turn of a 25,000-turn journal for a 50-turn page took ~110 ms
    (bench/journal.py's store). A search is read by seq (`read_by_seq`). None: by the
    turns' own seq."""
    journal = None if where is None or isinstance(where, Searched) else where.journal
    if not journal or _with_null(journal):
        return None
    return fields_t.c.turn_seq


def _with_null(journal: Any) -> bool:
    """Whether a journal list (or its shape's slots) selects turns of no journal too."""
    return journal.null if isinstance(journal, SlotList) else any(v is None for v in journal)
