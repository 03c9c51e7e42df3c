"""Turn groups from the batches' turn tallies (store/db/write/turn_tallies.py), when the
tallies can answer: every dimension asked for is a tallied column (kind, grounding source,
epistemic state, clearance, trace integrity), a CORE-time bucket or an ingest-time bucket,
and the filter names only tallied columns, batch ranges, and CORE-time bounds on whole
hours (timeFrom at an hour's start, timeTo at its last microsecond).

Anything else reads the turns' rows (groups.py): the emitted surface's columns (its
verification, corpus, chain, pack version, text) and the prompt are not tallied (a chain or
a prompt would make a tally row per turn), nor are a journal, turn ids, trace hashes,
journal digests or turn keys, nor a CORE-time bound inside an hour. A tally row holds
`turns`: the groups sum it where the rows are counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, replace
from typing import Any, Protocol

from sqlalchemy import ColumnElement, FromClause, Select, select

from store.db.queries.as_of import Snapshot
from store.db.queries.filters import ColumnFilter, TurnFilter
from store.db.queries.keys import key_value
from store.db.queries.ranges import BatchRange
from store.db.schema.tables import ingest_batches as batches_t
from store.db.schema.tally_tables import HOUR_MICROSECONDS, TURN_TALLY_COLUMNS
from store.db.schema.tally_tables import turn_tallies as tallies_t
from store.model.turn_fields import core_time

_BATCH_RANGE = frozenset(f.name for f in fields(BatchRange))
# The grouping's column names (groups._TURN_COLUMNS) the tallies hold.
_TALLIED = frozenset({"kind", "grounding_source", "epistemic_state", "normative_clearance",
                      "trace_integrity", "core_time", "ingested_at"})


class TalliedDimension(Protocol):
    @property
    def column(self) -> str: ...


def _time_bounds(where: TurnFilter) -> list[ColumnElement[bool]] | None:
    """The filter's CORE-time bounds on the tallies' hours, or None if one falls inside an
    hour (or has no offset: the rows' conditions name it)."""
    found: list[ColumnElement[bool]] = []
    for bound, last in ((where.time_from, False), (where.time_to, True)):
        if bound is None:
            continue
        at = core_time(bound)
        if at is None or (at + last) % HOUR_MICROSECONDS:
            return None
        hour = tallies_t.c.core_hour
        found.append(hour <= key_value(at // HOUR_MICROSECONDS) if last
                     else hour >= key_value(at // HOUR_MICROSECONDS))
    return found


def _conditions(where: TurnFilter | None) -> list[ColumnElement[bool]] | None:
    if where is None:
        return []
    for each in fields(where):
        if (each.name not in (*TURN_TALLY_COLUMNS, *_BATCH_RANGE, "time_from", "time_to")
                and getattr(where, each.name)):
            return None
    bounds = _time_bounds(where)
    if bounds is None:
        return None
    untimed = replace(where, time_from=None, time_to=None)
    return [*ColumnFilter.conditions(untimed, tallies_t), *bounds]


def tallied_turn_rows(where: TurnFilter | None, snapshot: Snapshot | None,
                      dimensions: Sequence[TalliedDimension]) -> Select[Any] | None:
    """The tally rows standing for the turns matching `where` (as of `snapshot`), each with
    the dimensions' columns by name (core_time: its hour's first microsecond) and `turns`;
    None if the tallies cannot answer."""
    conditions = _conditions(where)
    if conditions is None or any(d.column not in _TALLIED for d in dimensions):
        return None
    columns: dict[str, ColumnElement[Any]] = {
        **{name: tallies_t.c[name] for name in TURN_TALLY_COLUMNS},
        "core_time": tallies_t.c.core_hour * key_value(HOUR_MICROSECONDS),
        "ingested_at": batches_t.c.ingested_at}
    source: FromClause = tallies_t
    if any(d.column == "ingested_at" for d in dimensions):
        source = source.join(batches_t, batches_t.c.batch_id == tallies_t.c.batch_id)
    named = dict.fromkeys(d.column for d in dimensions)  # each once (CORE_DAY, CORE_HOUR)
    return (select(*(columns[name].label(name) for name in named),
                   tallies_t.c.turns)
            .select_from(source)
            .where(*conditions,
                   *([] if snapshot is None else [snapshot.covers(tallies_t.c.batch_id)])))
