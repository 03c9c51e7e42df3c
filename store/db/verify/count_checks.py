"""`verify`'s tallies and sighting counts from one read of the sightings: both are sums over
the same groups (a record's sightings in a batch), so the statement that recomputes the
sighting counts also carries each residual's taxonomy and its batch's count, which the
residual tallies' occurrences add up. The comparisons and their problems are
derived_checks' own; the tallies' problems come first, as verify reports them.

Reading residual_occurrences once instead of twice (a tally joined every occurrence to its
residual again) was 14.3 s of CPU down to 5.3 s at 1M occurrences (issue 34)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import (
    BigInteger,
    Connection,
    Integer,
    String,
    Subquery,
    cast,
    func,
    literal,
    null,
    select,
    text,
    union_all,
)

from store.db.schema.engine import row_chunks_read
from store.db.schema.record_kinds import SIGHTED
from store.db.schema.tables import metadata
from store.db.schema.tally_tables import TALLY_DIMENSIONS
from store.db.verify.derived_checks import compared_sighting_counts, compared_tallies
from store.db.verify.problems import Problem
from store.db.write.sighting_counts import CountRow, stored_sighting_counts
from store.db.write.tallies import BatchTally, added_residuals, in_batch_order, stored_tallies

TALLIED = "contract_residuals"  # the records whose occurrences the tallies count
MAX_NAMED = 20  # sighting count problems kept (verify reports no more of them)


def _per_batch(connection: Connection, table: str, column: str) -> Subquery:
    """Each record's sightings in each batch (record_id, batch_id, n)."""
    if connection.dialect.name == "sqlite":
        # The table read whole in its own order, then grouped: through the (record, seq)
        # index SQLite fetched every row's batch_id at random and sorted all the same.
        return text(f'SELECT "{column}" AS record_id, batch_id, count(*) AS n FROM "{table}" '
                    f'NOT INDEXED GROUP BY "{column}", batch_id').columns(
            record_id=String, batch_id=Integer, n=Integer).subquery()
    sightings = metadata.tables[table]
    return (select(sightings.c[column].label("record_id"), sightings.c.batch_id,
                   func.count().label("n"))
            .group_by(sightings.c[column], sightings.c.batch_id).subquery())


def _recomputed(connection: Connection, after_batch: int) -> Iterator[tuple[Any, ...]]:
    """recomputed_sighting_counts' rows (the batches after `after_batch`, in key order), each
    followed by its record's TALLY_DIMENSIONS and the batch's own sightings of it (residuals;
    nulls for other records)."""
    arms = []
    for table, (records_name, column) in SIGHTED.items():
        records = metadata.tables[records_name]
        per_batch = _per_batch(connection, table, column)
        running = func.sum(per_batch.c.n).over(partition_by=per_batch.c.record_id,
                                               order_by=per_batch.c.batch_id)
        tallied = records_name == TALLIED
        arms.append(select(per_batch.c.batch_id, records.c.seq.label("record_seq"),
                           literal(records_name).label("record_table"),
                           cast(running, BigInteger).label("sightings"),
                           *((records.c[name] if tallied else null()).label(name)
                             for name in TALLY_DIMENSIONS),
                           (per_batch.c.n if tallied else null()).label("n"))
                    .join_from(per_batch, records, records.c[column] == per_batch.c.record_id))
    every = union_all(*arms).subquery()
    statement = (select(every).where(every.c.batch_id > after_batch)
                 .order_by(every.c.batch_id, every.c.record_seq))
    for rows in row_chunks_read(connection, statement, 10_000):  # SQLite: no Row per row
        yield from map(tuple, rows)


def count_problems(connection: Connection, after_batch: int = 0) -> Iterator[Problem]:
    """tally_problems then sighting_count_problems (the first MAX_NAMED), the batches after
    `after_batch`, with one read of the sightings."""
    tallies = added_residuals(connection, after_batch)
    width = len(TALLY_DIMENSIONS)

    def expected() -> Iterator[CountRow]:
        for row in _recomputed(connection, after_batch):
            if row[2] == TALLIED:
                tally = tallies.get(row[0]) or tallies.setdefault(row[0], BatchTally())
                tally.add(tuple(row[4:4 + width]), occurrences=row[4 + width])
            yield (row[0], row[1], row[2], row[3])

    sightings: list[Problem] = []
    for problem in compared_sighting_counts(expected(),
                                            stored_sighting_counts(connection, after_batch)):
        if len(sightings) < MAX_NAMED:
            sightings.append(problem)  # read on: the tallies need every row
    yield from compared_tallies(stored_tallies(connection, after_batch), in_batch_order(tallies))
    yield from sightings
