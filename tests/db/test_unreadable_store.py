"""A database `core-audit verify` cannot open or read through is reported as not intact, with
the reason, and exit status 1: never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from backends import pg_server_url, schema_url
from store_support import raw_connect, refused_verify


def test_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)

    assert refused_verify(path).stderr == (
        f"NOT intact: {path}: cannot open: file is not a database\n")


def test_a_malformed_sqlite_page(examples_store: Path) -> None:
    connection = raw_connect(examples_store)
    (page_size,) = connection.execute("PRAGMA page_size").fetchone()
    (root,) = connection.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'contract_residuals'").fetchone()
    connection.close()
    with examples_store.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * 64)  # the b-tree page header and its first cell pointers

    assert refused_verify(examples_store).stderr == (
        f"NOT intact: {examples_store}: cannot be read: database disk image is malformed\n")


@pytest.mark.postgres
def test_a_postgres_url_naming_a_missing_schema() -> None:
    url = schema_url(pg_server_url(), "no_such_schema_for_core_audit")

    assert refused_verify(url).stderr == (
        f"NOT intact: {url}: its search_path (no_such_schema_for_core_audit) names no schema "
        "that exists: create it first (CREATE SCHEMA name; docs/postgresql.md)\n")


def test_an_unknown_dialect() -> None:
    assert refused_verify("nosuchdb://host/store").stderr == (
        "NOT intact: nosuchdb://host/store: not a database this core-audit can open: "
        "Can't load plugin: sqlalchemy.dialects:nosuchdb\n")
