"""Alembic environment: one transaction per run, so a failed upgrade changes nothing."""

from __future__ import annotations

import sys
from pathlib import Path

from alembic import context
from sqlalchemy import Engine

sys.path.insert(0, str(Path(__file__).resolve().parent))  # revisions import append_only

from store.db.engine import create_store_engine
from store.db.tables import metadata

config = context.config


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite DDL is transactional once the driver stops auto-committing (engine recipe).
        transactional_ddl=True,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


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
    engine = create_store_engine(config.get_main_option("sqlalchemy.url"))
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("core-audit migrations run online only")
run_migrations_online()
