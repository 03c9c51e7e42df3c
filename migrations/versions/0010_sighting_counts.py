"""Sighting counts: per batch, each record it sighted with the record's running count, so a
MOST_SEEN page walks an index instead of counting every sighting; and an index on
contract_assessments (candidate_organ, runnable) for the console's assessment facets.

`sighting_counts` is derived, like `residual_tallies`: not leaves of the log, recomputed by
`verify`, backfilled here from the stored sightings (one statement per sighting table). It is
created whole (no batch mode: it would drop the triggers) under the append-only guards every
table has (SQLite: UPDATE and DELETE raise, the version 3 insert guard of revision 0008
refuses a stored key and any explicit rowid; PostgreSQL: UPDATE, DELETE and TRUNCATE raise).
No row of an existing table changes.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from append_only import (
    create_append_only_triggers_v2,
    drop_append_only_triggers,
    sqlite_insert_guard_v3,
)

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

TABLE = "sighting_counts"
KEY = ("batch_id", "record_id")
# At revision 0009 (frozen here): sighting table, the sighted table and its key column.
_SIGHTED = (("residual_occurrences", "contract_residuals", "residual_id"),
            ("surface_occurrences", "surface_records", "surface_id"))
ASSESSMENT_INDEX = "ix_contract_assessments_candidate_organ_runnable"


def _backfill(sightings: str, records: str, key: str) -> str:
    # A record's count after a batch: its sightings in that batch and every earlier one.
    return (
        f"INSERT INTO {TABLE} (batch_id, record_id, record_table, record_seq, sightings) "
        f"SELECT g.batch_id, g.record_id, '{records}', r.seq, "
        "CAST(sum(g.n) OVER (PARTITION BY g.record_id ORDER BY g.batch_id) AS BIGINT) "
        f"FROM (SELECT {key} AS record_id, batch_id, count(*) AS n FROM {sightings} "
        f"GROUP BY {key}, batch_id) g "
        f"JOIN {records} r ON r.{key} = g.record_id "
        "ORDER BY g.batch_id, g.record_id")


def _indexes() -> None:
    op.create_index("ix_sighting_counts_most_seen", TABLE, [
        "record_table", sa.text("sightings DESC"), "record_seq", "batch_id", "record_id"])
    op.create_index("ix_sighting_counts_record_id", TABLE,
                    ["record_id", "batch_id", "sightings"])


def upgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    position = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        TABLE,
        sa.Column("batch_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("record_id", sa.String(64), nullable=False),
        sa.Column("record_table", sa.Text(), nullable=False),
        sa.Column("record_seq", position, nullable=False),
        sa.Column("sightings", position, nullable=False),
        sa.PrimaryKeyConstraint(*KEY, name="pk_sighting_counts"),
        sa.ForeignKeyConstraint(["batch_id"], ["ingest_batches.batch_id"],
                                name="fk_sighting_counts_batch_id_ingest_batches",
                                deferrable=True, initially="DEFERRED"),
    )
    if not sqlite:  # PostgreSQL refuses CREATE INDEX while the rows' deferred FK checks pend
        _indexes()
    for sightings, records, key in _SIGHTED:
        op.execute(_backfill(sightings, records, key))
    if sqlite:  # built once over the rows: cheaper than kept in order row by row
        _indexes()
    op.create_index(ASSESSMENT_INDEX, "contract_assessments", ["candidate_organ", "runnable"])
    create_append_only_triggers_v2(TABLE, KEY)  # update, delete (and the v2 insert guard)
    if sqlite:
        op.execute(f"DROP TRIGGER {TABLE}_append_only_insert")
        op.execute(sqlite_insert_guard_v3(TABLE, KEY, rowid=True))


def downgrade() -> None:
    # Derived rows only: dropping them loses nothing the ledger holds.
    op.drop_index(ASSESSMENT_INDEX, "contract_assessments")
    drop_append_only_triggers(TABLE)
    op.drop_table(TABLE)
