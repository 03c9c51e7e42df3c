"""The rows a batch writes to its derived tables (DERIVED_TABLES: tallies, sighting counts, log
subtrees, the tree head), inserted through one object that keeps a digest of their values, so
the batch proof compares values read back, never only counts.

A derived row is not a leaf, so no tree head covers it: an out-of-band trigger that changed
its values (a tally x10) would otherwise commit unseen and be served. The digest is a
multiset hash: the sum, modulo 2**256, of the sha256 of each row's values as JSON in column
order; rows may be written and read back in any order, and a row changed, dropped or added
changes it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import Boolean, Connection, Select, and_, false, or_, select

from store.db.schema.engine import row_chunks_read
from store.db.schema.record_kinds import DERIVED_TABLES, SUBTREES_TABLE
from store.db.schema.tables import SUBTREE_LEVEL, log_subtrees, metadata
from store.db.write.inserts import insert_values

_MODULUS = 1 << 256
_READ_ROWS = 5000


def table_columns(table: str) -> tuple[str, ...]:
    return tuple(c.name for c in metadata.tables[table].columns)


@dataclass
class RowsDigest:
    """How many rows, and the multiset hash of their values (each row in column order)."""

    rows: int = 0
    total: int = 0

    def add(self, rows: Iterable[Sequence[Any]]) -> None:
        total, sha256, from_bytes, dumps = self.total, hashlib.sha256, int.from_bytes, orjson.dumps
        count = 0
        for row in rows:
            total += from_bytes(sha256(dumps(tuple(row))).digest(), "big")
            count += 1
        self.rows += count
        self.total = total % _MODULUS


@dataclass
class DerivedWrites:
    """Every derived row a batch inserts, digested per table as it goes. The only way the
    writer inserts into a derived table: what it does not insert here, the proof finds as
    rows read back that were never written."""

    tables: dict[str, RowsDigest] = field(default_factory=dict)
    # Derived tables the store does not have yet (a revision's backfill batch, written
    # before a later revision creates them): neither written nor read back.
    absent: frozenset[str] = frozenset()

    def insert(self, connection: Connection, table: str,
               rows: Sequence[Sequence[Any]]) -> None:
        """`rows` as tuples of every column of `table`, in column order."""
        if table not in DERIVED_TABLES:
            raise ValueError(f"{table} is not a derived table (record_kinds.DERIVED_TABLES)")
        self.tables.setdefault(table, RowsDigest()).add(rows)
        insert_values(connection, table, table_columns(table), list(map(tuple, rows)))

    def insert_dicts(self, connection: Connection, table: str,
                     rows: Sequence[dict[str, Any]]) -> None:
        columns = table_columns(table)
        self.insert(connection, table, [tuple(row[c] for c in columns) for row in rows])

    def written(self, table: str) -> RowsDigest:
        return self.tables.get(table, RowsDigest())


def batch_rows(table: str, batch_id: int, before_size: int, size: int) -> Select[Any]:
    """The rows of derived `table` that batch `batch_id` wrote, every column in order: by
    batch_id; log_subtrees: those ending past the tree it extended (per level an index range
    on (level, start))."""
    t = metadata.tables[table]
    statement = select(*(t.c[name] for name in table_columns(table)))
    if table != SUBTREES_TABLE:
        return statement.where(t.c.batch_id == batch_id)
    levels = range(SUBTREE_LEVEL, size.bit_length() + 1)
    return statement.where(or_(false(), *(
        and_(log_subtrees.c.level == level, log_subtrees.c.start > before_size - (1 << level))
        for level in levels)))


def read_back(connection: Connection, table: str, batch_id: int, before_size: int,
              size: int) -> RowsDigest:
    """The digest of the rows batch `batch_id` has in `table`, as stored now."""
    found = RowsDigest()
    # SQLite's own cursor reads a Boolean as 0 or 1: read it back as the bool written.
    flags = [i for i, c in enumerate(metadata.tables[table].columns)
             if isinstance(c.type, Boolean)]
    for rows in row_chunks_read(connection, batch_rows(table, batch_id, before_size, size),
                                _READ_ROWS):
        if flags:
            rows = [tuple(bool(v) if i in flags and v is not None else v
                          for i, v in enumerate(row)) for row in rows]
        found.add(rows)
    return found
