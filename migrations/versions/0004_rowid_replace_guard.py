"""SQLite: the insert guards also refuse a row aimed at a stored rowid.

A table whose key is not an INTEGER PRIMARY KEY keeps a hidden rowid. `REPLACE INTO t
(rowid, ...)` with a stored rowid and a fresh key meets only the rowid conflict, and REPLACE
deletes the stored row without firing delete triggers (recursive_triggers is off in other
tools). The guard now checks the rowid too. PostgreSQL has no REPLACE: nothing to do there.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# The tables with a hidden rowid, and their keys (as revisions 0001-0003 guard them).
_KEYS: dict[str, tuple[str, ...]] = {
    "contract_assessments": ("assessment_id",),
    "contract_residuals": ("residual_id",),
    "residual_occurrences": ("assessment_id", "ordinal"),
    "surface_records": ("surface_id",),
    "surface_occurrences": ("occurrence_id",),
    "residual_tallies": ("batch_id", "ordinal"),
}


def _guard(table: str, key: tuple[str, ...], *, rowid: bool) -> str:
    match = " AND ".join(f"{column} = NEW.{column}" for column in key)
    conditions = [f"EXISTS (SELECT 1 FROM {table} WHERE {match})"]
    if rowid:
        # NEW.rowid is -1 when the rowid is left to SQLite, as every writer of this store does.
        conditions.append(f"EXISTS (SELECT 1 FROM {table} WHERE rowid = NEW.rowid)")
    return (
        f"CREATE TRIGGER {table}_append_only_insert BEFORE INSERT ON {table} "
        f"WHEN {' OR '.join(conditions)} "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: a row with this key exists'); END"
    )


def _replace_guards(*, rowid: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table, key in _KEYS.items():
        op.execute(f"DROP TRIGGER {table}_append_only_insert")
        op.execute(_guard(table, key, rowid=rowid))


def upgrade() -> None:
    _replace_guards(rowid=True)


def downgrade() -> None:
    _replace_guards(rowid=False)
