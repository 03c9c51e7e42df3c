"""Sighting counts: per batch, each record it sighted with the record's sightings stored by the
end of that batch (revision 0010), kept beside the rows so MOST_SEEN pages walk an index.

A row says: by the end of batch B, the record stored at `record_seq` (its leaf's position, in
`record_table`) had `sightings` sightings. Only records a batch sighted get a row for it; a
record's count as of batch B is its row of the newest batch up to B. `verify` recomputes every
row from the sightings tables.

The writer counts in SQL once the batch's sightings are written, streaming the rows out in
record order a chunk at a time: a batch of a million sightings holds no per-record state here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    Select,
    cast,
    func,
    inspect,
    literal,
    select,
    union_all,
)

from store.db.schema.engine import row_chunks_read
from store.db.schema.record_kinds import SIGHTED
from store.db.schema.tables import metadata, sighting_counts
from store.db.write.derived_rows import DerivedWrites

CHUNK = 10_000  # rows per insert, read from the counting statement as it goes
# A batch that adds at least 1/WHOLE_INDEX_SHARE of the log's leaves as sightings of a table
# counts by walking that table's (record, seq) index whole: no sort, no memory per record.
# A smaller one sorts only its own sightings (found by seq) and counts each record's by index.
WHOLE_INDEX_SHARE = 16

CountRow = tuple[int, int, str, int]  # a row's values, in COUNT_COLUMNS order
COUNT_COLUMNS: tuple[str, ...] = tuple(column.name for column in sighting_counts.columns)


def counts_by_seq(connection: Connection) -> bool:
    """Whether the store's table names each record by its seq alone (revision 0019 on; before,
    a row held the record's id as well): the writer of an earlier revision's backfill batch
    (0012) runs on a store whose table names them by id; 0019 then counts every batch's rows
    afresh, that one's included."""
    if connection.dialect.name == "sqlite":
        names = set(connection.exec_driver_sql(
            "SELECT name FROM pragma_table_info('sighting_counts')").scalars())
    else:
        inspector = inspect(connection)
        names = ({column["name"] for column in inspector.get_columns("sighting_counts")}
                 if inspector.has_table("sighting_counts") else set())
    return bool(names) and "record_id" not in names  # no table: none to write either


def write_sighting_counts(connection: Connection, derived: DerivedWrites, batch_id: int,
                          first_seq: int, new_sightings: dict[str, int], tree_size: int) -> None:
    """Insert the batch's rows (its sightings have seq >= `first_seq`) through `derived`, table
    by table in record id order; `new_sightings`: the batch's new rows per sightings table."""
    for table in SIGHTED:
        new = new_sightings.get(table, 0)
        if new == 0:
            continue
        whole = new * WHOLE_INDEX_SHARE >= tree_size
        statement = _batch_counts(table, batch_id, first_seq, whole=whole)
        for part in row_chunks_read(connection, statement, CHUNK):  # no Row object per row
            derived.insert(connection, "sighting_counts", part)


def _batch_counts(table: str, batch_id: int, first_seq: int, *, whole: bool) -> Select[CountRow]:
    """(batch, record seq, record table, sightings) for every record the batch's rows of
    `table` sighted, in record id order (the order of the sightings' index it groups by): a
    count is all the record's sightings stored so far. One flat aggregate: a subquery would be
    materialized and sorted again."""
    records_name, column = SIGHTED[table]
    records, sightings = metadata.tables[records_name], metadata.tables[table]
    key = sightings.c[column]
    if whole:  # every group, in the index's order; the batch's are those with a new seq
        total: ColumnElement[Any] = func.count()
        statement = select().having(func.max(sightings.c.seq) >= first_seq)
    else:  # the batch's own sightings, grouped; each record's counted by its index range
        other = sightings.alias("every_sighting")
        total = (select(func.count()).where(other.c[column] == key)
                 .correlate(sightings).scalar_subquery())
        statement = select().where(sightings.c.seq >= first_seq)
    return (statement.add_columns(literal(batch_id), func.max(records.c.seq),
                                  literal(records_name), cast(total, BigInteger))
            .join_from(sightings, records, records.c[column] == key)
            .group_by(key).order_by(key))


def recomputed_sighting_counts(connection: Connection, after_batch: int = 0
                               ) -> Iterator[CountRow]:
    """Every row (of the batches after `after_batch`) as the sightings tables say it should
    be, in key order (batch, record seq); running counts include the earlier batches'
    sightings."""
    arms = []
    for table, (records_name, column) in SIGHTED.items():
        records, sightings = metadata.tables[records_name], metadata.tables[table]
        per_batch = (select(sightings.c[column].label("record_id"), sightings.c.batch_id,
                            func.count().label("n"))
                     .group_by(sightings.c[column], sightings.c.batch_id).subquery())
        running = func.sum(per_batch.c.n).over(partition_by=per_batch.c.record_id,
                                               order_by=per_batch.c.batch_id)
        arms.append(select(per_batch.c.batch_id, records.c.seq.label("record_seq"),
                           literal(records_name).label("record_table"),
                           cast(running, BigInteger).label("sightings"))
                    .join_from(per_batch, records, records.c[column] == per_batch.c.record_id))
    every = union_all(*arms).subquery()
    statement = select(every).where(every.c.batch_id > after_batch).order_by(
        every.c.batch_id, every.c.record_seq)
    for rows in row_chunks_read(connection, statement, 10_000):  # SQLite: no Row per row
        for row in rows:
            yield (row[0], row[1], row[2], row[3])


def stored_sighting_counts(connection: Connection, after_batch: int = 0) -> Iterator[CountRow]:
    """Every stored row (of the batches after `after_batch`), in key order (batch, record
    seq)."""
    c = sighting_counts.c
    statement = select(c.batch_id, c.record_seq, c.record_table, c.sightings
                       ).where(c.batch_id > after_batch).order_by(c.batch_id, c.record_seq)
    for rows in row_chunks_read(connection, statement, 10_000):  # SQLite: no Row per row
        for row in rows:
            yield (row[0], row[1], row[2], row[3])
