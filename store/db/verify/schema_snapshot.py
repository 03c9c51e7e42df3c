"""The whole schema, compared with what the head revision creates: tables, columns (type,
nullability, default), keys, unique constraints, indexes, foreign keys, views; on PostgreSQL
also persistence (UNLOGGED), row-level security and its policies, rules, and the
functions of the store's schema (body, SECURITY DEFINER, SET options), and same-named
functions elsewhere on the search path that could shadow them.

The expected schema is not written down twice: the revisions are run into a scratch database
(SQLite: in memory; PostgreSQL: a scratch schema inside a transaction that is rolled back),
once per process, and both are read by the same catalog queries. Checking trigger names or
definitions alone proves nothing: a RAISE(IGNORE) trigger, a DO INSTEAD NOTHING rule or a
policy hides rows without touching a trigger of the store's. (Triggers are compared one by
one in schema_checks.py.)
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import Connection, create_engine, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import StaticPool

from store.db.schema.schema_version import alembic_config, head_revision
from store.db.verify.problems import Problem


@dataclass(frozen=True, slots=True)
class SchemaObject:
    table: str  # the table it belongs to (its own name for a table or view)
    what: str  # "column contract_residuals.seq", "index ix_...", "policy p on turns", ...
    definition: str


Snapshot = dict[str, SchemaObject]  # by `what`

_INSUFFICIENT_PRIVILEGE = "42501"
_SPACES = re.compile(r"\s+")


def _normal(sql: str | None) -> str:
    return _SPACES.sub(" ", sql or "").strip()


# --- SQLite ----------------------------------------------------------------------------------


def _sqlite_snapshot(connection: Connection) -> Snapshot:
    found: Snapshot = {}

    def add(table: str, what: str, definition: str) -> None:
        found[what] = SchemaObject(table, what, definition)

    master = connection.exec_driver_sql(
        "SELECT type, name, tbl_name, sql FROM sqlite_master "
        "WHERE type IN ('table', 'index', 'view') AND name NOT LIKE 'sqlite_%' "
        "ORDER BY type, name").all()
    for kind, name, table, sql in master:
        add(table, f"{kind} {name}", _normal(sql))
        if kind != "table":
            continue
        for _cid, column, type_, notnull, default, pk, hidden in connection.exec_driver_sql(
                f'PRAGMA table_xinfo("{name}")'):
            add(name, f"column {name}.{column}",
                f"{type_}{' NOT NULL' if notnull else ''}"
                f"{f' DEFAULT {default}' if default is not None else ''}"
                f"{f' (key part {pk})' if pk else ''}{' hidden' if hidden else ''}")
        for fk in connection.exec_driver_sql(f'PRAGMA foreign_key_list("{name}")'):
            _id, _seq, parent, column, to, on_update, on_delete, match = fk
            add(name, f"foreign key {name}.{column}",
                f"references {parent}({to}) on update {on_update} on delete {on_delete} "
                f"match {match}")
    return found


# --- PostgreSQL ------------------------------------------------------------------------------

_PG_RELATIONS = """
SELECT c.relname, c.relkind::text, c.relpersistence::text, c.relrowsecurity,
       c.relforcerowsecurity, pg_get_viewdef(c.oid) AS view
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
"""
_PG_COLUMNS = """
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull,
       pg_get_expr(d.adbin, d.adrelid) AS default_value, a.attidentity::text,
       a.attgenerated::text
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0
  AND NOT a.attisdropped
"""
_PG_CONSTRAINTS = """
SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) AS definition
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()
"""
_PG_INDEXES = """
SELECT c.relname, i.relname AS index, pg_get_indexdef(x.indexrelid) AS definition
FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()
"""
_PG_RULES = """
SELECT tablename, rulename, definition FROM pg_rules WHERE schemaname = current_schema()
"""
_PG_POLICIES = """
SELECT tablename, policyname, permissive, roles::text, cmd, qual, with_check
FROM pg_policies WHERE schemaname = current_schema()
"""
_PG_FUNCTIONS = """
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS arguments, p.prosrc,
       p.prosecdef, p.proconfig::text AS config, l.lanname, p.provolatile::text,
       p.proleakproof, p.prokind::text
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_language l ON l.oid = p.prolang WHERE n.nspname = current_schema()
"""
_PG_SHADOWS = """
SELECT n.nspname, p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname <> current_schema()
  AND (n.nspname = ANY (current_schemas(false)) OR n.nspname = 'public')
  AND p.proname IN (SELECT p2.proname FROM pg_proc p2
                    JOIN pg_namespace n2 ON n2.oid = p2.pronamespace
                    WHERE n2.nspname = current_schema())
"""

_PERSISTENCE = {"p": "logged", "u": "UNLOGGED", "t": "temporary"}
_KINDS = {"r": "table", "p": "partitioned table", "v": "view", "m": "materialized view",
          "S": "sequence", "f": "foreign table"}


def _pg_snapshot(connection: Connection) -> Snapshot:
    schema = connection.execute(text("SELECT current_schema()")).scalar_one()
    qualified = re.compile(rf'(?<![\w"]){re.escape(schema)}\.|"{re.escape(schema)}"\.')

    def plain(sql: str | None) -> str:
        return _normal(qualified.sub("", sql or ""))

    found: Snapshot = {}

    def add(table: str, what: str, definition: str) -> None:
        found[what] = SchemaObject(table, what, definition)

    for name, kind, persistence, rls, force, view in connection.execute(text(_PG_RELATIONS)):
        label = _KINDS.get(kind, kind)
        add(name, f"{label} {name}", f"{_PERSISTENCE.get(persistence, persistence)}"
            + (f", row-level security {'forced' if force else 'enabled'}" if rls or force else "")
            + (f", AS {plain(view)}" if view else ""))
    for table, column, type_, notnull, default, identity, generated in connection.execute(
            text(_PG_COLUMNS)):
        add(table, f"column {table}.{column}",
            f"{type_}{' NOT NULL' if notnull else ''}"
            f"{f' DEFAULT {plain(default)}' if default is not None else ''}"
            f"{f' identity {identity}' if identity else ''}"
            f"{f' generated {generated}' if generated else ''}")
    for table, name, definition in connection.execute(text(_PG_CONSTRAINTS)):
        add(table, f"constraint {name} on {table}", plain(definition))
    for table, name, definition in connection.execute(text(_PG_INDEXES)):
        add(table, f"index {name}", plain(definition))
    for table, name, definition in connection.execute(text(_PG_RULES)):
        add(table, f"rule {name} on {table}", plain(definition))
    for table, name, permissive, roles, cmd, qual, check in connection.execute(text(_PG_POLICIES)):
        add(table, f"policy {name} on {table}",
            f"{permissive} {cmd} to {roles} using {qual} with check {check}")
    for row in connection.execute(text(_PG_FUNCTIONS)):
        add("schema", f"function {row.proname}({row.arguments})",
            f"{row.lanname} {row.prokind} volatility {row.provolatile}"
            f"{' SECURITY DEFINER' if row.prosecdef else ''}"
            f"{' LEAKPROOF' if row.proleakproof else ''}"
            f"{f' SET {row.config}' if row.config else ''} AS {_normal(row.prosrc)}")
    return found


def _pg_shadow_problems(connection: Connection) -> Iterator[Problem]:
    for schema, name in connection.execute(text(_PG_SHADOWS)):
        yield Problem(None, "schema", "", f"function {name} also exists in schema {schema}: "
                                          "on the search path it can shadow the store's own")


# --- expected and compared -------------------------------------------------------------------


def _expected_sqlite() -> Snapshot:
    from alembic import command  # here: a store open that runs no verify loads no alembic

    engine = create_engine("sqlite://", poolclass=StaticPool)
    try:
        with engine.connect() as connection:
            config = alembic_config("sqlite://")
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            connection.commit()
            return _sqlite_snapshot(connection)
    finally:
        engine.dispose()


def _expected_pg(url: str) -> Snapshot:
    """The revisions run into a scratch schema, read, and rolled back: nothing is kept."""
    from alembic import command

    scratch = f"core_audit_expected_{uuid.uuid4().hex[:16]}"
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            transaction = connection.begin()
            try:
                connection.execute(text(f'CREATE SCHEMA "{scratch}"'))
                connection.execute(text(f'SET LOCAL search_path = "{scratch}"'))
                config = alembic_config(url)
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
                return _pg_snapshot(connection)
            finally:
                transaction.rollback()
    finally:
        engine.dispose()


@functools.cache
def _expected(dialect: str, url: str, head: str) -> Snapshot:
    del head  # part of the cache key only
    return _expected_pg(url) if dialect == "postgresql" else _expected_sqlite()


def expected_snapshot(connection: Connection) -> Snapshot:
    dialect = connection.dialect.name
    url = "" if dialect == "sqlite" else connection.engine.url.render_as_string(
        hide_password=False)
    return _expected(dialect, url, head_revision())


def whole_schema_problems(connection: Connection, notes: list[str] | None = None
                          ) -> Iterator[Problem]:
    """Every schema object missing, extra, or defined otherwise than the head revision's.
    A PostgreSQL role that may not create the scratch schema (the API's SELECT-only role)
    skips the comparison, saying so in `notes`: verify as the store's owner to make it."""
    try:
        expected = expected_snapshot(connection)
    except DBAPIError as exc:
        if getattr(exc.orig, "sqlstate", None) != _INSUFFICIENT_PRIVILEGE:
            raise
        if notes is not None:
            notes.append("the whole schema was not compared with the head revision's: this "
                         "role may not create the scratch schema it builds (verify as the "
                         "store's owner)")
        return
    except Exception as exc:
        yield Problem(None, "schema", "", "cannot build the head revision's schema to compare "
                                          f"with: {' '.join(str(exc).split())[:300]}")
        return
    found = (_pg_snapshot(connection) if connection.dialect.name == "postgresql"
             else _sqlite_snapshot(connection))
    gone = {o.table for what, o in expected.items()
            if what.startswith("table ") and what not in found}
    for what in sorted(expected.keys() | found.keys()):
        want, have = expected.get(what), found.get(what)
        if have is None:
            assert want is not None
            if want.table in gone and not what.startswith("table "):
                continue  # its table is named missing: not each of its columns and indexes
            yield Problem(None, want.table, "", f"{what} is missing: {want.definition}")
        elif want is None:
            yield Problem(None, have.table, "", f"{what} is not the schema's: {have.definition}")
        elif want.definition != have.definition:
            yield Problem(None, have.table, "",
                          f"{what} is {have.definition}, not {want.definition}")
    if connection.dialect.name == "postgresql":
        yield from _pg_shadow_problems(connection)
