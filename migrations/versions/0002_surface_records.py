"""Surface records (ADR-0052 provenance) and their occurrences; append-only triggers.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from append_only import create_append_only_triggers, drop_append_only_triggers

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_TABLES = ("surface_records", "surface_occurrences")


def _batch_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["batch_id"], ["ingest_batches.batch_id"],
        name=f"fk_{table}_batch_id_ingest_batches",
        deferrable=True, initially="DEFERRED",
    )


def upgrade() -> None:
    op.create_table(
        "surface_records",
        sa.Column("surface_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("grounding_source", sa.Text(), nullable=False),
        sa.Column("surface", sa.Text(), nullable=True),
        sa.Column("subject", sa.Text(), nullable=True),
        sa.Column("intent", sa.Text(), nullable=True),
        sa.Column("corpus_id", sa.Text(), nullable=True),
        sa.Column("chain_id", sa.Text(), nullable=True),
        sa.Column("chain_provenance", sa.Text(), nullable=True),
        sa.Column("pack_id", sa.Text(), nullable=True),
        sa.Column("pack_version", sa.Text(), nullable=True),
        sa.Column("connective", sa.Text(), nullable=True),
        sa.Column("object", sa.Text(), nullable=True),
        sa.Column("subject_domains", sa.Text(), nullable=True),
        sa.Column("object_domains", sa.Text(), nullable=True),
        sa.Column("verification", sa.Text(), nullable=False),
        sa.Column("expected_surface", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("surface_id", name="pk_surface_records"),
        _batch_fk("surface_records"),
    )
    for column in ("seq", "grounding_source", "corpus_id", "chain_id", "intent", "subject",
                   "verification"):
        columns = [column] if column == "seq" else [column, "seq"]
        op.create_index(f"ix_surface_records_{'_'.join(columns)}", "surface_records", columns)
    op.create_table(
        "surface_occurrences",
        sa.Column("occurrence_id", sa.String(64), nullable=False),
        sa.Column("surface_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=True),
        sa.Column("turn_id", sa.Text(), nullable=True),
        sa.Column("prompt", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("occurrence_id", name="pk_surface_occurrences"),
        sa.ForeignKeyConstraint(
            ["surface_id"], ["surface_records.surface_id"],
            name="fk_surface_occurrences_surface_id_surface_records",
            deferrable=True, initially="DEFERRED",
        ),
        _batch_fk("surface_occurrences"),
    )
    op.create_index("ix_surface_occurrences_seq", "surface_occurrences", ["seq"])
    op.create_index("ix_surface_occurrences_surface_id_seq", "surface_occurrences",
                    ["surface_id", "seq"])
    create_append_only_triggers("surface_records", [("surface_id",)])
    create_append_only_triggers("surface_occurrences", [("occurrence_id",)])


def downgrade() -> None:
    # The ledger is append-only: dropping ledgered rows would break the chain, so refuse.
    bind = op.get_bind()
    recorded = bind.execute(sa.text(
        "SELECT COUNT(*) FROM ledger WHERE table_name IN ('surface_records', "
        "'surface_occurrences')"
    )).scalar_one()
    if recorded:
        raise RuntimeError(
            f"downgrade below 0002 would drop {recorded} ledgered surface rows and break the "
            "chain; copy the store elsewhere (core-audit copy) and keep it at 0002"
        )
    for table in _TABLES:
        drop_append_only_triggers(table)
    op.drop_table("surface_occurrences")
    op.drop_table("surface_records")
