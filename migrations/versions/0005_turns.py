"""CORE turns (Workbench journal, ChatRuntime and TurnEvent lines) and how each teaching
surface was verified: its form, hops, candidate chains, stripped prefix and the corpus and
pack files it was checked against.

Columns added to existing tables are nullable and plain `ALTER TABLE ... ADD COLUMN` (no
batch mode, so SQLite keeps the tables and their triggers); rows stored before this revision
keep every value and id.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from append_only import create_append_only_triggers_v2, drop_append_only_triggers

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_SURFACE_COLUMNS = ("surface_form", "hops", "hop_chain_ids", "candidate_chain_ids",
                    "surface_prefix", "checked_against")


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    target_table = target.split(".")[0]
    return sa.ForeignKeyConstraint(
        [column], [target], name=f"fk_{table}_{column}_{target_table}",
        deferrable=True, initially="DEFERRED",
    )


def upgrade() -> None:
    for column in _SURFACE_COLUMNS:
        kind = sa.Integer() if column == "hops" else sa.Text()
        op.add_column("surface_records", sa.Column(column, kind, nullable=True))
    op.create_index("ix_surface_records_surface_form_seq", "surface_records",
                    ["surface_form", "seq"])
    op.add_column("surface_occurrences", sa.Column("turn_key", sa.String(64), nullable=True))
    op.create_table(
        "turns",
        sa.Column("turn_key", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("turn_id", sa.Integer(), nullable=True),
        sa.Column("prompt", sa.Text(), nullable=True),
        sa.Column("timestamp", sa.Text(), nullable=True),
        sa.Column("grounding_source", sa.Text(), nullable=False),
        sa.Column("epistemic_state", sa.Text(), nullable=True),
        sa.Column("normative_clearance", sa.Text(), nullable=True),
        sa.Column("normative_detail", sa.Text(), nullable=True),
        sa.Column("verdict_identity", sa.Text(), nullable=True),
        sa.Column("verdict_safety", sa.Text(), nullable=True),
        sa.Column("verdict_ethics", sa.Text(), nullable=True),
        sa.Column("refusal_emitted", sa.Boolean(create_constraint=False), nullable=True),
        sa.Column("hedge_injected", sa.Boolean(create_constraint=False), nullable=True),
        sa.Column("trace_hash", sa.Text(), nullable=True),
        sa.Column("trace_integrity", sa.Text(), nullable=True),
        sa.Column("journal_digest", sa.Text(), nullable=True),
        sa.Column("surface_id", sa.String(64), nullable=False),
        sa.Column("line", sa.Text(), nullable=False),
        sa.Column("line_number", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("turn_key", name="pk_turns"),
        _fk("turns", "batch_id", "ingest_batches.batch_id"),
        _fk("turns", "surface_id", "surface_records.surface_id"),
    )
    op.create_index("ix_turns_seq", "turns", ["seq"])
    for column in ("grounding_source", "epistemic_state", "normative_clearance", "surface_id"):
        op.create_index(f"ix_turns_{column}_seq", "turns", [column, "seq"])
    create_append_only_triggers_v2("turns", ("turn_key",))


def downgrade() -> None:
    bind = op.get_bind()
    ledgered = bind.execute(sa.text(
        "SELECT count(*) FROM ledger WHERE table_name = 'turns'")).scalar_one()
    if ledgered:
        # Dropping ledgered rows would break the chain: refuse, as revision 0002 does.
        raise RuntimeError(f"cannot downgrade below 0005: would drop {ledgered} ledgered turns")
    drop_append_only_triggers("turns")
    op.drop_table("turns")
    # SQLite cannot drop a column without copying the table (which drops its triggers),
    # and a column that holds a value is part of a ledgered row: leave the added columns
    # only where they are all null, and refuse otherwise.
    held = bind.execute(sa.text(
        "SELECT count(*) FROM surface_records WHERE "
        + " OR ".join(f"{c} IS NOT NULL" for c in _SURFACE_COLUMNS)
        + " OR surface_id IN (SELECT surface_id FROM surface_occurrences"
          " WHERE turn_key IS NOT NULL)")).scalar_one()
    if held:
        raise RuntimeError(f"cannot downgrade below 0005: would drop the verification columns "
                           f"of {held} ledgered surface records")
    op.drop_index("ix_surface_records_surface_form_seq", table_name="surface_records")
    if bind.dialect.name == "postgresql":
        for column in _SURFACE_COLUMNS:
            op.drop_column("surface_records", column)
        op.drop_column("surface_occurrences", "turn_key")
    else:
        # SQLite >= 3.35 drops a column in place (no table copy): triggers stay.
        for column in _SURFACE_COLUMNS:
            op.execute(f"ALTER TABLE surface_records DROP COLUMN {column}")
        op.execute("ALTER TABLE surface_occurrences DROP COLUMN turn_key")
