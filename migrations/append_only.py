"""Append-only trigger DDL for revisions to call. Frozen: revisions must not change meaning.

SQLite: UPDATE and DELETE raise; a BEFORE INSERT guard rejects any insert that would meet
an existing key, because REPLACE deletes without firing delete triggers unless
recursive_triggers is on, and other tools never turn it on.
PostgreSQL: one trigger function rejects UPDATE, DELETE and TRUNCATE.
"""

from __future__ import annotations

from alembic import op

PG_FUNCTION = "core_audit_reject_change"


def _sqlite_statements(table: str, unique_keys: list[tuple[str, ...]]) -> list[str]:
    exists = " OR ".join(
        f"EXISTS (SELECT 1 FROM {table} WHERE "
        + " AND ".join(f"{col} = NEW.{col}" for col in key)
        + ")"
        for key in unique_keys
    )
    return [
        f"CREATE TRIGGER {table}_append_only_update BEFORE UPDATE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: UPDATE rejected'); END",
        f"CREATE TRIGGER {table}_append_only_delete BEFORE DELETE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: DELETE rejected'); END",
        f"CREATE TRIGGER {table}_append_only_insert BEFORE INSERT ON {table} WHEN {exists} "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: a row with this key exists'); END",
    ]


def _pg_statements(table: str) -> list[str]:
    return [
        f"CREATE TRIGGER {table}_append_only_update BEFORE UPDATE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION {PG_FUNCTION}()",
        f"CREATE TRIGGER {table}_append_only_delete BEFORE DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION {PG_FUNCTION}()",
        f"CREATE TRIGGER {table}_append_only_truncate BEFORE TRUNCATE ON {table} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {PG_FUNCTION}()",
    ]


def create_reject_function() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"CREATE OR REPLACE FUNCTION {PG_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION '% is append-only: % rejected', TG_TABLE_NAME, TG_OP "
            "USING ERRCODE = 'restrict_violation'; END $$"
        )


def drop_reject_function() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP FUNCTION IF EXISTS {PG_FUNCTION}()")


def create_append_only_triggers(table: str, unique_keys: list[tuple[str, ...]]) -> None:
    """Version 1 (revisions 0001-0003): the SQLite insert guard checks keys only. Frozen;
    new revisions call `create_append_only_triggers_v2`."""
    dialect = op.get_bind().dialect.name
    statements = (
        _pg_statements(table) if dialect == "postgresql" else _sqlite_statements(table, unique_keys)
    )
    for statement in statements:
        op.execute(statement)


def _sqlite_statements_v2(table: str, key: tuple[str, ...]) -> list[str]:
    match = " AND ".join(f"{column} = NEW.{column}" for column in key)
    # NEW.rowid is -1 when SQLite picks the rowid; a stored rowid means REPLACE would swap rows.
    guard = (f"EXISTS (SELECT 1 FROM {table} WHERE {match}) OR "
             f"EXISTS (SELECT 1 FROM {table} WHERE rowid = NEW.rowid)")
    update, delete, _ = _sqlite_statements(table, [key])
    return [
        update,
        delete,
        f"CREATE TRIGGER {table}_append_only_insert BEFORE INSERT ON {table} WHEN {guard} "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: a row with this key exists'); END",
    ]


def create_append_only_triggers_v2(table: str, key: tuple[str, ...]) -> None:
    """Version 2 (revision 0005 on): as revision 0004 left every table, the SQLite insert
    guard also refuses a row aimed at a stored hidden rowid."""
    dialect = op.get_bind().dialect.name
    statements = _pg_statements(table) if dialect == "postgresql" else _sqlite_statements_v2(
        table, key)
    for statement in statements:
        op.execute(statement)


def drop_append_only_triggers(table: str) -> None:
    dialect = op.get_bind().dialect.name
    ops = ("update", "delete", "truncate") if dialect == "postgresql" else (
        "update", "delete", "insert")
    for name in ops:
        if dialect == "postgresql":
            op.execute(f"DROP TRIGGER IF EXISTS {table}_append_only_{name} ON {table}")
        else:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_append_only_{name}")


def sqlite_insert_guard_v3(table: str, key: tuple[str, ...], *,
                           unique: tuple[tuple[str, ...], ...] = (), rowid: bool = True,
                           single_row: bool = False) -> str:
    """Version 3 (revision 0008 on): the SQLite insert guard refuses an insert that meets a
    stored key or any other unique value (REPLACE deletes through every UNIQUE constraint),
    any explicit rowid on a table with a hidden rowid (NEW.rowid is -1 unless one is given),
    and on a single-row table any second row."""
    keys = (key, *unique)
    conditions = [f"EXISTS (SELECT 1 FROM {table} WHERE "
                  + " AND ".join(f"{column} = NEW.{column}" for column in columns) + ")"
                  for columns in keys]
    if rowid:
        conditions.append("NEW.rowid <> -1")
    if single_row:
        conditions = [f"EXISTS (SELECT 1 FROM {table})", *conditions[1:]]
    return (f"CREATE TRIGGER {table}_append_only_insert BEFORE INSERT ON {table} "
            f"WHEN {' OR '.join(conditions)} "
            f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: a row with this key exists'); "
            "END")
