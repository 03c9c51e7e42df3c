"""A journal's turns in CORE-time order: an index on turn_fields (journal_id, core_time,
turn_seq), so a page of one journal's turns in TIME_ASC or TIME_DESC (`turns(filter: {journal:
...}, order: TIME_ASC)`) reads one index range from its cursor instead of every turn of the
journal sorted (the (journal_id, turn_id) index finds the journal, not its order in time).

An index only: no row, leaf, tree head or trigger changes, and no table is rebuilt (no batch
mode, which would drop the triggers). Downgrade drops the index.

PostgreSQL: run in the transaction of earlier revisions that wrote rows (0011's backfill), it
first runs their deferred foreign key checks, as 0007 does before its ALTER TABLE.

Revision ID: 0014
Revises: 0012
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Callable

from alembic import op

revision = "0014"
down_revision = "0012"
branch_labels = None
depends_on = None

_INDEX = "ix_turn_fields_journal_id_core_time_turn_seq"


def _outside_pending_checks(change: Callable[[], None]) -> None:
    """`change` to turn_fields. PostgreSQL refuses to index a table with deferred foreign key
    checks pending (rows an earlier revision wrote in this same transaction): run those checks
    now, then defer again (every foreign key of the store is DEFERRABLE INITIALLY DEFERRED)."""
    postgresql = op.get_bind().dialect.name == "postgresql"
    if postgresql:
        op.execute("SET CONSTRAINTS ALL IMMEDIATE")
    change()
    if postgresql:
        op.execute("SET CONSTRAINTS ALL DEFERRED")


def upgrade() -> None:
    _outside_pending_checks(lambda: op.create_index(
        _INDEX, "turn_fields", ["journal_id", "core_time", "turn_seq"]))


def downgrade() -> None:
    _outside_pending_checks(lambda: op.drop_index(_INDEX, table_name="turn_fields"))
