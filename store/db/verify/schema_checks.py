"""Structural checks: keys, indexes and append-only trigger definitions as the head schema has
them. Someone who can write the database file can drop a key or swap a trigger for a
same-named no-op; comparing names alone would not see it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import Connection, Row, Table, UniqueConstraint, func, inspect, select, text
from sqlalchemy.engine import Inspector

from store.db.schema.guards import (
    PG_FUNCTION,
    PG_FUNCTION_BODY,
    PG_FUNCTION_LANGUAGE,
    expected_pg_guards,
    expected_sqlite_guards,
)
from store.db.schema.tables import metadata
from store.db.verify.problems import Problem

MAX_DUPLICATES = 20  # per table: enough to name them, bounded for a store full of copies

_PG_TRIGGERS = """
SELECT t.tgname AS name, c.relname AS table_name, t.tgtype AS tgtype,
       t.tgenabled::text AS enabled, t.tgqual IS NOT NULL AS has_when,
       coalesce(array_length(t.tgattr::int2[], 1), 0) > 0 AS column_specific,
       t.tgnargs > 0 AS has_arguments, t.tgconstraint <> 0 AS constraint_trigger,
       p.proname AS function, fn.nspname = current_schema() AS function_in_store,
       p.prosrc AS body, l.lanname AS language
FROM pg_trigger t
JOIN pg_class c ON c.oid = t.tgrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_proc p ON p.oid = t.tgfoid
JOIN pg_namespace fn ON fn.oid = p.pronamespace
JOIN pg_language l ON l.oid = p.prolang
WHERE NOT t.tgisinternal AND n.nspname = current_schema()
"""

# pg_trigger.tgenabled: 'O' fires in origin and local sessions, as CREATE TRIGGER leaves it.
_PG_ENABLED = {"D": "is disabled", "R": "fires only in replica sessions (ENABLE REPLICA)",
               "A": "fires in every session (ENABLE ALWAYS), not as created"}


def schema_problems(connection: Connection) -> Iterator[Problem]:
    """Each table's key, its duplicates, its indexes, then every trigger's definition.

    Tables missing altogether are left to the caller (their triggers went with them)."""
    inspector = inspect(connection)
    present = set(inspector.get_table_names())
    for name, table in metadata.tables.items():
        if name not in present:
            continue
        yield from _key_problems(inspector, table)
        columns = {column["name"] for column in inspector.get_columns(name)}
        if columns.issuperset(table.primary_key.columns.keys()):  # else reported as lost
            yield from _duplicate_problems(connection, table)
        yield from _index_problems(inspector, table)
    if connection.dialect.name == "postgresql":
        yield from _pg_trigger_problems(connection, present)
    else:
        yield from _sqlite_trigger_problems(connection, present)


def _columns(columns: Iterable[str]) -> str:
    return ", ".join(columns)


def _key_problems(inspector: Inspector, table: Table) -> Iterator[Problem]:
    expected = [column.name for column in table.primary_key.columns]
    found = inspector.get_pk_constraint(table.name).get("constrained_columns") or []
    if not found:
        yield Problem(None, table.name, "", "primary key is missing")
    elif list(found) != expected:
        yield Problem(None, table.name, "",
                      f"primary key is on ({_columns(found)}), not ({_columns(expected)})")


def _duplicate_problems(connection: Connection, table: Table) -> Iterator[Problem]:
    """A key stored more than once: possible only once its primary key was taken away."""
    key = list(table.primary_key.columns)
    copies = func.count().label("copies")
    query = (select(*key, copies).group_by(*key).having(func.count() > 1)
             .order_by(*key).limit(MAX_DUPLICATES))
    names = "/".join(column.name for column in key)
    for row in connection.execute(query):
        value = "/".join(str(part) for part in row[:-1])
        yield Problem(None, table.name, "", f"{names} {value} is stored {row.copies} times")


def _index_problems(inspector: Inspector, table: Table) -> Iterator[Problem]:
    found = {index["name"]: index for index in inspector.get_indexes(table.name)}
    for index in sorted(table.indexes, key=lambda i: str(i.name)):
        expected = [column.name for column in index.columns]
        stored = found.get(str(index.name))
        if stored is None:
            yield Problem(None, table.name, "", f"index {index.name} is missing")
        elif list(stored["column_names"]) != expected or bool(stored["unique"]) != index.unique:
            yield Problem(None, table.name, "", f"index {index.name} is not on "
                          f"({_columns(expected)}){' unique' if index.unique else ''}")
    uniques = {tuple(u["column_names"]) for u in inspector.get_unique_constraints(table.name)}
    for constraint in table.constraints:
        if isinstance(constraint, UniqueConstraint):
            columns = tuple(column.name for column in constraint.columns)
            if columns not in uniques:
                yield Problem(None, table.name, "",
                              f"unique constraint on ({_columns(columns)}) is missing")


def _sqlite_trigger_problems(connection: Connection, present: set[str]) -> Iterator[Problem]:
    stored = {name: (table, sql) for name, table, sql in connection.execute(
        text("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"))}
    for name, guard in expected_sqlite_guards().items():
        found = stored.pop(name, None)
        if guard.table not in present:
            continue
        if found is None:
            yield Problem(None, guard.table, "", f"append-only trigger {name} is missing")
        elif found[0] != guard.table:
            yield Problem(None, guard.table, "",
                          f"append-only trigger {name} is on table {found[0]} instead")
        elif found[1] != guard.sql:
            yield Problem(None, guard.table, "",
                          f"append-only trigger {name} is not its definition: {found[1]}")
    for name, (table, _) in sorted(stored.items()):
        yield Problem(None, table, "", f"trigger {name} is not one of the store's")


def _pg_trigger_problems(connection: Connection, present: set[str]) -> Iterator[Problem]:
    stored = {row.name: row for row in connection.execute(text(_PG_TRIGGERS))}
    for name, guard in expected_pg_guards().items():
        found = stored.pop(name, None)
        if guard.table not in present:
            continue
        where = f"append-only trigger {name}"
        if found is None:
            yield Problem(None, guard.table, "", f"{where} is missing")
        elif found.table_name != guard.table:
            yield Problem(None, guard.table, "", f"{where} is on table {found.table_name} instead")
        else:
            yield from (Problem(None, guard.table, "", f"{where} {reason}")
                        for reason in _pg_differences(found, guard.tgtype))
    for name, row in sorted(stored.items()):
        yield Problem(None, row.table_name, "", f"trigger {name} is not one of the store's")


def _pg_differences(found: Row[Any], tgtype: int) -> Iterator[str]:
    if found.enabled != "O":
        yield _PG_ENABLED.get(found.enabled, f"has tgenabled {found.enabled!r}, not 'O'")
    if found.tgtype != tgtype:
        yield f"fires on other events (tgtype {found.tgtype}, not {tgtype})"
    if found.has_when or found.column_specific or found.has_arguments:
        yield "has a WHEN condition, a column list or arguments it was not created with"
    if found.constraint_trigger:
        yield "is a constraint trigger (it can be deferred)"
    if found.function != PG_FUNCTION or not found.function_in_store:
        yield f"runs {found.function}(), not this schema's {PG_FUNCTION}()"
    elif found.body != PG_FUNCTION_BODY or found.language != PG_FUNCTION_LANGUAGE:
        yield f"runs {PG_FUNCTION}() whose body was changed (it must reject the change)"
