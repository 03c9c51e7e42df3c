"""Fixtures for the read API: a store holding the bundled examples, its Database, a client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from backends import EXAMPLE_FILES
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore
from store.db.database import Database


@pytest.fixture
def example_store_url(backend_url: str) -> str:
    """12 residuals, 13 occurrences, 10 assessments; then 12 surfaces seen in 16 turns.

    Three batches, one per example file (see spec_values.py for what each holds). Built on
    SQLite and on PostgreSQL: every test reading it runs on both backends.
    """
    with AuditStore.open(backend_url) as store:
        for path in EXAMPLE_FILES:
            store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
    return backend_url


@pytest.fixture
def example_db(example_store_url: str) -> Iterator[Database]:
    db = Database.open(example_store_url)
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def client(example_db: Database) -> Iterator[TestClient]:
    app = create_app(example_db, close_db_on_shutdown=False)
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        yield test_client
