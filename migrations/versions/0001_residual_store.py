"""Residual store: batches, assessments, residuals, occurrences, ledger; append-only triggers.

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from append_only import (
    create_append_only_triggers,
    create_reject_function,
    drop_append_only_triggers,
    drop_reject_function,
)

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_UNIQUE_KEYS = {
    "ingest_batches": [("batch_id",)],
    "contract_assessments": [("assessment_id",)],
    "contract_residuals": [("residual_id",)],
    "residual_occurrences": [("assessment_id", "ordinal")],
    "ledger": [("seq",)],
}


def upgrade() -> None:
    op.create_table(
        "ingest_batches",
        sa.Column("batch_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("input_sha256", sa.String(64), nullable=False),
        sa.Column("record_type", sa.Text(), nullable=False),
        sa.Column("lines", sa.Integer(), nullable=False),
        sa.Column("new_rows", sa.Integer(), nullable=False),
        sa.Column("present_rows", sa.Integer(), nullable=False),
        sa.Column("rejected_lines", sa.Integer(), nullable=False),
        sa.Column("ingested_at", sa.Text(), nullable=False),
        sa.Column("store_version", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("batch_id", name="pk_ingest_batches"),
    )
    op.create_table(
        "contract_assessments",
        sa.Column("assessment_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("problem_text", sa.Text(), nullable=True),
        sa.Column("source_ref", sa.Text(), nullable=True),
        sa.Column("candidate_organ", sa.Text(), nullable=False),
        sa.Column("runnable", sa.Boolean(create_constraint=False), nullable=False),
        sa.Column("missing_bindings", sa.Text(), nullable=False),
        sa.Column("unresolved_hazards", sa.Text(), nullable=False),
        sa.Column("explanation", sa.Text(), nullable=False),
        sa.Column("evidence_spans", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("assessment_id", name="pk_contract_assessments"),
        sa.ForeignKeyConstraint(
            ["batch_id"], ["ingest_batches.batch_id"],
            name="fk_contract_assessments_batch_id_ingest_batches",
            deferrable=True, initially="DEFERRED",
        ),
    )
    op.create_table(
        "contract_residuals",
        sa.Column("residual_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("candidate_organ", sa.Text(), nullable=False),
        sa.Column("family_id", sa.Text(), nullable=True),
        sa.Column("residual_kind", sa.Text(), nullable=False),
        sa.Column("residual_code", sa.Text(), nullable=False),
        sa.Column("source_axis", sa.Text(), nullable=False),
        sa.Column("evidence_spans", sa.Text(), nullable=False),
        sa.Column("explanation", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("residual_id", name="pk_contract_residuals"),
        sa.ForeignKeyConstraint(
            ["batch_id"], ["ingest_batches.batch_id"],
            name="fk_contract_residuals_batch_id_ingest_batches",
            deferrable=True, initially="DEFERRED",
        ),
    )
    for column in ("residual_kind", "source_axis", "candidate_organ", "family_id",
                   "residual_code"):
        op.create_index(f"ix_contract_residuals_{column}_seq", "contract_residuals",
                        [column, "seq"])
    op.create_table(
        "residual_occurrences",
        sa.Column("assessment_id", sa.String(64), nullable=False),
        sa.Column("ordinal", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("residual_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("assessment_id", "ordinal", name="pk_residual_occurrences"),
        sa.ForeignKeyConstraint(
            ["assessment_id"], ["contract_assessments.assessment_id"],
            name="fk_residual_occurrences_assessment_id_contract_assessments",
            deferrable=True, initially="DEFERRED",
        ),
        sa.ForeignKeyConstraint(
            ["residual_id"], ["contract_residuals.residual_id"],
            name="fk_residual_occurrences_residual_id_contract_residuals",
            deferrable=True, initially="DEFERRED",
        ),
        sa.ForeignKeyConstraint(
            ["batch_id"], ["ingest_batches.batch_id"],
            name="fk_residual_occurrences_batch_id_ingest_batches",
            deferrable=True, initially="DEFERRED",
        ),
    )
    op.create_index("ix_residual_occurrences_residual_id_seq", "residual_occurrences",
                    ["residual_id", "seq"])
    op.create_table(
        "ledger",
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("table_name", sa.Text(), nullable=False),
        sa.Column("row_key", sa.Text(), nullable=False),
        sa.Column("row_hash", sa.String(64), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("chain_hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_ledger"),
    )
    for table in ("ingest_batches", "contract_assessments", "contract_residuals",
                  "residual_occurrences"):
        op.create_index(f"ix_{table}_seq", table, ["seq"])
    create_reject_function()
    for table, keys in _UNIQUE_KEYS.items():
        create_append_only_triggers(table, keys)


def downgrade() -> None:
    for table in _UNIQUE_KEYS:
        drop_append_only_triggers(table)
    drop_reject_function()
    for table in ("ledger", "residual_occurrences", "contract_residuals",
                  "contract_assessments", "ingest_batches"):
        op.drop_table(table)
