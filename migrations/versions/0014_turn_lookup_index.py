"""A journal's turns in CORE-time order: an index on turn_fields (journal_id, core_time,
turn_seq), so a page of one journal's turns in TIME_ASC or TIME_DESC (`turns(filter: {journal:
...}, order: TIME_ASC)`) reads one index range from its cursor instead of every turn of the
journal sorted (the (journal_id, turn_id) index finds the journal, not its order in time).

An index only: no row, leaf, tree head or trigger changes, and no table is rebuilt (no batch
mode, which would drop the triggers). Downgrade drops the index.

PostgreSQL: run in the transaction of earlier revisions that wrote rows (0011's backfill), it
first runs their deferred foreign key checks, as 0007 does before its ALTER TABLE.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op
from pending_checks import pending_checks_first

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_INDEX = "ix_turn_fields_journal_id_core_time_turn_seq"


def upgrade() -> None:
    with pending_checks_first():
        op.create_index(_INDEX, "turn_fields", ["journal_id", "core_time", "turn_seq"])


def downgrade() -> None:
    with pending_checks_first():
        op.drop_index(_INDEX, table_name="turn_fields")
