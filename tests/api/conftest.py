"""Fixtures for the read API: a client of the example store (tests/conftest.py builds it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore


@pytest.fixture
def client(example_db: AuditStore) -> Iterator[TestClient]:
    app = create_app(example_db, close_db_on_shutdown=False)
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        yield test_client


@pytest.fixture
def journal_client(journal_db: AuditStore) -> Iterator[TestClient]:
    """A client of the example store plus the Workbench journal (`journal_db`)."""
    app = create_app(journal_db, close_db_on_shutdown=False)
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        yield test_client
