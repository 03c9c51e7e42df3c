"""Shared fixtures: a fresh store per test, built in code (the sqlite-utils `fresh_db` way)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store.db.audit_store import AuditStore

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "adr_0225_frames.jsonl"


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    """URL of a store that does not exist yet (created at head on first writable open)."""
    return f"sqlite:///{tmp_path / 'audit.db'}"


@pytest.fixture
def fresh_store(store_url: str) -> Iterator[AuditStore]:
    store = AuditStore.open(store_url)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def examples_path() -> Path:
    return EXAMPLES
