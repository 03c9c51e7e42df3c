"""Shared fixtures: a fresh store per test, built in code (the sqlite-utils `fresh_db` way).

`backend_url` runs a test on both backends: SQLite (a file under tmp_path) and PostgreSQL
(a fresh schema on the server named by $CORE_AUDIT_TEST_PG, dropped afterwards).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import BACKENDS, pg_schema

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "adr_0225_frames.jsonl"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """URL of an empty PostgreSQL schema (skipped without $CORE_AUDIT_TEST_PG)."""
    with pg_schema() as url:
        yield url


@pytest.fixture(params=BACKENDS)
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of a store that does not exist yet, on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'audit.db'}"
        return
    with pg_schema() as url:
        yield url


@pytest.fixture(params=BACKENDS)
def store_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path | str]:
    """Where a new store goes, as the CLI's --db takes it: a SQLite file or a PostgreSQL URL.

    Helpers that read a store raw (surface_helpers.query) take either.
    """
    if request.param == "sqlite":
        yield tmp_path / "audit.db"
        return
    with pg_schema() as url:
        yield url




@pytest.fixture
def examples_path() -> Path:
    return EXAMPLES
