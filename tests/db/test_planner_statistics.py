"""PostgreSQL's planner statistics after an ingest (store/db/planner_statistics.py): the tables a
batch left never analyzed, or grew to more than twice the pages their statistics saw, are
analyzed once it commits; a batch small beside the store leaves them to autovacuum. (A copy
analyzes every table: tests/db/test_postgres_copy.py.)"""

from __future__ import annotations

from pathlib import Path

from backends import EXAMPLE_FILES
from cli_runs import cli, cli_ok
from jsonl_files import write_jsonl
from spec_values import CODES_OF_BATCH_1, TOTAL_RESIDUALS
from store_support import distinct_frames

from store.db.audit_store import AuditStore


def _statistics(url: str) -> tuple[float, int]:
    """contract_residuals' (reltuples, rows): PostgreSQL's estimate beside the count."""
    with AuditStore.open(url, read_only=True) as store:
        return store.execute(lambda c: tuple(c.exec_driver_sql(
            "SELECT c.reltuples, (SELECT count(*) FROM contract_residuals) FROM pg_class c "
            "WHERE c.relnamespace = current_schema()::regnamespace "
            "AND c.relname = 'contract_residuals'").one()))


def test_an_ingest_analyzes_the_tables_it_left_unanalyzed_or_doubled(
        tmp_path: Path, pg_url: str) -> None:
    # A fresh schema's tables have never been analyzed (reltuples -1); the first batch, the
    # ADR-0225 frames, stores six residuals, and ANALYZE of a table this small reads every row.
    cli_ok("ingest", "--db", pg_url, EXAMPLE_FILES[0])
    assert _statistics(pg_url) == (len(CODES_OF_BATCH_1), 6)
    # The family frames add six residuals to the table's one page: not doubled, so the
    # statistics stay those of batch 1 (autovacuum's threshold is 50 changed rows).
    cli_ok("ingest", "--db", pg_url, EXAMPLE_FILES[1])
    assert _statistics(pg_url) == (6, TOTAL_RESIDUALS)
    # Four hundred more frames grow it to many pages: analyzed again, every row counted.
    more = write_jsonl(tmp_path / "more.jsonl", list(distinct_frames(400, "m")))
    cli_ok("ingest", "--db", pg_url, more)
    estimate, rows = _statistics(pg_url)
    assert rows > 10 * TOTAL_RESIDUALS
    assert estimate == rows
    assert cli("verify", "--db", pg_url).exit_code == 0


def test_an_ingest_into_sqlite_gathers_no_statistics(tmp_path: Path) -> None:
    # SQLite plans without statistics unless ANALYZE wrote sqlite_stat1, which would be a
    # change to the file outside the store's tables.
    db = tmp_path / "audit.db"
    cli_ok("ingest", "--db", db, EXAMPLE_FILES[0])
    with AuditStore.open(str(db), read_only=True) as store:
        assert store.execute(lambda c: c.exec_driver_sql(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'sqlite_stat%'").scalar()) == 0
