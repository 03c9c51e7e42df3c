"""PostgreSQL: positions in the log as BIGINT: every table's seq, tree heads' sizes and
stored subtrees' starts.

They count every row ever stored, and PostgreSQL's INTEGER stops at 2**31 - 1: past it
every ingest would fail. SQLite's INTEGER is 64-bit already, so nothing changes there. Each
ALTER rewrites its table and indexes in this revision's transaction; the guards are row
triggers on UPDATE, DELETE and TRUNCATE, which a type change does not fire, and stay as
they are. Downgrading fails (and changes nothing) once a position is past 2**31 - 1.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

# The columns at revision 0006 (frozen here).
_POSITIONS: dict[str, str] = {
    "ingest_batches": "seq",
    "contract_assessments": "seq",
    "contract_residuals": "seq",
    "residual_occurrences": "seq",
    "surface_records": "seq",
    "surface_occurrences": "seq",
    "turns": "seq",
    "tree_heads": "tree_size",
    "log_subtrees": "start",
}


def _retype(kind: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    # A table with deferred foreign key checks pending (rows 0006 wrote in this same
    # transaction) cannot be altered: run those checks now, then defer again (every foreign
    # key of the store is DEFERRABLE INITIALLY DEFERRED).
    op.execute("SET CONSTRAINTS ALL IMMEDIATE")
    for table, column in _POSITIONS.items():
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE {kind}")
    op.execute("SET CONSTRAINTS ALL DEFERRED")


def upgrade() -> None:
    _retype("BIGINT")


def downgrade() -> None:
    _retype("INTEGER")
