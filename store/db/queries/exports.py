"""Whole record tables in append order, streamed: what `core-audit export` writes.

Rows are the stored values, column for column (lists and objects are the JSON text the
store keeps), so an exported record is its log entry's row plus `seq`. Every statement
selects one table's columns, filtered as the API filters that kind, ordered by `seq`. The
kinds are the listings' (queries.LISTINGS) that say `exported`, and their sightings where
they name them (`sightings_exported`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Boolean, Connection, Select, Table

from store.db.queries.as_of import Snapshot, snapshot_at
from store.db.queries.errors import QueryError
from store.db.queries.filters import filter_order
from store.db.queries.listings import LISTINGS, Filter, RecordListing

# Rows fetched per round trip (SQLite: fetchmany; PostgreSQL: a server-side cursor).
EXPORT_CHUNK_ROWS = 5000

ExportFilter = Filter


@dataclass(frozen=True, slots=True)
class ExportKind:
    """One exportable kind: its table, the filter it takes, and its filtered rows."""

    name: str
    table: Table
    filter_type: type[Filter] | None
    _rows: Callable[[Any, Snapshot | None], Select[Any]]  # (filter or None, snapshot)

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
        if where is not None and (self.filter_type is None
                                  or not isinstance(where, self.filter_type)):
            raise TypeError(f"{self.name} takes a {getattr(self.filter_type, '__name__', None)}")
        # A joined record (a turn's surface, an occurrence's residual) was stored before its
        # row, so bounding this table's seq is the whole as-of condition.
        return self._rows(where, snapshot).order_by(self.table.c.seq)


def export_kinds(listings: Iterable[RecordListing[Any, Any]]) -> dict[str, ExportKind]:
    """Each exported listing's table (filtered as the API filters it) and, where it says so,
    its sightings' (filtered by their record), in the order the filters are defined."""
    kinds: list[ExportKind] = []
    for listing in sorted((listing for listing in listings if listing.exported),
                          key=lambda listing: filter_order(listing.filter_type)):
        kinds.append(ExportKind(listing.name, listing.table, listing.filter_type,
                                listing.filtered))
        if listing.sightings is not None and listing.sightings_exported is not None:
            kinds.append(ExportKind(listing.sightings_exported, listing.sightings,
                                    listing.filter_type, listing.sightings_rows))
    return {kind.name: kind for kind in kinds}


EXPORT_KINDS: dict[str, ExportKind] = export_kinds(LISTINGS.values())


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
