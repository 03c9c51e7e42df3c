"""Alembic, driven from code: upgrade, downgrade, and the refusal to run behind head."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.engine import make_url

from store import bundled
from store.bundled import bundled_dir
from store.db.schema.engine import (
    create_store_engine,
    lock_log_tip,
    settle_sqlite,
    sqlite_path,
)
from store.errors import StoreError

if TYPE_CHECKING:
    from alembic.config import Config

# The head of the bundled migrations/, written here so that opening a store at head imports
# no alembic (its import and the reading of every revision file were ~12 MiB of a writer's
# memory and ~0.15 s of every command's start); alembic is loaded to create, upgrade or
# downgrade a store, or to name a revision this one does not know.
# tests/db/test_schema_version.py holds it equal to alembic's own head of migrations/.
BUNDLED_HEAD = "0019"
VERSION_TABLE = "alembic_version"  # alembic's default, which migrations/env.py keeps


def alembic_config(url: str, script_location: Path | None = None) -> Config:
    from alembic.config import Config

    location = script_location or bundled_dir("migrations")
    if str(location) not in sys.path:
        sys.path.insert(0, str(location))  # revisions import the frozen append_only module
    config = Config()
    config.set_main_option("script_location", str(location))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def head_revision(script_location: Path | None = None) -> str:
    """The head revision of `script_location` (default: the bundled migrations/)."""
    location = script_location or bundled_dir("migrations")
    return BUNDLED_HEAD if location == _bundled_migrations() else _head_at(location)


@functools.cache
def _bundled_migrations() -> Path:
    # Found once, as the package ships it: BUNDLED_HEAD is that folder's head, and no other's
    # (a test may point bundled_dir at a copy with a revision more).
    return bundled.bundled_dir("migrations")


@functools.cache
def _head_at(location: Path) -> str:
    """alembic's head of the revisions at `location`, read from their files."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config("sqlite://", location))
    head = script.get_current_head()
    assert head is not None, "migrations/ has no revision"
    return head


def current_revision(engine: Engine) -> str | None:
    """The store's schema revision (None: no core-audit schema), as alembic keeps it."""
    with engine.connect() as connection:
        return _stored_revision(connection)


def _stored_revision(connection: Connection) -> str | None:
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    versions = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")
                                  ).scalars().all()
    if len(versions) > 1:
        raise StoreError(f"the store's {VERSION_TABLE} table names {len(versions)} revisions "
                         f"({', '.join(sorted(versions))}); a core-audit store has one")
    return versions[0] if versions else None


def upgrade(url: str, revision: str = "head", script_location: Path | None = None) -> None:
    from alembic import command

    command.upgrade(alembic_config(url, script_location), revision)
    _settle(url)


def downgrade(url: str, revision: str, script_location: Path | None = None) -> None:
    from alembic import command

    command.downgrade(alembic_config(url, script_location), revision)
    _settle(url)


def _settle(url: str) -> None:
    engine = create_store_engine(url, write=True)
    try:
        settle_sqlite(engine)
    finally:
        engine.dispose()


def history(script_location: Path | None = None) -> list[str]:
    from alembic.script import ScriptDirectory

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
    from alembic.script import ScriptDirectory

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
    from alembic import command

    engine = create_store_engine(url, write=True)  # SQLite: BEGIN IMMEDIATE waits its turn
    try:
        with engine.begin() as connection:
            lock_log_tip(connection)  # PostgreSQL: the writers' advisory lock
            if _stored_revision(connection) is not None:
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
