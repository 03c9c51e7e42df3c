"""Sighting counts: per batch, each record it sighted with the record's sightings stored by the
end of that batch (revision 0010), kept beside the rows so MOST_SEEN pages walk an index.

A row says: by the end of batch B, record R (stored at `record_seq` in `record_table`) had
`sightings` sightings. Only records a batch sighted get a row for it; a record's count as of
batch B is its row of the newest batch up to B. `verify` recomputes every row from the
sightings tables.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from sqlalchemy import BigInteger, ColumnElement, Connection, cast, func, literal, select, union_all

from store.db.schema.record_kinds import SIGHTED
from store.db.schema.tables import metadata, sighting_counts
from store.db.write.input_kinds import APPENDED_COLUMNS

LOOKUP_CHUNK = 500  # record ids per lookup of their earlier counts
# Where a sighted record's id sits in an appended row (seq, batch_id, *content), per table.
_SIGHTING_KEY = {table: APPENDED_COLUMNS[table].index(column)
                 for table, (_, column) in SIGHTED.items()}
_RECORD_KEY = {records: APPENDED_COLUMNS[records].index(column)
               for records, column in SIGHTED.values()}

CountRow = tuple[int, str, str, int, int]  # a row's values, in COUNT_COLUMNS order
COUNT_COLUMNS: tuple[str, ...] = tuple(column.name for column in sighting_counts.columns)


class BatchSightings:
    """Counts one batch's new sightings per record, and the seq of each record it stores."""

    def __init__(self) -> None:
        self.sighted: dict[str, Counter[str]] = {table: Counter() for table in SIGHTED}
        self.stored: dict[str, dict[str, int]] = {records: {} for records, _ in
                                                  SIGHTED.values()}

    def add(self, table: str, rows: list[tuple[Any, ...]]) -> None:
        """The batch's appended rows of `table` (seq, batch_id, *content)."""
        if not rows:
            return
        position = _SIGHTING_KEY.get(table)
        if position is not None:
            self.sighted[table].update(row[position] for row in rows)
            return
        position = _RECORD_KEY.get(table)
        if position is not None:
            self.stored[table].update((row[position], row[0]) for row in rows)

    def rows(self, connection: Connection, batch_id: int) -> list[CountRow]:
        """The batch's rows, in key order: a record's count is its earlier count (its newest
        row before this batch) plus its sightings in this batch."""
        found: list[CountRow] = []
        for table, (records, _) in SIGHTED.items():
            sighted, stored = self.sighted[table], self.stored[records]
            earlier = _earlier_counts(connection, table, [r for r in sighted if r not in stored])
            for record_id, new in sighted.items():
                seq = stored.get(record_id)
                before = 0
                if seq is None:
                    seq, before = earlier[record_id]
                found.append((batch_id, record_id, records, seq, before + new))
        found.sort()
        return found


def _earlier_counts(connection: Connection, table: str, ids: list[str]
                    ) -> dict[str, tuple[int, int]]:
    """Per record stored before this batch: its seq and its count, from its newest count row
    (or, were that missing, its sightings counted: verify names the missing row)."""
    records_name, column = SIGHTED[table]
    records, sightings = metadata.tables[records_name], metadata.tables[table]
    key, counts = records.c[column], sighting_counts.c
    newest = (select(counts.sightings).where(counts.record_id == key)
              .order_by(counts.batch_id.desc()).limit(1).correlate(records).scalar_subquery())
    counted = (select(func.count()).where(sightings.c[column] == key)
               .correlate(records).scalar_subquery())
    found: dict[str, tuple[int, int]] = {}
    for start in range(0, len(ids), LOOKUP_CHUNK):
        chunk = ids[start:start + LOOKUP_CHUNK]
        statement = select(key, records.c.seq, func.coalesce(newest, counted)).where(
            key.in_(chunk))
        found.update((record_id, (seq, n)) for record_id, seq, n in connection.execute(statement))
    return found


def _bytewise(connection: Connection, column: ColumnElement[str]) -> ColumnElement[str]:
    """Ordered as Python orders str (verify merges two such streams): PostgreSQL's default
    collation may not be."""
    return column.collate("C") if connection.dialect.name == "postgresql" else column


def recomputed_sighting_counts(connection: Connection, after_batch: int = 0
                               ) -> Iterator[CountRow]:
    """Every row (of the batches after `after_batch`) as the sightings tables say it should
    be, in key order (batch, record); running counts include the earlier batches' sightings."""
    arms = []
    for table, (records_name, column) in SIGHTED.items():
        records, sightings = metadata.tables[records_name], metadata.tables[table]
        per_batch = (select(sightings.c[column].label("record_id"), sightings.c.batch_id,
                            func.count().label("n"))
                     .group_by(sightings.c[column], sightings.c.batch_id).subquery())
        running = func.sum(per_batch.c.n).over(partition_by=per_batch.c.record_id,
                                               order_by=per_batch.c.batch_id)
        arms.append(select(per_batch.c.batch_id, per_batch.c.record_id,
                           literal(records_name).label("record_table"),
                           records.c.seq.label("record_seq"),
                           cast(running, BigInteger).label("sightings"))
                    .join_from(per_batch, records, records.c[column] == per_batch.c.record_id))
    every = union_all(*arms).subquery()
    statement = select(every).where(every.c.batch_id > after_batch).order_by(every.c.batch_id,
                                       _bytewise(connection, every.c.record_id))
    for row in connection.execute(statement.execution_options(yield_per=10_000)):
        yield (row[0], row[1], row[2], row[3], row[4])


def stored_sighting_counts(connection: Connection, after_batch: int = 0) -> Iterator[CountRow]:
    """Every stored row (of the batches after `after_batch`), in key order (batch, record)."""
    c = sighting_counts.c
    statement = select(c.batch_id, c.record_id, c.record_table, c.record_seq, c.sightings
                       ).where(c.batch_id > after_batch
                               ).order_by(c.batch_id, _bytewise(connection, c.record_id))
    for row in connection.execute(statement.execution_options(yield_per=10_000)):
        yield (row[0], row[1], row[2], row[3], row[4])
