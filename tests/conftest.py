"""Shared fixtures: a fresh store per test, built in code (the sqlite-utils `fresh_db` way).

`backend_url` runs a test on both backends: SQLite (a file under tmp_path) and PostgreSQL
(a fresh schema on the server named by $CORE_AUDIT_TEST_PG, dropped afterwards). The example
stores are built once per test process and shared by the tests that only read them; a test
that may write gets its own (tests/built_stores.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import BACKENDS, EXAMPLE_FILES, pg_schema
from browser_runs import chromium
from built_stores import BuiltStores, ingest_files, reads_only
from cli_runs import INPUT_VARIABLES

from store.db import time_limit as time_limit_module
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


# What a store opened in a test without a time limit of its own reads with. The 5 s default
# ran out three times in whole-suite runs on 2 cores, each on a tiny store that answers in
# milliseconds alone: the machine had stalled, not the query. Tests of the limit pass theirs.
RESULTS_TIME_LIMIT = 60.0


@pytest.fixture(autouse=True, scope="session")
def _results_not_stall_timeouts() -> Iterator[None]:
    """`AuditStore.open` defaults to RESULTS_TIME_LIMIT in tests, and so do the CLI's reads
    run in the tests' process (`core-audit query`, `export`...: the CLI's own default, read
    when a command opens its store; `serve --time-limit` keeps its declared default). A
    whole-suite run once stopped on `core-audit query` of a three-batch store past 5 s."""
    real = AuditStore.open.__func__  # type: ignore[attr-defined]

    def open_store(cls: type[AuditStore], db: str | None = None, *,
                   time_limit: float = RESULTS_TIME_LIMIT, **options: Any) -> AuditStore:
        return real(cls, db, time_limit=time_limit, **options)  # type: ignore[no-any-return]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AuditStore, "open", classmethod(open_store))
        patch.setattr(time_limit_module, "DEFAULT_TIME_LIMIT", RESULTS_TIME_LIMIT)
        yield


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


@pytest.fixture(scope="session")
def built_stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BuiltStores]:
    """The example stores, built once per test process (tests/built_stores.py)."""
    stores = BuiltStores(tmp_path_factory.mktemp("built"))
    try:
        yield stores
    finally:
        stores.close()


@pytest.fixture
def example_store_url(backend_url: str, built_stores: BuiltStores) -> str:
    """12 residuals, 13 occurrences, 10 assessments; then 12 surfaces seen in 16 turns.

    Three batches, one per example file (see spec_values.py for what each holds). Built on
    SQLite and on PostgreSQL: every test reading it runs on both backends. The test's own
    store, which it may write to (on SQLite, a copy of one built earlier).
    """
    return built_stores.copy(backend_url, EXAMPLE_FILES)


@pytest.fixture
def example_url(backend_url: str, built_stores: BuiltStores) -> str:
    """The example store's URL (`example_store_url`'s records), shared with other tests: open
    it read-only only."""
    return built_stores.shared(backend_url, EXAMPLE_FILES)


def _read_only_store(request: pytest.FixtureRequest, backend_url: str,
                     built_stores: BuiltStores, files: tuple[Path, ...]) -> AuditStore:
    """`files` on `backend_url`'s backend, opened read-only: the store shared by the tests that
    only read (built_stores.reads_only), else the test's own `example_store_url`."""
    if reads_only(request):
        if "journal_db" in request.fixturenames:  # example_db and journal_db: one store
            files = (*EXAMPLE_FILES, JOURNAL)
        return AuditStore.open(built_stores.shared(backend_url, files), read_only=True)
    url = request.getfixturevalue("example_store_url")
    if files != EXAMPLE_FILES:
        ingest_files(url, files[len(EXAMPLE_FILES):])
    return AuditStore.open(url, read_only=True)


@pytest.fixture
def example_db(request: pytest.FixtureRequest, backend_url: str,
               built_stores: BuiltStores) -> Iterator[AuditStore]:
    """The example store (`example_store_url`), read-only."""
    db = _read_only_store(request, backend_url, built_stores, EXAMPLE_FILES)
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def journal_db(request: pytest.FixtureRequest, backend_url: str,
               built_stores: BuiltStores) -> Iterator[AuditStore]:
    """The example store plus the bundled Workbench journal as batch 4 (the records `demo`
    serves, in another batch order). Tree heads 18, 37, 66 and 83 (spec_values.HEADS); batch
    4 adds six turns, sees the light and memory surfaces again and stores four new surfaces.
    Read-only; a test that also asks for `example_store_url` finds the journal there.
    """
    db = _read_only_store(request, backend_url, built_stores, (*EXAMPLE_FILES, JOURNAL))
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
