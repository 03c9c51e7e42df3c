"""Shared fixtures: a fresh store per test, built in code (the sqlite-utils `fresh_db` way).

`backend_url` runs a test on both backends: SQLite (a file under tmp_path) and PostgreSQL
(a fresh schema on the server named by $CORE_AUDIT_TEST_PG, dropped afterwards).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import BACKENDS, EXAMPLE_FILES, pg_schema
from browser_runs import chromium
from cli_runs import INPUT_VARIABLES

from store.db.audit_store import AuditStore

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "adr_0225_frames.jsonl"
JOURNAL = REPO / "examples" / "workbench_turn_journal.jsonl"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the folders tests wrote screenshots to (never committed), once each."""
    folders = {str(value) for reports in terminalreporter.stats.values() for report in reports
               for name, value in getattr(report, "user_properties", ()) if name == "screenshots"}
    for folder in sorted(folders):
        terminalreporter.write_line(f"screenshots written to {folder}")


@pytest.fixture(autouse=True)
def _no_shell_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store and data dirs a developer's shell names never reach the code under test:
    in-process defaults (the teaching registry, the store) read the same variables as the CLI."""
    for name in INPUT_VARIABLES:
        monkeypatch.delenv(name, raising=False)


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

    Raw reads of a store (raw_reads.query) take either.
    """
    if request.param == "sqlite":
        yield tmp_path / "audit.db"
        return
    with pg_schema() as url:
        yield url


@pytest.fixture
def examples_path() -> Path:
    return EXAMPLES


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
def example_db(example_store_url: str) -> Iterator[AuditStore]:
    db = AuditStore.open(example_store_url, read_only=True)
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def journal_db(example_store_url: str) -> Iterator[AuditStore]:
    """The example store plus the bundled Workbench journal as batch 4 (the records `demo`
    serves, in another batch order). Tree heads 18, 37, 66 and 83 (spec_values.HEADS); batch
    4 adds six turns, sees the light and memory surfaces again and stores four new surfaces.
    """
    with AuditStore.open(example_store_url) as store:
        store.ingest(JOURNAL.read_bytes().splitlines(keepends=True), source=JOURNAL.name)
    db = AuditStore.open(example_store_url, read_only=True)
    try:
        yield db
    finally:
        db.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium, one per test module (each browser test module skips
    before this when selenium or Chromium is missing; GraphiQL's tests take one per test)."""
    with chromium() as driver:
        yield driver
