"""Every unique value guarded: SQLite insert guards v3, PostgreSQL's one origin row.

SQLite: `REPLACE INTO tree_heads` with a stored tree_size and a fresh batch_id met only the
UNIQUE tree_size, and REPLACE deleted that head without firing a delete trigger; an explicit
rowid (`INSERT INTO log_origin(rowid, origin) VALUES (-5, ...)`) put a row ahead of the
stored one. Every insert guard now refuses a row meeting any unique value of its table and
any explicit rowid of a table with a hidden rowid; log_origin refuses a second row.
PostgreSQL: a unique index on a constant lets log_origin hold one row only (a store holding
two already fails this revision, changing nothing). Triggers are dropped and created by name,
no batch mode: nothing else of the tables changes.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04
"""

from __future__ import annotations

from alembic import op
from append_only import sqlite_insert_guard_v3

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# At revision 0007 (frozen here): key, other unique columns, whether the rowid is hidden.
_TABLES: dict[str, tuple[tuple[str, ...], tuple[tuple[str, ...], ...], bool]] = {
    "ingest_batches": (("batch_id",), (), False),
    "contract_assessments": (("assessment_id",), (), True),
    "contract_residuals": (("residual_id",), (), True),
    "residual_occurrences": (("assessment_id", "ordinal"), (), True),
    "surface_records": (("surface_id",), (), True),
    "surface_occurrences": (("occurrence_id",), (), True),
    "turns": (("turn_key",), (), True),
    "residual_tallies": (("batch_id", "ordinal"), (), True),
    "log_subtrees": (("level", "start"), (), True),
    "tree_heads": (("batch_id",), (("tree_size",),), False),
    "log_origin": (("origin",), (), True),
}
_V1_GUARDED = {"ingest_batches"}  # as revision 0001 left it; every other table: version 2
PG_ORIGIN_INDEX = "uq_log_origin_one_row"


def _v2(table: str, key: tuple[str, ...], *, rowid: bool) -> str:
    match = " AND ".join(f"{column} = NEW.{column}" for column in key)
    condition = f"EXISTS (SELECT 1 FROM {table} WHERE {match})"
    if rowid:
        condition += f" OR EXISTS (SELECT 1 FROM {table} WHERE rowid = NEW.rowid)"
    return (f"CREATE TRIGGER {table}_append_only_insert BEFORE INSERT ON {table} "
            f"WHEN {condition} "
            f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: a row with this key exists'); "
            "END")


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"CREATE UNIQUE INDEX {PG_ORIGIN_INDEX} ON log_origin ((true))")
        return
    for table, (key, unique, rowid) in _TABLES.items():
        op.execute(f"DROP TRIGGER {table}_append_only_insert")
        op.execute(sqlite_insert_guard_v3(table, key, unique=unique, rowid=rowid,
                                          single_row=table == "log_origin"))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP INDEX {PG_ORIGIN_INDEX}")
        return
    for table, (key, _, _hidden) in _TABLES.items():
        op.execute(f"DROP TRIGGER {table}_append_only_insert")
        op.execute(_v2(table, key, rowid=table not in _V1_GUARDED))
