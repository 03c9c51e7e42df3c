"""Revision 0008: an insert meeting any unique value, any explicit rowid, a second origin.

Issue 21's attacks, through the stdlib sqlite3 module and raw psycopg (never core-audit's
code): each is refused by the database, and the store is left as it was.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest
from backends import libpq_url
from cli_runs import cli
from store_support import raw_connect

REPO = Path(__file__).resolve().parents[2]
JOURNAL = REPO / "examples" / "workbench_turn_journal.jsonl"
ORIGIN = "audit.example.org/core"


@pytest.fixture
def two_batches(examples_store: Path) -> Path:
    """The ADR-0225 examples, then the turn journal: two tree heads; the origin chosen."""
    assert cli("ingest", "--db", examples_store, JOURNAL).exit_code == 0
    assert cli("checkpoint", "--db", examples_store, "--origin", ORIGIN).exit_code == 0
    return examples_store


def _refused(path: Path, sql: str, *params: object) -> str:
    connection = raw_connect(path)
    try:
        with pytest.raises(sqlite3.IntegrityError) as refused:
            connection.execute(sql, params)
    finally:
        connection.close()
    return str(refused.value)


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    connection = raw_connect(path)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def test_sqlite_replace_into_tree_heads_through_tree_size_is_refused(two_batches: Path) -> None:
    heads = _rows(two_batches, "SELECT batch_id, tree_size, root_hash FROM tree_heads")
    (first_size,) = _rows(two_batches, "SELECT min(tree_size) FROM tree_heads")[0]
    message = _refused(two_batches, "REPLACE INTO tree_heads (batch_id, tree_size, root_hash) "
                       "VALUES (99, ?, ?)", first_size, "00" * 32)
    assert message == "tree_heads is append-only: a row with this key exists"
    assert _rows(two_batches, "SELECT batch_id, tree_size, root_hash FROM tree_heads") == heads
    assert cli("verify", "--db", two_batches).exit_code == 0


def test_sqlite_a_forged_origin_at_a_negative_rowid_is_refused(two_batches: Path) -> None:
    message = _refused(two_batches, "INSERT INTO log_origin (rowid, origin) "
                       "VALUES (-5, 'evil.example/forged')")
    assert message == "log_origin is append-only: a row with this key exists"
    assert _rows(two_batches, "SELECT rowid, origin FROM log_origin") == [(1, ORIGIN)]
    assert cli("checkpoint", "--db", two_batches).stdout.splitlines()[0] == ORIGIN


def test_sqlite_a_second_origin_is_refused_even_without_a_rowid(two_batches: Path) -> None:
    assert _refused(two_batches, "INSERT INTO log_origin (origin) VALUES ('a.example/b')") == (
        "log_origin is append-only: a row with this key exists")


@pytest.mark.parametrize("sql", [
    # A fresh key at an explicit rowid: ahead of every stored row in rowid order.
    "INSERT INTO log_subtrees (rowid, level, start, hash) VALUES (-5, 30, 0, 'ab')",
    # An explicit rowid past the stored ones: no writer of the store gives one.
    "INSERT INTO residual_tallies (rowid, batch_id, ordinal, residual_kind, source_axis, "
    "candidate_organ, residual_code, residuals, occurrences) "
    "VALUES (1000, 1, 999, 'k', 'a', 'o', 'c', 1, 1)",
    # REPLACE aimed at a stored rowid with a fresh key (revision 0004's case, still held).
    "REPLACE INTO log_subtrees (rowid, level, start, hash) VALUES (1, 31, 0, 'ab')",
])
def test_sqlite_any_explicit_rowid_is_refused(two_batches: Path, sql: str) -> None:
    table = sql.split()[2]
    assert _refused(two_batches, sql) == f"{table} is append-only: a row with this key exists"


def test_sqlite_rows_forged_with_the_guard_dropped_are_named_by_verify(two_batches: Path) -> None:
    connection = raw_connect(two_batches)
    connection.execute("DROP TRIGGER log_origin_append_only_insert")
    connection.execute("INSERT INTO log_origin (rowid, origin) VALUES (-5, 'evil.example/x')")
    connection.commit()
    connection.close()

    result = cli("verify", "--db", two_batches)

    assert result.exit_code == 1
    lines = [line.removeprefix("  also ") for line in result.stderr.splitlines()]
    assert "log_origin: 1 rows at an explicit rowid below 1: inserted out of band" in lines
    assert ("log_origin: holds 2 rows, one at most: rows were added out of band (which one "
            "a reader takes is arbitrary)") in lines
    checkpoint = cli("checkpoint", "--db", two_batches)
    assert checkpoint.exit_code == 1 and "log_origin holds more than one origin" in (
        checkpoint.stderr)


@pytest.mark.postgres
def test_postgres_a_second_origin_row_is_refused(pg_url: str, examples_path: Path) -> None:
    assert cli("ingest", "--db", pg_url, examples_path).exit_code == 0
    assert cli("checkpoint", "--db", pg_url, "--origin", ORIGIN).exit_code == 0
    with psycopg.connect(libpq_url(pg_url), autocommit=True) as connection:
        with pytest.raises(psycopg.errors.UniqueViolation, match="uq_log_origin_one_row"):
            connection.execute("INSERT INTO log_origin (origin) VALUES ('evil.example/forged')")
        assert connection.execute("SELECT origin FROM log_origin").fetchall() == [(ORIGIN,)]
