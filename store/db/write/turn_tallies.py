"""Turn tallies: what each batch added per combination of its turns' low-cardinality columns
and CORE's hour, kept beside the rows (revision 0016).

A tally row says: batch B added `turns` new turns of this (kind, grounding source, epistemic
state, normative clearance, trace integrity) whose CORE time falls in hour `core_hour`
(turn_fields.core_time // HOUR_MICROSECONDS: UTC hours, so a day, ISO week or month is a sum
of whole hours; null: no time). A turn group by those columns, CORE time buckets or ingest
time is a sum over these rows instead of a read of every turn (turns hold CORE's lines).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import Connection, func, inspect, select

from store.db.schema.tables import turn_fields as fields_t
from store.db.schema.tables import turns as turns_t
from store.db.schema.tally_tables import HOUR_MICROSECONDS, TURN_TALLY_COLUMNS
from store.db.schema.tally_tables import turn_tallies as tallies_t
from store.db.write.inserts import content_columns
from store.db.write.tallies import stored_tallies
from store.db.write.turn_fields import COLUMNS as FIELD_COLUMNS

_CONTENT = content_columns("turns")
_POSITIONS = tuple(_CONTENT.index(name) for name in TURN_TALLY_COLUMNS)
_CORE_TIME = FIELD_COLUMNS.index("core_time")

Combo = tuple[Any, ...]  # TURN_TALLY_COLUMNS' values, then core_hour


def order(combo: Combo) -> tuple[Any, ...]:
    """A tally's ordinal follows this order: per value, a null first (revision 0016's
    backfill uses the same)."""
    return tuple((0, "") if value is None else (1, value) for value in combo)


def hour_of(core_time: int | None) -> int | None:
    return None if core_time is None else core_time // HOUR_MICROSECONDS


class TurnTally:
    """Counts one batch's new turns per combination while it is written."""

    def __init__(self) -> None:
        self.counts: dict[Combo, int] = {}

    def add(self, content: tuple[Any, ...], fields_row: tuple[Any, ...]) -> None:
        """A new turn: its content (as the writer appends it) and its turn_fields row."""
        combo = (*(content[i] for i in _POSITIONS), hour_of(fields_row[_CORE_TIME]))
        self.counts[combo] = self.counts.get(combo, 0) + 1

    def rows(self, batch_id: int) -> list[dict[str, Any]]:
        names = (*TURN_TALLY_COLUMNS, "core_hour")
        return [{"batch_id": batch_id, "ordinal": ordinal,
                 **dict(zip(names, combo, strict=True)), "turns": self.counts[combo]}
                for ordinal, combo in enumerate(sorted(self.counts, key=order), start=1)]


def turn_tallies_present(connection: Connection) -> bool:
    """Whether the store has the table (revision 0016 on): the writer of an earlier
    revision's backfill batch (0012) runs on a store without it."""
    if connection.dialect.name == "sqlite":
        return bool(connection.exec_driver_sql(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = "
            "'turn_tallies'").scalar_one())
    return inspect(connection).has_table("turn_tallies")


def recomputed_turn_tallies(connection: Connection, after_batch: int = 0
                            ) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """Each batch's turn tallies (after `after_batch`) as its stored turns and their CORE
    times say they should be, in batch order."""
    columns = [turns_t.c[name] for name in TURN_TALLY_COLUMNS]
    hour = fields_t.c.core_time // HOUR_MICROSECONDS
    counted = (select(turns_t.c.batch_id, *columns, hour, func.count())
               .join_from(turns_t, fields_t, fields_t.c.turn_key == turns_t.c.turn_key,
                          isouter=True)  # a missing fields row (verify names it): no time
               .where(turns_t.c.batch_id > after_batch)
               .group_by(turns_t.c.batch_id, *columns, hour))
    tallies: dict[int, TurnTally] = {}
    for batch_id, *combo, count in connection.execute(counted):
        tally = tallies.setdefault(batch_id, TurnTally())
        tally.counts[tuple(combo)] = tally.counts.get(tuple(combo), 0) + int(count)
    for batch_id in sorted(tallies):
        yield batch_id, tallies[batch_id].rows(batch_id)


def stored_turn_tallies(connection: Connection, after_batch: int = 0
                        ) -> dict[int, list[dict[str, Any]]]:
    return stored_tallies(connection, after_batch, tallies_t)
