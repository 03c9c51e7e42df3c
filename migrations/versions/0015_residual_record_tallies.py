"""The residual tallies one residual at a time (`residual_record_tallies`), beside the
residuals' search documents: per residual (by its seq, as its document is keyed) and per batch
that stored or sighted it, its facet columns (kind, axis, organ, family, code), `residuals`
1 if that batch first stored it, and `occurrences` the sightings of it that batch recorded.

A search's facets and groups then sum the matches' narrow rows (found by record_seq, the
full-text index's rowid) instead of reading each matching residual's wide row and each of its
sightings by index: at 1M occurrences, a two-word search's facets went from 174 ms to the
figures in docs/benchmarks.md ("Search").

Derived data, backfilled here from the ledgered rows (as the writer derives each batch's from
now on, and `verify` every row): no leaf, id or tree head changes. The table is created whole
(no batch mode: it would drop the triggers) under the append-only guards every table has.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from append_only import (
    create_append_only_triggers_v2,
    drop_append_only_triggers,
    sqlite_insert_guard_v3,
)

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

TABLE = "residual_record_tallies"
KEY = ("record_seq", "batch_id")
INDEX = "ix_residual_record_tallies_batch_id"
_DIMENSIONS = "r.residual_kind, r.source_axis, r.candidate_organ, r.family_id, r.residual_code"
# Frozen: the rows as the ledgered rows give them at this revision. Each batch's sightings
# of a residual, with whether that batch stored it; and a residual stored by a batch that
# recorded no sighting of it.
_BACKFILL = (
    f"INSERT INTO {TABLE} (record_seq, batch_id, residual_kind, source_axis, "
    "candidate_organ, family_id, residual_code, residuals, occurrences) "
    "SELECT record_seq, batch_id, residual_kind, source_axis, candidate_organ, family_id, "
    "residual_code, residuals, occurrences FROM ("
    f"SELECT r.seq AS record_seq, g.batch_id AS batch_id, {_DIMENSIONS}, "
    "CASE WHEN r.batch_id = g.batch_id THEN 1 ELSE 0 END AS residuals, g.n AS occurrences "
    "FROM (SELECT residual_id, batch_id, count(*) AS n FROM residual_occurrences "
    "GROUP BY residual_id, batch_id) g JOIN contract_residuals r ON r.residual_id = "
    "g.residual_id "
    f"UNION ALL SELECT r.seq, r.batch_id, {_DIMENSIONS}, 1, 0 FROM contract_residuals r "
    "WHERE NOT EXISTS (SELECT 1 FROM residual_occurrences o WHERE o.residual_id = "
    "r.residual_id AND o.batch_id = r.batch_id)) t ORDER BY record_seq, batch_id")


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    position = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        TABLE,
        sa.Column("record_seq", position, autoincrement=False, nullable=False),
        sa.Column("batch_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("residual_kind", sa.Text(), nullable=False),
        sa.Column("source_axis", sa.Text(), nullable=False),
        sa.Column("candidate_organ", sa.Text(), nullable=False),
        sa.Column("family_id", sa.Text(), nullable=True),
        sa.Column("residual_code", sa.Text(), nullable=False),
        sa.Column("residuals", sa.Integer(), nullable=False),
        sa.Column("occurrences", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint(*KEY, name=f"pk_{TABLE}"),
        sa.ForeignKeyConstraint(["batch_id"], ["ingest_batches.batch_id"],
                                name=f"fk_{TABLE}_batch_id_ingest_batches",
                                deferrable=True, initially="DEFERRED"),
    )
    if not sqlite:  # PostgreSQL refuses CREATE INDEX while the rows' deferred FK checks pend
        op.create_index(INDEX, TABLE, ["batch_id"])
    op.execute(_BACKFILL)
    if sqlite:  # built once over the rows: cheaper than kept in order row by row
        op.create_index(INDEX, TABLE, ["batch_id"])
    create_append_only_triggers_v2(TABLE, KEY)  # update, delete (and the v2 insert guard)
    if sqlite:
        op.execute(f"DROP TRIGGER {TABLE}_append_only_insert")
        op.execute(sqlite_insert_guard_v3(TABLE, KEY, rowid=True))


def downgrade() -> None:
    # Derived rows only: dropping them loses nothing the ledger holds.
    drop_append_only_triggers(TABLE)
    op.drop_table(TABLE)
