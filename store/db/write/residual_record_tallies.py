"""The residual tallies one residual at a time (revision 0015, `residual_record_tallies`): per
residual and per batch that stored or sighted it, the residual's facet columns, whether that
batch first stored it, and the sightings of it the batch recorded.

The writer counts a batch's rows in SQL once its sightings are written (as the sighting
counts are), and inserts them through the batch's DerivedWrites: the batch proof compares
their values read back. `verify` derives every row again from the ledgered rows
(`recomputed_record_tallies`) and compares them row for row.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import (
    Connection,
    Executable,
    Integer,
    Select,
    String,
    case,
    exists,
    func,
    literal,
    select,
    text,
    union_all,
)

from store.db.schema.engine import row_chunks_read
from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import residual_occurrences as occurrences_t
from store.db.schema.tally_tables import TALLY_DIMENSIONS, residual_record_tallies
from store.db.write.derived_rows import DerivedWrites

CHUNK = 10_000  # rows per insert, read from the counting statement as it goes
TABLE = str(residual_record_tallies.name)
COLUMNS: tuple[str, ...] = tuple(column.name for column in residual_record_tallies.columns)
RecordTally = tuple[Any, ...]  # a row's values, in COLUMNS order

_DIMENSIONS = [residuals_t.c[name] for name in TALLY_DIMENSIONS]


def _tallies(seen: Any, stored_alone: Select[Any]) -> Select[Any]:
    """Rows from `seen` (residual_id, batch_id, n: a batch's sightings of a residual) joined
    to the residual, and `stored_alone` (residuals a batch stored without sighting them),
    in COLUMNS order, by (record_seq, batch_id)."""
    sighted = (select(residuals_t.c.seq.label("record_seq"), seen.c.batch_id, *_DIMENSIONS,
                      case((residuals_t.c.batch_id == seen.c.batch_id, 1), else_=0)
                      .label("residuals"), seen.c.n.label("occurrences"))
               .join_from(seen, residuals_t, residuals_t.c.residual_id == seen.c.residual_id))
    both = union_all(sighted, stored_alone).subquery("record_tallies")
    return select(*(both.c[name] for name in COLUMNS)).order_by(both.c.record_seq,
                                                               both.c.batch_id)


def _stored_alone(*conditions: Any) -> Select[Any]:
    """Residuals (matching `conditions`) without a sighting in the batch that stored them."""
    o = occurrences_t
    return select(residuals_t.c.seq.label("record_seq"), residuals_t.c.batch_id, *_DIMENSIONS,
                  literal(1).label("residuals"), literal(0).label("occurrences")).where(
        *conditions, ~exists().where(o.c.residual_id == residuals_t.c.residual_id,
                                     o.c.batch_id == residuals_t.c.batch_id))


def batch_record_tallies(batch_id: int, first_seq: int, *, earlier_sighted: bool = True
                         ) -> Select[Any]:
    """The rows of batch `batch_id`, whose rows have seq >= `first_seq`. `earlier_sighted`
    False: the batch sighted no residual stored before it, so its rows are its own residuals'
    alone, read in seq order (no join by id, no sort: half the time)."""
    o = occurrences_t
    if not earlier_sighted:
        sightings = (select(func.count()).where(o.c.residual_id == residuals_t.c.residual_id,
                                                o.c.seq >= first_seq)
                     .correlate(residuals_t).scalar_subquery())
        values = {"record_seq": residuals_t.c.seq, "batch_id": literal(batch_id),
                  "residuals": literal(1), "occurrences": sightings}
        return (select(*(values[name] if name in values else residuals_t.c[name]
                         for name in COLUMNS))
                .where(residuals_t.c.seq >= first_seq).order_by(residuals_t.c.seq))
    seen = (select(o.c.residual_id, literal(batch_id).label("batch_id"),
                   func.count().label("n"))
            .where(o.c.seq >= first_seq).group_by(o.c.residual_id).subquery("seen"))
    return _tallies(seen, _stored_alone(residuals_t.c.seq >= first_seq))


# SQLite: the batch's rows sorted by record_seq as integers alone, their facet columns read
# after the sort (the CROSS JOIN keeps the sorted rows the outer loop, so they come out in
# that order), and the sightings grouped as the (residual_id, seq) index gives them, each
# group's residual looked up once, never held as a table of ids. The statement above
# materialized the groups' 64-character ids and sorted the rows with their five facet texts
# in memory (temp_store=MEMORY): a later batch's peak. Both read the same rows; a residual's
# seq >= first_seq is exactly "this batch stored it" (seqs are leaf indexes, a batch's all
# above the earlier batches').
_SQLITE_LATER_BATCH = text(
    "SELECT "
    + ", ".join({"record_seq": "narrow.record_seq", "batch_id": ":batch_id AS batch_id",
                 "residuals": "narrow.residuals", "occurrences": "narrow.occurrences"}
                .get(name, f"r.{name}") for name in COLUMNS)
    + " FROM ("
    " SELECT record_seq, CASE WHEN record_seq >= :first_seq THEN 1 ELSE 0 END AS residuals,"
    " occurrences FROM ("
    "  SELECT (SELECT seq FROM contract_residuals WHERE residual_id = o.residual_id)"
    "  AS record_seq, count(*) AS occurrences FROM residual_occurrences AS o"
    "  WHERE o.seq >= :first_seq GROUP BY o.residual_id)"
    " UNION ALL"
    " SELECT r.seq, 1, 0 FROM contract_residuals AS r WHERE r.seq >= :first_seq"
    " AND NOT EXISTS (SELECT 1 FROM residual_occurrences AS o"
    "  WHERE o.residual_id = r.residual_id AND o.batch_id = r.batch_id)"
    " ORDER BY 1 LIMIT -1"  # a LIMIT: SQLite sorts here instead of flattening the query
    ") AS narrow CROSS JOIN contract_residuals AS r ON r.seq = narrow.record_seq")


def write_record_tallies(connection: Connection, derived: DerivedWrites, batch_id: int,
                         first_seq: int, *, earlier_sighted: bool = True) -> None:
    """Insert the batch's rows through `derived` (once its sightings are written);
    `earlier_sighted`: whether the batch met a residual an earlier batch stored."""
    statement: Executable
    if earlier_sighted and connection.dialect.name == "sqlite":
        statement = _SQLITE_LATER_BATCH.bindparams(batch_id=batch_id, first_seq=first_seq)
    else:
        statement = batch_record_tallies(batch_id, first_seq, earlier_sighted=earlier_sighted)
    for part in row_chunks_read(connection, statement, CHUNK):
        derived.insert(connection, TABLE, part)  # the driver's rows: no Row object per row


def recomputed_record_tallies(connection: Connection, after_batch: int = 0
                              ) -> Iterator[RecordTally]:
    """Every row of the batches after `after_batch` as the ledgered rows give it, by
    (record_seq, batch_id)."""
    if connection.dialect.name == "sqlite":
        statement = _sqlite_recomputed(after_batch)
    else:
        o = occurrences_t
        seen = (select(o.c.residual_id, o.c.batch_id, func.count().label("n"))
                .where(o.c.batch_id > after_batch)
                .group_by(o.c.residual_id, o.c.batch_id).subquery("seen"))
        statement = _tallies(seen, _stored_alone(residuals_t.c.batch_id > after_batch))
    yield from _tuples(connection, statement)


def _tuples(connection: Connection, statement: Select[Any]) -> Iterator[RecordTally]:
    """The statement's rows as tuples, CHUNK at a time (SQLite: the driver's own, no
    SQLAlchemy row per row)."""
    for rows in row_chunks_read(connection, statement, CHUNK):
        yield from map(tuple, rows)


def _sqlite_recomputed(after_batch: int) -> Select[Any]:
    """recomputed_record_tallies' statement on SQLite: the sightings read whole in the table's
    own order and grouped once, and the residuals stored without a sighting found among those
    groups. Through the (residual, seq) index SQLite fetched every row's batch_id at random,
    and looked up each residual's sightings in the table again: 7.8 -> 5.0 s CPU at 1M
    occurrences (issue 34)."""
    seen = text("SELECT residual_id, batch_id, count(*) AS n FROM residual_occurrences "
                "NOT INDEXED WHERE batch_id > :after GROUP BY residual_id, batch_id").bindparams(
        after=after_batch).columns(residual_id=String, batch_id=Integer, n=Integer).cte("seen")
    return _tallies(seen, select(
        residuals_t.c.seq.label("record_seq"), residuals_t.c.batch_id, *_DIMENSIONS,
        literal(1).label("residuals"), literal(0).label("occurrences")).where(
        residuals_t.c.batch_id > after_batch,
        ~exists().where(seen.c.residual_id == residuals_t.c.residual_id,
                        seen.c.batch_id == residuals_t.c.batch_id)))


def stored_record_tallies(connection: Connection, after_batch: int = 0
                          ) -> Iterator[RecordTally]:
    """Every stored row of the batches after `after_batch`, by (record_seq, batch_id)."""
    t = residual_record_tallies.c
    statement = (select(*(t[name] for name in COLUMNS)).where(t.batch_id > after_batch)
                 .order_by(t.record_seq, t.batch_id))
    yield from _tuples(connection, statement)


def record_tally_problems(connection: Connection, after_batch: int = 0
                          ) -> Iterator[tuple[RecordTally | None, RecordTally | None]]:
    """(expected, stored) for each row that differs, is missing (stored None) or was added
    out of band (expected None), merging both streams in key order."""
    expected = recomputed_record_tallies(connection, after_batch)
    stored = stored_record_tallies(connection, after_batch)
    want, have = next(expected, None), next(stored, None)
    while want is not None or have is not None:
        if have is None or (want is not None and want[:2] < have[:2]):
            yield want, None
            want = next(expected, None)
        elif want is None or have[:2] < want[:2]:
            yield None, have
            have = next(stored, None)
        else:
            if have != want:
                yield want, have
            want, have = next(expected, None), next(stored, None)

