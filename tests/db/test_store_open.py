"""A new store is created at head on first use; a store behind head is refused, not migrated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import cli
from raw_reads import dump, triggers
from store_support import (
    HEAD_TRIGGERS,
    copy_migrations,
    raw_connect,
    revision_of,
    revision_source,
    row_counts,
    url_of,
)

import store.db.schema.schema_version as schema_version
from store import StoreError
from store.db.audit_store import AuditStore
from store.db.schema.schema_version import head_revision, upgrade

HEAD = head_revision()  # this checkout's newest revision

DUMMY_REVISION = revision_source(
    "9001", HEAD, upgrade="op.create_index('ix_tree_heads_root', 'tree_heads', ['root_hash'])",
    downgrade="op.drop_index('ix_tree_heads_root', 'tree_heads')", doc="test: a later head",
)


def _revision_of(path: Path) -> str | None:
    return revision_of(url_of(path))


@pytest.fixture
def newer_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This core-audit's migrations gain a revision 9001, so a store at 0003 is behind head."""
    scripts = copy_migrations(tmp_path, {"9001_later.py": DUMMY_REVISION})
    monkeypatch.setattr(schema_version, "bundled_dir", lambda name: scripts)
    return scripts


def test_a_new_store_is_created_at_head_with_its_triggers(db_path: Path) -> None:
    assert not db_path.exists()
    AuditStore.open(str(db_path)).close()
    assert _revision_of(db_path) == HEAD
    assert triggers(db_path) == HEAD_TRIGGERS
    assert row_counts(db_path) == dict.fromkeys(row_counts(db_path), 0)


def test_a_new_store_is_in_wal_mode(db_path: Path) -> None:
    AuditStore.open(str(db_path)).close()
    connection = raw_connect(db_path)
    assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    connection.close()


def _page_size(path: Path) -> int:
    connection = raw_connect(path)
    try:
        return int(connection.execute("PRAGMA page_size").fetchone()[0])
    finally:
        connection.close()


def test_a_new_store_has_16_kib_pages(db_path: Path, tmp_path: Path) -> None:
    # Made by its first use, and by `core-audit db upgrade` on a file not yet a database.
    AuditStore.open(str(db_path)).close()
    assert _page_size(db_path) == 16384
    upgraded = tmp_path / "upgraded.db"
    result = cli("db", "upgrade", "--db", upgraded)
    assert result.exit_code == 0, result.output
    assert _page_size(upgraded) == 16384


def test_a_reader_keeps_16_mib_of_pages_in_its_cache(db_path: Path) -> None:
    # SQLite's default cache (-2000: 2,000 KiB) holds 125 of these 16 KiB pages, fewer than
    # a 100-row page of residuals reads; a reader keeps 16 MiB (negative: KiB, SQLite's
    # "PRAGMA cache_size = -N" form). The writer keeps its own 64 MiB.
    AuditStore.open(str(db_path)).close()
    with AuditStore.open(str(db_path), read_only=True) as reader:
        assert reader.execute(lambda c: c.exec_driver_sql("PRAGMA cache_size").scalar()) \
            == -16384
    with AuditStore.open(str(db_path)) as store:
        assert store.execute(lambda c: c.exec_driver_sql("PRAGMA cache_size").scalar()) \
            == -2000
        with store.write_engine().connect() as writer:
            assert writer.exec_driver_sql("PRAGMA cache_size").scalar() == -65536


def test_a_store_keeps_the_page_size_it_was_made_with(db_path: Path,
                                                       examples_path: Path) -> None:
    # SQLite's page size is the database's from its first table on: a store made with 4 KiB
    # pages (SQLite's default, every store before 16 KiB) is written and read as it is.
    connection = raw_connect(db_path)
    connection.execute("PRAGMA page_size=4096")
    connection.execute("CREATE TABLE t (x)")
    connection.execute("DROP TABLE t")
    connection.commit()
    connection.close()
    AuditStore.open(str(db_path)).close()
    assert _revision_of(db_path) == HEAD
    result = cli("ingest", examples_path, "--db", db_path)
    assert result.exit_code == 0, result.output
    assert _page_size(db_path) == 4096
    assert cli("verify", "--db", db_path).exit_code == 0


def test_opening_read_only_does_not_create_a_store(db_path: Path) -> None:
    with pytest.raises(StoreError, match="no such store"):
        AuditStore.open(str(db_path), read_only=True)
    assert not db_path.exists()


def test_verify_of_a_missing_store_fails_without_creating_it(db_path: Path) -> None:
    result = cli("verify", "--db", db_path)
    assert result.exit_code == 1
    assert "no such store" in result.stderr
    assert not db_path.exists()


def test_a_database_with_foreign_tables_is_refused(db_path: Path) -> None:
    connection = raw_connect(db_path)
    connection.execute("CREATE TABLE something_else (x)")
    connection.close()
    with pytest.raises(StoreError, match="has tables but no core-audit schema revision"):
        AuditStore.open(str(db_path))


def test_a_store_behind_head_is_refused_naming_db_upgrade(
    db_path: Path, newer_head: Path
) -> None:
    upgrade(url_of(db_path), HEAD, newer_head)
    before = dump(db_path)

    with pytest.raises(StoreError) as refused:
        AuditStore.open(str(db_path))

    message = str(refused.value)
    assert "behind head 9001" in message
    assert "core-audit db upgrade" in message
    assert dump(db_path) == before
    assert _revision_of(db_path) == HEAD


def test_ingest_into_a_store_behind_head_exits_1_and_writes_nothing(
    db_path: Path, newer_head: Path, examples_path: Path
) -> None:
    upgrade(url_of(db_path), HEAD, newer_head)
    before = dump(db_path)

    result = cli("ingest", "--db", db_path, examples_path)

    assert result.exit_code == 1
    assert f"core-audit db upgrade --db {db_path}" in result.stderr
    assert dump(db_path) == before


def test_db_upgrade_then_lets_the_store_open(
    db_path: Path, newer_head: Path, examples_path: Path
) -> None:
    upgrade(url_of(db_path), HEAD, newer_head)
    result = cli("db", "upgrade", "--db", db_path)
    assert result.exit_code == 0, result.output
    assert _revision_of(db_path) == "9001"
    assert cli("ingest", "--db", db_path, examples_path).exit_code == 0


def test_a_store_at_an_unknown_revision_is_refused_as_newer(
    tmp_path: Path, db_path: Path
) -> None:
    scripts = copy_migrations(tmp_path, {"9001_later.py": DUMMY_REVISION})
    upgrade(url_of(db_path), "head", scripts)
    with pytest.raises(StoreError, match=r"unknown to this core-audit.*newer version"):
        AuditStore.open(str(db_path))


def test_db_current_names_the_revision_and_head(db_path: Path) -> None:
    AuditStore.open(str(db_path)).close()
    result = cli("db", "current", "--db", db_path)
    assert result.exit_code == 0
    assert result.stdout.strip() == "0019 (at head)"
    as_json = cli("db", "current", "--db", db_path, "--json")
    assert json.loads(as_json.stdout) == {"revision": "0019", "head": "0019", "at_head": True}
