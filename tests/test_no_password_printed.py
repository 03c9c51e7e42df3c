"""A password is never printed (issue 21): whatever layer words an error about a store URL,
its password shows as ***."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES, pg_server_url
from cli_runs import cli
from sqlalchemy.engine import make_url

from store.errors import StoreError, without_passwords

SECRET = "hunter2-s3cret"


def test_without_passwords_masks_every_url_in_a_text() -> None:
    text = ("postgresql+psycopg://bob:hunter2@db.example:5432/audit failed; "
            "also postgresql://alice:p%40ss@10.0.0.1/x and sqlite:////tmp/a.db")
    assert without_passwords(text) == (
        "postgresql+psycopg://bob:***@db.example:5432/audit failed; "
        "also postgresql://alice:***@10.0.0.1/x and sqlite:////tmp/a.db")
    assert str(StoreError(text)).count("***") == 2


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("command", [
    ("verify",), ("checkpoint",), ("log",), ("ingest", str(EXAMPLE_FILES[0])),
    ("export", "turns", "--format", "jsonl"), ("query", "{ ledger { treeSize } }"),
    ("db", "current"), ("db", "upgrade"),
])
def test_an_unreachable_server_is_named_without_its_password(command: tuple[str, ...]) -> None:
    url = f"postgresql+psycopg://auditor:{SECRET}@127.0.0.1:{_closed_port()}/audit"
    result = cli(*command, "--db", url)
    assert result.exit_code == 1
    assert SECRET not in result.stdout + result.stderr
    assert "auditor:***@127.0.0.1" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.postgres
def test_a_missing_schema_is_named_without_the_password() -> None:
    server = make_url(pg_server_url())
    url = server.set(password=SECRET).update_query_dict(
        {"options": "-csearch_path=lost_no_such_schema"}).render_as_string(hide_password=False)
    for command in (("verify",), ("ingest", str(EXAMPLE_FILES[0])), ("db", "upgrade")):
        result = cli(*command, "--db", url)
        assert result.exit_code == 1
        assert SECRET not in result.stdout + result.stderr
        assert ":***@" in result.stderr
        # No raw SQL: the schema to create, as docs/postgresql.md shows.
        assert ("search_path (lost_no_such_schema) names no schema that exists: create it "
                "first (CREATE SCHEMA name; docs/postgresql.md)") in result.stderr
        assert "CREATE TABLE" not in result.stderr
    assert "-c 'CREATE SCHEMA core_audit_store'" in (
        Path(__file__).resolve().parents[1] / "docs" / "postgresql.md").read_text()
