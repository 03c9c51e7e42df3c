"""Fixtures for the append-only store's tests (the functions they share: store_support.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runs import cli
from sqlalchemy import Engine

from store.db.schema.engine import create_store_engine
from store.db.schema.schema_version import alembic_config as store_alembic_config

# --- pytest-alembic ---------------------------------------------------------------------


@pytest.fixture
def alembic_config():  # type: ignore[no-untyped-def]
    # The url is unused: pytest-alembic hands env.py the alembic_engine's connection.
    return store_alembic_config("sqlite://")


@pytest.fixture
def alembic_engine(tmp_path: Path) -> Iterator[Engine]:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'alembic.db'}")
    yield engine
    engine.dispose()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "audit.db"


@pytest.fixture(scope="session")
def built_examples_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`examples_store`, built once per test process (tests copy it: a closed store is one
    file)."""
    db = tmp_path_factory.mktemp("examples_store") / "audit.db"
    examples = Path(__file__).resolve().parents[2] / "examples" / "adr_0225_frames.jsonl"
    result = cli("ingest", "--db", db, examples)
    assert result.exit_code == 0, result.stderr
    return db


@pytest.fixture
def examples_store(db_path: Path, built_examples_store: Path) -> Path:
    """A store holding the ADR-0225 examples (5 frames), written by `core-audit ingest`: the
    test's own copy."""
    shutil.copyfile(built_examples_store, db_path)
    return db_path
