"""Sighting counts name each record by its seq, not its id: a record's seq is its leaf's
position, unique in the log, and a few bytes where the 64-character id was held four times
per row (the table, its key and each of its two indexes: 186 of a 1M store's 1,293 MiB, 46
MiB after).

`sighting_counts` is derived (revision 0010): no leaf, tree head or ledgered row changes. Its
rows are counted afresh from the sightings, as revision 0010's backfill counts them, into a
table of the new layout, key (batch_id, record_seq), which then takes the old one's name,
indexes and append-only guards (SQLite: UPDATE and DELETE raise, the
version 3 insert guard refuses a stored key and any explicit rowid; PostgreSQL: UPDATE, DELETE
and TRUNCATE raise). The whole table is created, not altered in batch mode (which would drop
the triggers). Counted, not copied: revision 0012's backfill batch, written by the writer of
this revision on a store whose table still named records by id, wrote none (a row changed out
of band is not carried over either: the sightings say what each row is). Downgrade copies the
rows back, each record's id joined from its seq.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from append_only import (
    create_append_only_triggers_v2,
    drop_append_only_triggers,
    sqlite_insert_guard_v3,
)
from pending_checks import pending_checks_first

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

TABLE = "sighting_counts"
HELD = "sighting_counts_held"  # the rows, held while the table is made again
KEY = ("batch_id", "record_seq")
OLD_KEY = ("batch_id", "record_id")
COLUMNS = ("batch_id", "record_seq", "record_table", "sightings")
OLD_COLUMNS = ("batch_id", "record_id", "record_table", "record_seq", "sightings")
# At revision 0018 (frozen here): each sightings table, the sighted table and its key column,
# in the order the writer counts them.
_SIGHTED = (("residual_occurrences", "contract_residuals", "residual_id"),
            ("surface_occurrences", "surface_records", "surface_id"))


def _table(*, by_id: bool) -> None:
    """The table in the new layout, or (`by_id`) in revision 0010's: created whole, so that
    its definition is the one a store made at this revision has."""
    position = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    columns = [sa.Column("batch_id", sa.Integer(), autoincrement=False, nullable=False)]
    if by_id:
        columns += [sa.Column("record_id", sa.String(64), nullable=False),
                    sa.Column("record_table", sa.Text(), nullable=False),
                    sa.Column("record_seq", position, nullable=False)]
    else:
        columns += [sa.Column("record_seq", position, autoincrement=False, nullable=False),
                    sa.Column("record_table", sa.Text(), nullable=False)]
    columns.append(sa.Column("sightings", position, nullable=False))
    op.create_table(
        TABLE, *columns,
        sa.PrimaryKeyConstraint(*(OLD_KEY if by_id else KEY), name=f"pk_{TABLE}"),
        sa.ForeignKeyConstraint(["batch_id"], ["ingest_batches.batch_id"],
                                name="fk_sighting_counts_batch_id_ingest_batches",
                                deferrable=True, initially="DEFERRED"),
    )


def _indexes(*, by_id: bool) -> None:
    if by_id:
        op.create_index("ix_sighting_counts_most_seen", TABLE, [
            "record_table", sa.text("sightings DESC"), "record_seq", "batch_id", "record_id"])
        op.create_index("ix_sighting_counts_record_id", TABLE,
                        ["record_id", "batch_id", "sightings"])
    else:
        op.create_index("ix_sighting_counts_most_seen", TABLE, [
            "record_table", sa.text("sightings DESC"), "record_seq", "batch_id"])
        op.create_index("ix_sighting_counts_record_seq", TABLE,
                        ["record_seq", "batch_id", "sightings"])


def _replace(rows: str, order: str, *, by_id: bool) -> None:
    """The table made again in the layout (`by_id`: revision 0010's) holding `rows` (a
    statement giving the layout's columns), inserted in `order` (the writer's: per batch, the
    residuals' rows, then the surfaces'), under its indexes and guards."""
    columns = ", ".join(OLD_COLUMNS if by_id else COLUMNS)
    with pending_checks_first() as postgresql:  # each statement's key checks at its end
        op.execute(f"CREATE TEMPORARY TABLE {HELD} AS {rows}")
        drop_append_only_triggers(TABLE)  # DROP TABLE fires none; named, not left to it
        op.drop_table(TABLE)  # its indexes with it
        _table(by_id=by_id)
        op.execute(f"INSERT INTO {TABLE} ({columns}) SELECT {columns} FROM {HELD} "
                   f"ORDER BY {order}")
        op.execute(f"DROP TABLE {HELD}")
        _indexes(by_id=by_id)  # built once over the rows: cheaper than kept row by row
        key = OLD_KEY if by_id else KEY
        create_append_only_triggers_v2(TABLE, key)  # update, delete (and the v2 insert guard)
        if not postgresql:
            op.execute(f"DROP TRIGGER {TABLE}_append_only_insert")
            op.execute(sqlite_insert_guard_v3(TABLE, key, rowid=True))


_BY_TABLE = "CASE record_table WHEN 'contract_residuals' THEN 0 ELSE 1 END"


def _counted(sightings: str, records: str, key: str) -> str:
    # A record's count after a batch: its sightings in that batch and every earlier one.
    return (
        f"SELECT g.batch_id AS batch_id, r.seq AS record_seq, '{records}' AS record_table, "
        "CAST(sum(g.n) OVER (PARTITION BY g.record_id ORDER BY g.batch_id) AS BIGINT) "
        "AS sightings "
        f"FROM (SELECT {key} AS record_id, batch_id, count(*) AS n FROM {sightings} "
        f"GROUP BY {key}, batch_id) g "
        f"JOIN {records} r ON r.{key} = g.record_id")


def upgrade() -> None:
    _replace(" UNION ALL ".join(_counted(*sighted) for sighted in _SIGHTED),
             f"batch_id, {_BY_TABLE}, record_seq", by_id=False)


def downgrade() -> None:
    _replace(" UNION ALL ".join(
        f"SELECT c.batch_id AS batch_id, r.{key} AS record_id, c.record_table AS record_table, "
        "c.record_seq AS record_seq, c.sightings AS sightings "
        f"FROM {TABLE} c JOIN {records} r ON r.seq = c.record_seq "
        f"WHERE c.record_table = '{records}'" for _, records, key in _SIGHTED),
        f"batch_id, {_BY_TABLE}, record_id", by_id=True)
