"""What input lines become, as the writer appends them: the record kinds, each row's column
order (seq, batch_id, then its content), and the references rows make to one another, which
the writer checks per chunk (SQLite no longer checks them row by row during a batch)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from store.db.schema.record_kinds import KINDS_BY_TABLE, RECORD_KINDS, RecordKind
from store.db.schema.tables import ingest_batches
from store.db.write.inserts import APPENDED_PREFIX, content_columns, key_getter
from store.errors import StoreError

# What input lines become (the batch's own row is written by the batch).
INPUT_KINDS: tuple[RecordKind, ...] = tuple(
    k for k in RECORD_KINDS if k.ledgered and k.table is not ingest_batches)
# Each input kind's references to another input kind, (column, table): every foreign key but
# the batch's. SQLite checked them row by row; the writer checks them per chunk instead.
REFERENCES: dict[str, tuple[tuple[str, str], ...]] = {
    kind.name: tuple(sorted((fk.parent.name, fk.column.table.name)
                            for fk in kind.table.foreign_keys
                            if fk.column.table is not ingest_batches))
    for kind in INPUT_KINDS
}


def _check_references_declared() -> None:
    """A reference must name an input kind by its whole key, or the check would miss it."""
    for table, references in REFERENCES.items():
        for column, parent in references:
            kind = KINDS_BY_TABLE.get(parent)
            target = KINDS_BY_TABLE[table].table.c[column].foreign_keys
            if kind not in INPUT_KINDS or [fk.column.name for fk in target] != list(kind.key):
                raise RuntimeError(f"{table}.{column} refers to {parent}, which is not an "
                                   "input record kind keyed by that column alone")


_check_references_declared()

APPENDED_COLUMNS: dict[str, tuple[str, ...]] = {
    kind.name: APPENDED_PREFIX + content_columns(kind.name) for kind in INPUT_KINDS}
# A record's key from its content (content_columns order).
CONTENT_KEYS: dict[str, Callable[[tuple[Any, ...]], tuple[Any, ...]]] = {
    kind.name: key_getter(content_columns(kind.name), kind.key) for kind in INPUT_KINDS}
# Where a one-column key sits in an appended row: the key filters hold those values.
KEY_POSITIONS: dict[str, int] = {
    kind.name: APPENDED_COLUMNS[kind.name].index(kind.key[0])
    for kind in INPUT_KINDS if len(kind.key) == 1}


class BrokenReference(StoreError):
    """A row would refer to a record neither stored nor in its batch: a defect, not bad input."""


# Where each reference's value sits in an appended row (seq, batch_id, *content).
_REFERENCE_POSITIONS: dict[str, tuple[tuple[int, str], ...]] = {
    table: tuple((len(APPENDED_PREFIX) + content_columns(table).index(column), parent)
                 for column, parent in references)
    for table, references in REFERENCES.items()
}


def check_references(inserts: Mapping[str, list[tuple[Any, ...]]],
                     known: Mapping[str, Mapping[tuple[Any, ...], Any]]) -> None:
    """Every reference of the rows to insert (appended rows: seq, batch_id, content) names a
    record in `known` (stored or new)."""
    for table, rows in inserts.items():
        for position, parent in _REFERENCE_POSITIONS[table]:
            records = known[parent]
            for row in rows:
                value = row[position]
                if value is not None and (value,) not in records:
                    raise BrokenReference(f"a {table} row refers to {parent} {value},"
                                          " which is neither stored nor in the batch")
