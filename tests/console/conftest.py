"""Fixtures for the console: one store per test module, the example store plus the Workbench
journal (tree heads 18, 37, 66, 83, as `journal_db`), on SQLite: the pages read through the
query layer, which the api and db tests run on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore

JOURNAL = Path(__file__).resolve().parents[2] / "examples" / "workbench_turn_journal.jsonl"


@pytest.fixture(scope="module")
def console_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('console') / 'audit.db'}"
    with AuditStore.open(url) as store:
        for path in (*EXAMPLE_FILES, JOURNAL):
            store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
    return url


@pytest.fixture(scope="module")
def console_db(console_url: str) -> Iterator[AuditStore]:
    # Read with the tests' 60 s default (tests/conftest.py), not the server's 5 s.
    with AuditStore.open(console_url, read_only=True) as db:
        yield db


@pytest.fixture(scope="module")
def console(console_db: AuditStore) -> Iterator[TestClient]:
    """A client of the app (console on, as `serve` runs it)."""
    app = create_app(console_db, close_db_on_shutdown=False)
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        yield client
