"""The schema revision a store is at, read without alembic (store/db/schema/schema_version.py):
the bundled head written in code is alembic's own, and a version table that names more than
one revision is refused by name."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from backends import EXAMPLE_FILES
from cli_runs import cli, cli_ok

from store.bundled import bundled_dir
from store.db.audit_store import AuditStore
from store.db.schema.schema_version import BUNDLED_HEAD, alembic_config, head_revision
from store.errors import StoreError


def test_the_bundled_head_is_alembic_s_head_of_the_bundled_migrations() -> None:
    # Adding a revision means writing its id as BUNDLED_HEAD too: this test says so.
    config = alembic_config("sqlite://", bundled_dir("migrations"))  # its revisions' imports
    assert ScriptDirectory.from_config(config).get_current_head() == BUNDLED_HEAD
    assert head_revision() == BUNDLED_HEAD


def test_a_version_table_naming_two_revisions_is_refused_by_name(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    cli_ok("ingest", "--db", db, EXAMPLE_FILES[0])
    with closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("INSERT INTO alembic_version VALUES ('0001')")
    with pytest.raises(StoreError, match=r"names 2 revisions \(0001, " + BUNDLED_HEAD + r"\)"):
        AuditStore.open(str(db))
    result = cli("verify", "--db", db)
    assert result.exit_code != 0
    assert "names 2 revisions (0001, " + BUNDLED_HEAD + ")" in result.stderr
    assert "Traceback" not in result.stderr
