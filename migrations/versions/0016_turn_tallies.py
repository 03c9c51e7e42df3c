"""Turn tallies: per batch, the turns it added per (kind, grounding source, epistemic state,
normative clearance, trace integrity, CORE hour), so a turn group or a CORE-time histogram
sums a few rows per batch instead of reading every turn (each holds CORE's verbatim line).

`turn_tallies` is derived, like `residual_tallies`: not leaves of the log, written by the
writer in the batch's transaction (under its value proof), recomputed by `verify`, and
backfilled here from the stored turns and their turn_fields (one statement). It is created
whole (no batch mode: it would drop the triggers) under the append-only guards every table
has (SQLite: UPDATE and DELETE raise, the version 3 insert guard of revision 0008 refuses a
stored key and any explicit rowid; PostgreSQL: UPDATE, DELETE and TRUNCATE raise). No row of
an existing table changes. Downgrade drops the table (derived rows only).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from append_only import (
    create_append_only_triggers_v2,
    drop_append_only_triggers,
    sqlite_insert_guard_v3,
)

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

TABLE = "turn_tallies"
KEY = ("batch_id", "ordinal")
# Frozen here: the turn columns a tally groups by, in its sort order, and CORE's hour.
_COLUMNS = ("kind", "grounding_source", "epistemic_state", "normative_clearance",
            "trace_integrity")
_HOUR = 3_600_000_000  # microseconds
_BACKFILL = (
    f"SELECT t.batch_id, {', '.join(f't.{c}' for c in _COLUMNS)}, f.core_time / {_HOUR}, "
    "count(*) FROM turns t LEFT JOIN turn_fields f ON f.turn_key = t.turn_key "
    f"GROUP BY t.batch_id, {', '.join(f't.{c}' for c in _COLUMNS)}, f.core_time / {_HOUR}")


def _order(combo: tuple[Any, ...]) -> tuple[Any, ...]:
    # A tally's ordinal follows this order (per value, a null first); the writer uses the same.
    return tuple((0, "") if value is None else (1, value) for value in combo)


def _backfill(bind: sa.Connection) -> list[dict[str, Any]]:
    counts: dict[int, dict[tuple[Any, ...], int]] = {}
    for batch_id, *combo, count in bind.execute(sa.text(_BACKFILL)):
        combo = [*combo[:-1], None if combo[-1] is None else int(combo[-1])]
        counts.setdefault(batch_id, {})[tuple(combo)] = int(count)
    rows = []
    for batch_id in sorted(counts):
        ordered = sorted(counts[batch_id], key=_order)
        rows += [{"batch_id": batch_id, "ordinal": ordinal,
                  **dict(zip((*_COLUMNS, "core_hour"), combo, strict=True)),
                  "turns": counts[batch_id][combo]}
                 for ordinal, combo in enumerate(ordered, start=1)]
    return rows


def upgrade() -> None:
    table = op.create_table(
        TABLE,
        sa.Column("batch_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("ordinal", sa.Integer(), autoincrement=False, nullable=False),
        *(sa.Column(name, sa.Text(), nullable=name not in ("kind", "grounding_source"))
          for name in _COLUMNS),
        sa.Column("core_hour", sa.BigInteger(), nullable=True),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint(*KEY, name="pk_turn_tallies"),
        sa.ForeignKeyConstraint(["batch_id"], ["ingest_batches.batch_id"],
                                name="fk_turn_tallies_batch_id_ingest_batches",
                                deferrable=True, initially="DEFERRED"),
    )
    rows = _backfill(op.get_bind())
    if rows:
        op.bulk_insert(table, rows)
    create_append_only_triggers_v2(TABLE, KEY)  # update, delete (and the v2 insert guard)
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"DROP TRIGGER {TABLE}_append_only_insert")
        op.execute(sqlite_insert_guard_v3(TABLE, KEY, rowid=True))


def downgrade() -> None:
    # Derived rows only: dropping them loses nothing the ledger holds.
    drop_append_only_triggers(TABLE)
    op.drop_table(TABLE)
