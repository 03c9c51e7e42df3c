"""Kept checkpoints: every signed checkpoint `core-audit checkpoint --key` issues, and the
witnesses' cosignatures of it, appended beside it as they arrive; never edited.

Two new tables, created whole (no batch mode), each under the append-only guards every
table has (SQLite: UPDATE and DELETE raise, the version 3 insert guard of revision 0008
refuses a stored key and any explicit rowid of a table with a hidden one, so REPLACE cannot
swap a row; PostgreSQL: UPDATE, DELETE and TRUNCATE raise). No row of an existing table
changes.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from append_only import (
    create_append_only_triggers_v2,
    drop_append_only_triggers,
    sqlite_insert_guard_v3,
)

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "checkpoints",
        sa.Column("checkpoint_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("tree_size", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                  nullable=False),
        sa.Column("root_hash", sa.String(64), nullable=False),
        sa.Column("signers", sa.Text(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("checkpoint_id", name="pk_checkpoints"),
    )
    op.create_index("ix_checkpoints_tree_size", "checkpoints", ["tree_size"])
    op.create_table(
        "checkpoint_cosignatures",
        sa.Column("checkpoint_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("witness", sa.Text(), nullable=False),
        sa.Column("line", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("checkpoint_id", "witness", name="pk_checkpoint_cosignatures"),
        sa.ForeignKeyConstraint(["checkpoint_id"], ["checkpoints.checkpoint_id"],
                                name="fk_checkpoint_cosignatures_checkpoint_id_checkpoints",
                                deferrable=True, initially="DEFERRED"),
    )
    # key, and whether SQLite keeps a rowid apart from it (not for one INTEGER key column)
    guarded = {"checkpoints": (("checkpoint_id",), False),
               "checkpoint_cosignatures": (("checkpoint_id", "witness"), True)}
    for table, (key, hidden_rowid) in guarded.items():
        create_append_only_triggers_v2(table, key)  # update, delete (and the v2 insert guard)
        if op.get_bind().dialect.name == "sqlite":
            op.execute(f"DROP TRIGGER {table}_append_only_insert")
            op.execute(sqlite_insert_guard_v3(table, key, rowid=hidden_rowid))


def downgrade() -> None:
    for table in ("checkpoint_cosignatures", "checkpoints"):
        drop_append_only_triggers(table)
        op.drop_table(table)
