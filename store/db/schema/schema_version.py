"""Alembic, driven from code: upgrade, downgrade, and the refusal to run behind head."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect, text
from sqlalchemy.engine import make_url

from store.bundled import bundled_dir
from store.db.schema.engine import (
    create_store_engine,
    lock_log_tip,
    settle_sqlite,
    sqlite_path,
)
from store.errors import StoreError


def alembic_config(url: str, script_location: Path | None = None) -> Config:
    location = script_location or bundled_dir("migrations")
    if str(location) not in sys.path:
        sys.path.insert(0, str(location))  # revisions import the frozen append_only module
    config = Config()
    config.set_main_option("script_location", str(location))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def head_revision(script_location: Path | None = None) -> str:
    return _head_at(script_location or bundled_dir("migrations"))


@functools.cache
def _head_at(location: Path) -> str:
    # Reading every revision file costs milliseconds, and every store open asks.
    script = ScriptDirectory.from_config(alembic_config("sqlite://", location))
    head = script.get_current_head()
    assert head is not None, "migrations/ has no revision"
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(url: str, revision: str = "head", script_location: Path | None = None) -> None:
    command.upgrade(alembic_config(url, script_location), revision)
    _settle(url)


def downgrade(url: str, revision: str, script_location: Path | None = None) -> None:
    command.downgrade(alembic_config(url, script_location), revision)
    _settle(url)


def _settle(url: str) -> None:
    engine = create_store_engine(url, write=True)
    try:
        settle_sqlite(engine)
    finally:
        engine.dispose()


def history(script_location: Path | None = None) -> list[str]:
    script = ScriptDirectory.from_config(alembic_config("sqlite://", script_location))
    return [  # one line each: a revision's doc may wrap
        f"{rev.revision}: {' '.join(rev.doc.split())}"
        for rev in script.walk_revisions(base="base", head="heads")
    ]


def ensure_at_head(url: str, engine: Engine, *, create: bool) -> None:
    """A new, empty database is created at head; one behind head is refused, not migrated."""
    revision = current_revision(engine)
    head = head_revision()
    if revision == head:
        return
    if revision is None:
        _refuse_missing_schema(url, engine)
        if not create:
            if inspect(engine).get_table_names():
                raise StoreError(f"{_shown(url)} has tables but no core-audit schema revision")
            raise StoreError(f"{_shown(url)} holds no core-audit store")
        _create_at_head(url)  # checks for foreign tables itself, under the lock
        ensure_at_head(url, engine, create=False)  # another first user may have created it
        return
    known = {rev.revision for rev in ScriptDirectory.from_config(
        alembic_config(url)).walk_revisions()}
    if revision not in known:
        raise StoreError(
            f"{_shown(url)} is at revision {revision}, unknown to this core-audit "
            f"(head {head}); it was written by a newer version"
        )
    raise StoreError(
        f"{_shown(url)} is at revision {revision}, behind head {head}; "
        f"an audit store is not migrated silently: run `core-audit db upgrade --db {_shown(url)}`"
    )


def _refuse_missing_schema(url: str, engine: Engine) -> None:
    """PostgreSQL: a search_path naming no existing schema reads as an empty store; say so."""
    if engine.dialect.name != "postgresql":
        return
    with engine.connect() as connection:
        if connection.execute(text("SELECT current_schema()")).scalar() is None:
            path = connection.execute(text("SHOW search_path")).scalar()
            raise StoreError(
                f"{_shown(url)}: its search_path ({path}) names no schema that exists: "
                "create it first (CREATE SCHEMA name; docs/postgresql.md)")


def refuse_missing_schema(url: str) -> None:
    """StoreError if `url` is a PostgreSQL store whose search_path names no existing schema."""
    if "://" not in url or make_url(url).get_backend_name() != "postgresql":
        return
    engine = create_store_engine(url, pooled=False)
    try:
        _refuse_missing_schema(url, engine)
    finally:
        engine.dispose()


def _create_at_head(url: str) -> None:
    """Create the schema under the write lock, checking first that no one else just did.

    Two processes opening a new store at once both find no revision; without the lock both
    would run the first revision and one would fail ("database is locked" or "table exists").
    """
    engine = create_store_engine(url, write=True)  # SQLite: BEGIN IMMEDIATE waits its turn
    try:
        with engine.begin() as connection:
            lock_log_tip(connection)  # PostgreSQL: the writers' advisory lock
            if MigrationContext.configure(connection).get_current_revision() is not None:
                return
            if inspect(connection).get_table_names():
                raise StoreError(f"{_shown(url)} has tables but no core-audit schema revision")
            config = alembic_config(url)
            config.attributes["connection"] = connection  # run inside this transaction
            command.upgrade(config, "head")
        settle_sqlite(engine)
    finally:
        engine.dispose()


def _shown(url: str) -> str:
    path = sqlite_path(url)
    return str(path) if path is not None else make_url(url).render_as_string(hide_password=True)
