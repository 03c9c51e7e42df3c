"""Residual tallies: per batch, residuals and occurrences added per taxonomy combination.

Derived from the ledgered rows (not ledgered themselves), append-only, and backfilled here
for the batches already stored, so facets and filtered counts sum a few rows per batch.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from append_only import create_append_only_triggers, drop_append_only_triggers

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_DIMENSIONS = ("residual_kind", "source_axis", "candidate_organ", "family_id", "residual_code")
_COLUMNS = ", ".join(f"r.{d}" for d in _DIMENSIONS)


def _order(combo: tuple[Any, ...]) -> tuple[Any, ...]:
    # A tally's ordinal follows this order (a null family first); the writer uses the same.
    kind, axis, organ, family, code = combo
    return (kind, axis, organ, family is not None, family or "", code)


def _backfill(bind: sa.Connection) -> list[dict[str, Any]]:
    totals: dict[tuple[Any, ...], list[int]] = {}
    queries = (
        f"SELECT r.batch_id, {_COLUMNS}, count(*) FROM contract_residuals r "
        f"GROUP BY r.batch_id, {_COLUMNS}",
        f"SELECT o.batch_id, {_COLUMNS}, count(*) FROM residual_occurrences o "
        f"JOIN contract_residuals r ON r.residual_id = o.residual_id "
        f"GROUP BY o.batch_id, {_COLUMNS}",
    )
    for position, query in enumerate(queries):
        for batch_id, *combo, count in bind.execute(sa.text(query)):
            totals.setdefault((batch_id, *combo), [0, 0])[position] += count
    rows: list[dict[str, Any]] = []
    ordinals: dict[int, int] = {}
    for batch_id, *combo in sorted(totals, key=lambda k: (k[0], _order(tuple(k[1:])))):
        ordinals[batch_id] = ordinals.get(batch_id, 0) + 1
        residuals, occurrences = totals[(batch_id, *combo)]
        rows.append({"batch_id": batch_id, "ordinal": ordinals[batch_id],
                     **dict(zip(_DIMENSIONS, combo, strict=True)),
                     "residuals": residuals, "occurrences": occurrences})
    return rows


def upgrade() -> None:
    table = op.create_table(
        "residual_tallies",
        sa.Column("batch_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("ordinal", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("residual_kind", sa.Text(), nullable=False),
        sa.Column("source_axis", sa.Text(), nullable=False),
        sa.Column("candidate_organ", sa.Text(), nullable=False),
        sa.Column("family_id", sa.Text(), nullable=True),
        sa.Column("residual_code", sa.Text(), nullable=False),
        sa.Column("residuals", sa.Integer(), nullable=False),
        sa.Column("occurrences", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("batch_id", "ordinal", name="pk_residual_tallies"),
        sa.ForeignKeyConstraint(
            ["batch_id"], ["ingest_batches.batch_id"],
            name="fk_residual_tallies_batch_id_ingest_batches",
            deferrable=True, initially="DEFERRED",
        ),
    )
    # Before the rows: PostgreSQL refuses CREATE INDEX while their deferred FK checks pend.
    op.create_index("ix_residual_tallies_combo", "residual_tallies",
                    [*_DIMENSIONS, "residuals", "occurrences"])
    rows = _backfill(op.get_bind())
    if rows:
        op.bulk_insert(table, rows)
    create_append_only_triggers("residual_tallies", [("batch_id", "ordinal")])


def downgrade() -> None:
    # Derived rows only: dropping them loses nothing the ledger holds.
    drop_append_only_triggers("residual_tallies")
    op.drop_table("residual_tallies")
