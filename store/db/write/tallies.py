"""Residual tallies: what each batch added per taxonomy combination, kept beside the rows.

A tally row says: batch B added `residuals` new residuals and `occurrences` new sightings
with this (kind, axis, organ, family, code). Every residual filter names only those columns,
so a filtered count or a facet is a sum over tallies, whatever the store's size.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import Connection, Table, func, select

from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import residual_occurrences as occurrences_t
from store.db.schema.tally_tables import TALLY_DIMENSIONS
from store.db.schema.tally_tables import residual_tallies as tallies_t

Combo = tuple[Any, ...]  # the TALLY_DIMENSIONS values of one residual


def combo_of(residual_row: dict[str, Any]) -> Combo:
    return tuple(residual_row[name] for name in TALLY_DIMENSIONS)


def _order(combo: Combo) -> tuple[Any, ...]:
    # Same order as revision 0003's backfill: a null family first.
    kind, axis, organ, family, code = combo
    return (kind, axis, organ, family is not None, family or "", code)


class BatchTally:
    """Counts one batch's new residuals and occurrences per combination while it is written."""

    def __init__(self) -> None:
        self.counts: dict[Combo, list[int]] = {}

    def add(self, combo: Combo, residuals: int = 0, occurrences: int = 0) -> None:
        counts = self.counts.setdefault(combo, [0, 0])
        counts[0] += residuals
        counts[1] += occurrences

    def rows(self, batch_id: int) -> list[dict[str, Any]]:
        return [
            {"batch_id": batch_id, "ordinal": ordinal,
             **dict(zip(TALLY_DIMENSIONS, combo, strict=True)),
             "residuals": self.counts[combo][0], "occurrences": self.counts[combo][1]}
            for ordinal, combo in enumerate(sorted(self.counts, key=_order), start=1)
        ]


def recomputed_tallies(connection: Connection, after_batch: int = 0
                       ) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """Each batch's tallies (after `after_batch`) as the ledgered rows say they should be, in
    batch order."""
    dims = [residuals_t.c[name] for name in TALLY_DIMENSIONS]
    tallies = added_residuals(connection, after_batch)
    seen = (
        select(occurrences_t.c.batch_id, *dims, func.count())
        .join(residuals_t, residuals_t.c.residual_id == occurrences_t.c.residual_id)
        .where(occurrences_t.c.batch_id > after_batch)
        .group_by(occurrences_t.c.batch_id, *dims)
    )
    for batch_id, *combo, count in connection.execute(seen):
        tallies.setdefault(batch_id, BatchTally()).add(tuple(combo), occurrences=count)
    yield from in_batch_order(tallies)


def added_residuals(connection: Connection, after_batch: int = 0) -> dict[int, BatchTally]:
    """Each batch's new residuals (after `after_batch`) counted per combination; their
    occurrences are added by the caller."""
    dims = [residuals_t.c[name] for name in TALLY_DIMENSIONS]
    added = select(residuals_t.c.batch_id, *dims, func.count()).where(
        residuals_t.c.batch_id > after_batch).group_by(residuals_t.c.batch_id, *dims)
    tallies: dict[int, BatchTally] = {}
    for batch_id, *combo, count in connection.execute(added):
        tallies.setdefault(batch_id, BatchTally()).add(tuple(combo), residuals=count)
    return tallies


def in_batch_order(tallies: dict[int, BatchTally]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    for batch_id in sorted(tallies):
        yield batch_id, tallies[batch_id].rows(batch_id)


def stored_tallies(connection: Connection, after_batch: int = 0, table: Table = tallies_t
                   ) -> dict[int, list[dict[str, Any]]]:
    """A tally table's rows after `after_batch`, per batch in ordinal order (the residual
    tallies, or another table keyed (batch_id, ordinal) such as the turn tallies)."""
    stored: dict[int, list[dict[str, Any]]] = {}
    rows = connection.execute(select(table).where(table.c.batch_id > after_batch)
                              .order_by(table.c.batch_id, table.c.ordinal))
    for row in rows.mappings():
        stored.setdefault(row["batch_id"], []).append(dict(row))
    return stored
