"""Whole record tables in append order, streamed: what `core-audit export` writes.

Rows are the stored values, column for column (lists and objects are the JSON text the
store keeps), so an exported record is its log entry's row plus `seq`. Every statement
selects one table's columns, filtered as the API filters that kind, ordered by `seq`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Boolean, Connection, Select, Table, select

from store.db.queries.as_of import Snapshot, held, snapshot_at
from store.db.queries.errors import QueryError
from store.db.queries.filters import AssessmentFilter, ResidualFilter, SurfaceFilter, TurnFilter
from store.db.schema.tables import contract_assessments as assessments_t
from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import residual_occurrences as occurrences_t
from store.db.schema.tables import surface_records as surfaces_t
from store.db.schema.tables import turns as turns_t

# Rows fetched per round trip (SQLite: fetchmany; PostgreSQL: a server-side cursor).
EXPORT_CHUNK_ROWS = 5000

ExportFilter = ResidualFilter | AssessmentFilter | SurfaceFilter | TurnFilter


@dataclass(frozen=True, slots=True)
class ExportKind:
    """One exportable kind: its table, the filter it takes, and how the filter applies."""

    name: str
    table: Table
    filter_type: type[ExportFilter]
    _filtered: Callable[[Any], Select[Any]]

    @property
    def columns(self) -> list[str]:
        return [str(column.name) for column in self.table.columns]  # not quoted_name: orjson keys

    @property
    def boolean_columns(self) -> list[int]:
        """Positions of the columns read as bool (CSV spells them as JSON does)."""
        return [i for i, column in enumerate(self.table.columns)
                if isinstance(column.type, Boolean)]

    def statement(self, where: ExportFilter | None = None,
                  snapshot: Snapshot | None = None) -> Select[Any]:
        if where is not None and not isinstance(where, self.filter_type):
            raise TypeError(f"{self.name} takes a {self.filter_type.__name__}")
        plain = select(self.table)
        statement = plain if where is None else self._filtered(where)
        # A joined record (a turn's surface, an occurrence's residual) was stored before its
        # row, so bounding this table's seq is the whole as-of condition.
        return statement.where(*held(snapshot, self.table)).order_by(self.table.c.seq)


def _turns(where: TurnFilter) -> Select[Any]:
    # The surface's columns filter (verification, corpus, chain, form); only the turn's export.
    return (select(turns_t).join(surfaces_t, surfaces_t.c.surface_id == turns_t.c.surface_id)
            .where(*where.conditions()))


EXPORT_KINDS: dict[str, ExportKind] = {kind.name: kind for kind in (
    ExportKind("residuals", residuals_t, ResidualFilter,
               lambda where: select(residuals_t).where(*where.conditions())),
    # An occurrence is filtered by its residual: the sightings of the residuals a filter picks.
    ExportKind("occurrences", occurrences_t, ResidualFilter,
               lambda where: select(occurrences_t).join(
                   residuals_t, residuals_t.c.residual_id == occurrences_t.c.residual_id)
               .where(*where.conditions(residuals_t))),
    ExportKind("assessments", assessments_t, AssessmentFilter,
               lambda where: select(assessments_t).where(*where.conditions())),
    ExportKind("surfaces", surfaces_t, SurfaceFilter,
               lambda where: select(surfaces_t).where(*where.conditions())),
    ExportKind("turns", turns_t, TurnFilter, _turns),
)}


def export_rows(connection: Connection, kind: str, where: ExportFilter | None = None,
                as_of: int | None = None, since: int | None = None) -> Iterator[Sequence[Any]]:
    """The rows of `kind` matching `where` (as of tree size `as_of`, appended after tree size
    `since`: QueryError unless each is 0 or a recorded head's), as sequences in
    `EXPORT_KINDS[kind].columns` order, in append order, fetched EXPORT_CHUNK_ROWS at a time:
    memory stays flat."""
    export_kind = EXPORT_KINDS[kind]
    statement = export_kind.statement(where, snapshot_at(connection, as_of))
    if since is not None:
        start = snapshot_at(connection, since)
        assert start is not None
        if as_of is not None and start.tree_size > as_of:
            raise QueryError(f"since: {since} is above the as-of size {as_of}")
        statement = statement.where(export_kind.table.c.seq > start.tree_size)
    # Options on the statement: Connection.execution_options would stick to the connection.
    return iter(connection.execute(statement.execution_options(yield_per=EXPORT_CHUNK_ROWS)))
