"""The append-only triggers the head schema must carry, definition by definition.

Mirrors exactly what the revisions emit (migrations/append_only.py, revision 0004), so
`verify` compares definitions, not names: a same-named no-op or a moved trigger differs.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Integer, UniqueConstraint

from store.db.schema.record_kinds import APPEND_ONLY_TABLES
from store.db.schema.tables import metadata

PG_FUNCTION = "core_audit_reject_change"
# pg_proc.prosrc of the function revision 0001 creates: the text between its $$ quotes.
PG_FUNCTION_BODY = (" BEGIN RAISE EXCEPTION '% is append-only: % rejected', TG_TABLE_NAME, "
                    "TG_OP USING ERRCODE = 'restrict_violation'; END ")
PG_FUNCTION_LANGUAGE = "plpgsql"

# Tables whose SQLite insert guard is version 3 (revision 0008: every unique value, no
# explicit rowid, one row where a table holds one); a table a later revision adds with the
# version 2 guard (key and stored rowid) is not listed.
SQLITE_V3_GUARDED: frozenset[str] = frozenset({
    "ingest_batches", "contract_assessments", "contract_residuals", "residual_occurrences",
    "surface_records", "surface_occurrences", "turns", "residual_tallies", "log_subtrees",
    "tree_heads", "log_origin", "checkpoints", "checkpoint_cosignatures", "sighting_counts",
    "turn_fields",
    "turn_constructions", "turn_assessments",
    "residual_texts", "surface_texts", "turn_texts", "residual_record_tallies"})
# Tables that hold one row at most: a second one is refused (the guard; PostgreSQL: a unique
# index on a constant) and reported by verify.
SINGLE_ROW_TABLES: frozenset[str] = frozenset({"log_origin"})

SQLITE_OPERATIONS: tuple[str, ...] = ("update", "delete", "insert")
PG_OPERATIONS: tuple[str, ...] = ("update", "delete", "truncate")

# pg_trigger.tgtype bits (PostgreSQL's trigger.h).
_ROW, _BEFORE, _DELETE, _UPDATE, _TRUNCATE = 1, 2, 8, 16, 32
PG_TGTYPE: dict[str, int] = {
    "update": _ROW | _BEFORE | _UPDATE,
    "delete": _ROW | _BEFORE | _DELETE,
    "truncate": _BEFORE | _TRUNCATE,  # statement level: TRUNCATE fires no row triggers
}


@dataclass(frozen=True, slots=True)
class SqliteGuard:
    name: str
    table: str
    sql: str  # exactly as sqlite_master holds it


@dataclass(frozen=True, slots=True)
class PgGuard:
    name: str
    table: str
    tgtype: int


def guard_name(table: str, operation: str) -> str:
    return f"{table}_append_only_{operation}"


def guard_key(table: str) -> tuple[str, ...]:
    """The columns an insert guard matches: the table's primary key, in column order."""
    return tuple(column.name for column in metadata.tables[table].primary_key.columns)


def guard_version(table: str) -> int:
    return 3 if table in SQLITE_V3_GUARDED else 2


def unique_columns(table: str) -> tuple[tuple[str, ...], ...]:
    """The table's unique constraints other than its primary key, in declaration order."""
    return tuple(tuple(column.name for column in constraint.columns)
                 for constraint in metadata.tables[table].constraints
                 if isinstance(constraint, UniqueConstraint))


def hidden_rowid(table: str) -> bool:
    """SQLite keeps a rowid apart from the key unless the key is one INTEGER column."""
    key = list(metadata.tables[table].primary_key.columns)
    return not (len(key) == 1 and isinstance(key[0].type, Integer))


def _matches(table: str, columns: tuple[str, ...]) -> str:
    match = " AND ".join(f"{column} = NEW.{column}" for column in columns)
    return f"EXISTS (SELECT 1 FROM {table} WHERE {match})"


def _sqlite_insert_condition(table: str) -> str:
    if guard_version(table) == 2:
        return (f"{_matches(table, guard_key(table))} OR "
                f"EXISTS (SELECT 1 FROM {table} WHERE rowid = NEW.rowid)")
    conditions = [_matches(table, columns)
                  for columns in (guard_key(table), *unique_columns(table))]
    if hidden_rowid(table):
        conditions.append("NEW.rowid <> -1")
    if table in SINGLE_ROW_TABLES:
        conditions[0] = f"EXISTS (SELECT 1 FROM {table})"
    return " OR ".join(conditions)


def sqlite_guards(table: str) -> list[SqliteGuard]:
    update, delete, insert = (guard_name(table, op) for op in SQLITE_OPERATIONS)
    return [
        SqliteGuard(update, table,
                    f"CREATE TRIGGER {update} BEFORE UPDATE ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: UPDATE rejected'); END"),
        SqliteGuard(delete, table,
                    f"CREATE TRIGGER {delete} BEFORE DELETE ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: DELETE rejected'); END"),
        SqliteGuard(insert, table,
                    f"CREATE TRIGGER {insert} BEFORE INSERT ON {table} "
                    f"WHEN {_sqlite_insert_condition(table)} "
                    f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: "
                    "a row with this key exists'); END"),
    ]


def pg_guards(table: str) -> list[PgGuard]:
    return [PgGuard(guard_name(table, op), table, PG_TGTYPE[op]) for op in PG_OPERATIONS]


def expected_sqlite_guards() -> dict[str, SqliteGuard]:
    return {g.name: g for table in APPEND_ONLY_TABLES for g in sqlite_guards(table)}


def expected_pg_guards() -> dict[str, PgGuard]:
    return {g.name: g for table in APPEND_ONLY_TABLES for g in pg_guards(table)}
