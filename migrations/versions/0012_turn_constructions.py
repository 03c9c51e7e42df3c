"""Construction evidence: what each Workbench journal line's `construction_evidence` came to
(`turn_constructions`) and the assessments its recorded evidence projects to, in order
(`turn_assessments`): leaves of the log, like the turns they belong to.

Two new tables, created whole (no batch mode: it would drop the triggers), under the
append-only guards every table has (SQLite: UPDATE and DELETE raise, the version 3 insert
guard refuses a stored key and any explicit rowid; PostgreSQL: UPDATE, DELETE and TRUNCATE
raise). No row of an existing table changes, and no leaf or tree head already stored.

Stored journal lines that carry a payload gain their projection here, re-derived from their
stored `line` exactly as ingest derives it: appended as one batch of its own (its source
names this revision) after the newest, so the log grows as an ingest grows it and every
checkpoint issued before stays consistent with it. A store with no such line (CORE's live
path writes none) gets no batch: its log is left as it was.

Downgrade takes the backfill batch back out while it is still the newest batch and no kept
checkpoint covers it (the log is then exactly as it was before the upgrade), and drops the two
tables; it refuses, changing nothing, when they hold rows an ingest wrote (leaves: dropping
them would leave tree heads over missing rows).

Revision ID: 0012
Revises: 0010
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

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_TABLES = {"turn_constructions": ("turn_key",), "turn_assessments": ("turn_key", "ordinal")}
_ASSESSMENT_INDEX = "ix_turn_assessments_assessment_id_seq"


def _create_tables() -> None:
    position = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    batch = sa.ForeignKeyConstraint

    def batch_reference(table: str) -> sa.ForeignKeyConstraint:
        return batch(["batch_id"], ["ingest_batches.batch_id"],
                     name=f"fk_{table}_batch_id_ingest_batches",
                     deferrable=True, initially="DEFERRED")

    op.create_table(
        "turn_constructions",
        sa.Column("turn_key", sa.String(64), nullable=False),
        sa.Column("seq", position, nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("missing_reason", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("turn_key", name="pk_turn_constructions"),
        sa.ForeignKeyConstraint(["turn_key"], ["turns.turn_key"],
                                name="fk_turn_constructions_turn_key_turns",
                                deferrable=True, initially="DEFERRED"),
        batch_reference("turn_constructions"),
    )
    op.create_index("ix_turn_constructions_seq", "turn_constructions", ["seq"])
    op.create_table(
        "turn_assessments",
        sa.Column("turn_key", sa.String(64), nullable=False),
        sa.Column("ordinal", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("assessment_id", sa.String(64), nullable=False),
        sa.Column("seq", position, nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("turn_key", "ordinal", name="pk_turn_assessments"),
        sa.ForeignKeyConstraint(["turn_key"], ["turn_constructions.turn_key"],
                                name="fk_turn_assessments_turn_key_turn_constructions",
                                deferrable=True, initially="DEFERRED"),
        sa.ForeignKeyConstraint(["assessment_id"], ["contract_assessments.assessment_id"],
                                name="fk_turn_assessments_assessment_id_contract_assessments",
                                deferrable=True, initially="DEFERRED"),
        batch_reference("turn_assessments"),
    )
    op.create_index("ix_turn_assessments_seq", "turn_assessments", ["seq"])
    op.create_index(_ASSESSMENT_INDEX, "turn_assessments", ["assessment_id", "seq"])


def upgrade() -> None:
    _create_tables()
    for table, key in _TABLES.items():
        create_append_only_triggers_v2(table, key)  # update, delete (and the v2 insert guard)
        if op.get_bind().dialect.name == "sqlite":
            op.execute(f"DROP TRIGGER {table}_append_only_insert")
            op.execute(sqlite_insert_guard_v3(table, key, rowid=True))
    # The writer of this revision (store.db.write): it knows exactly the tables a store at
    # 0012 has. A later revision adding a leaf table must freeze this step first.
    from store.db.write.stored_constructions import append_stored_constructions

    append_stored_constructions(op.get_bind())


# Frozen: the source the backfill batch carries (store.db.write.stored_constructions).
BACKFILL_SOURCE = "alembic revision 0012: construction evidence of stored journal turns"
# The tables holding the backfill batch's rows, children first; then its derived rows.
_BATCH_TABLES = ("turn_assessments", "turn_constructions", "residual_occurrences",
                 "contract_residuals", "contract_assessments", "residual_tallies",
                 "sighting_counts", "tree_heads", "ingest_batches")


def _refuse(reason: str) -> None:
    raise RuntimeError(f"cannot downgrade below 0012: {reason}")


def _delete_batch(bind: sa.Connection, batch_id: int) -> None:
    """The backfill batch's rows, its subtrees and head: the log back to its size before."""
    before = bind.execute(sa.text(
        "SELECT coalesce(max(tree_size), 0) FROM tree_heads WHERE batch_id < :b"),
        {"b": batch_id}).scalar_one()
    signed = bind.execute(sa.text("SELECT count(*) FROM checkpoints WHERE tree_size > :s"),
                          {"s": before}).scalar_one()
    if signed:
        _refuse(f"{signed} kept checkpoints cover the backfill batch {batch_id}")
    sqlite = bind.dialect.name == "sqlite"
    tables = (*_BATCH_TABLES, "log_subtrees")
    lifted: list[str] = []
    for table in tables:  # the delete guards, lifted inside this transaction only
        name = f"{table}_append_only_delete"
        if sqlite:
            lifted += bind.execute(sa.text(
                "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = :n"),
                {"n": name}).scalars().all()
            op.execute(f"DROP TRIGGER {name}")
        else:
            op.execute(f"ALTER TABLE {table} DISABLE TRIGGER {name}")
    for table in _BATCH_TABLES:
        bind.execute(sa.text(f"DELETE FROM {table} WHERE batch_id = :b"), {"b": batch_id})
    # A subtree ends past the old size only if the batch completed it.
    bind.execute(sa.text("DELETE FROM log_subtrees WHERE start + (1 << level) > :s"),
                 {"s": before})
    if not sqlite:  # the deletes' deferred foreign key checks, now: ALTER TABLE waits for none
        op.execute("SET CONSTRAINTS ALL IMMEDIATE")
    for table in tables:
        if not sqlite:
            op.execute(f"ALTER TABLE {table} ENABLE TRIGGER {table}_append_only_delete")
    for statement in lifted:
        op.execute(statement)


def downgrade() -> None:
    bind = op.get_bind()
    backfill = bind.execute(sa.text("SELECT batch_id FROM ingest_batches WHERE source = :s"),
                            {"s": BACKFILL_SOURCE}).scalars().all()
    for table in _TABLES:
        count = sum(n for batch_id, n in bind.execute(sa.text(
            f"SELECT batch_id, count(*) FROM {table} GROUP BY batch_id"))
            if batch_id not in backfill)
        if count:
            # Leaves an ingest wrote: dropping them would leave tree heads over missing rows.
            _refuse(f"would drop {count} {table} rows, leaves of the log")
    newest = bind.execute(sa.text("SELECT max(batch_id) FROM ingest_batches")).scalar_one()
    for batch_id in backfill:
        if batch_id != newest:
            _refuse(f"the backfill batch {batch_id} is not the newest ({newest})")
        _delete_batch(bind, batch_id)
    for table in reversed(_TABLES):
        drop_append_only_triggers(table)
        op.drop_table(table)
