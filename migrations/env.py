"""Alembic environment: one transaction per run, so a failed upgrade changes nothing."""

from __future__ import annotations

import sys
from logging.config import fileConfig
from pathlib import Path

from alembic import context
from sqlalchemy import Engine

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # revisions import append_only

from store.db.schema.engine import create_store_engine, resolve_url
from store.db.schema.tables import metadata

config = context.config
if config.config_file_name is not None:  # the alembic CLI, with the repository's alembic.ini
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _url() -> str:
    """core-audit sets sqlalchemy.url; under the alembic CLI (no URL in alembic.ini) the store
    is `-x db=PATH_OR_URL`, else $CORE_AUDIT_DB, else ./core-audit.db, as with --db."""
    given = context.get_x_argument(as_dictionary=True).get("db")
    url = config.get_main_option("sqlalchemy.url")
    return url if url and given is None else resolve_url(given)


# PostgreSQL only, in no model (SQLite's log_origin insert guard does its job): revision 0008.
_UNMODELLED_INDEXES = frozenset({"uq_log_origin_one_row"})


# Revision 0013's full-text indexes, each engine's own, in no model: SQLite's FTS5 tables
# (and the shadow tables FTS5 keeps), PostgreSQL's generated tsvector column and its GIN index.
_TEXT_TABLES = ("residual_texts", "surface_texts", "turn_texts")


def _full_text(name, type_) -> bool:  # type: ignore[no-untyped-def]
    if type_ == "table":
        return any(str(name).startswith(f"{table}_fts") for table in _TEXT_TABLES)
    if type_ == "column":
        return name == "document"
    return type_ == "index" and name in {f"ix_{table}_document" for table in _TEXT_TABLES}


# PostgreSQL only, in no model: revision 0017's byte order (COLLATE "C") twins of the text
# orders' indexes; SQLite's own indexes already sort texts in byte order.
_BYTE_ORDER_SUFFIX = "_byte_order"


def _modelled(object_, name, type_, reflected, compare_to) -> bool:  # type: ignore[no-untyped-def]
    if _full_text(name, type_):
        return False
    if type_ == "index" and str(name).endswith(_BYTE_ORDER_SUFFIX):
        return False
    return not (type_ == "index" and name in _UNMODELLED_INDEXES)


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    sqlite = connection.dialect.name == "sqlite"
    if sqlite and not connection.in_transaction():
        # SQLite's procedure for schema changes: foreign keys off, outside the transaction
        # (the pragma is a no-op inside one), then foreign_key_check before committing.
        # With them on, batch mode's DROP of a referenced table fails the commit.
        connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")
    try:
        context.configure(
            connection=connection,
            target_metadata=metadata,
            # SQLite DDL is transactional once the driver stops auto-committing (engine recipe).
            transactional_ddl=True,
            render_as_batch=sqlite,
            include_object=_modelled,
        )
        with context.begin_transaction():
            context.run_migrations()
            if sqlite:
                _check_foreign_keys(connection)
    finally:
        if sqlite and not connection.in_transaction():
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=ON")


def _check_foreign_keys(connection) -> None:  # type: ignore[no-untyped-def]
    violations = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if violations:
        raise RuntimeError(f"migration left foreign key violations: {violations[:5]}")


def run_migrations_online() -> None:
    # A caller may share its Connection (alembic's cookbook) or an Engine (pytest-alembic).
    connection = config.attributes.get("connection")
    if isinstance(connection, Engine):
        with connection.connect() as shared:
            _run(shared)
        return
    if connection is not None:
        _run(connection)
        return
    engine = create_store_engine(_url())
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("core-audit migrations run online only")
run_migrations_online()
