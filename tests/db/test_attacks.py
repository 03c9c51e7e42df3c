"""Attacks by someone who can write the database file (or connect to the schema as its
owner): `core-audit verify` exits 1 and names the table, trigger, key or row.

SQLite is tampered with through the stdlib sqlite3 module, PostgreSQL through raw psycopg:
neither goes through core-audit's code.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from backends import libpq_url
from cli_runs import cli
from store_support import first_problem, raw_connect, refused_verify, spec_residual_id

REPO = Path(__file__).resolve().parents[2]
# Example A's third residual (seq 6): changed_object_unbound over "gained" 4-10.
CHANGED_OBJECT_UNBOUND = spec_residual_id(
    "unary_delta_transition", "missing_role", "changed_object_unbound",
    [{"text": "gained", "start": 4, "end": 10, "sentence_index": None}],
)
RESIDUAL_GUARDS = tuple(f"contract_residuals_append_only_{op}"
                        for op in ("update", "delete", "insert"))


def _saved_sql(connection: sqlite3.Connection, table: str, kind: str) -> list[str]:
    return [sql for (sql,) in connection.execute(
        "SELECT sql FROM sqlite_master WHERE type = ? AND tbl_name = ? AND sql IS NOT NULL",
        (kind, table))]


# --- (a) a primary key taken away, then a row stored twice ---------------------------------


def test_sqlite_a_table_rebuilt_without_its_key_and_a_duplicate_row(examples_store: Path) -> None:
    connection = raw_connect(examples_store)
    triggers = _saved_sql(connection, "contract_residuals", "trigger")
    indexes = _saved_sql(connection, "contract_residuals", "index")
    (create,) = _saved_sql(connection, "contract_residuals", "table")
    keyless = create.replace("CONSTRAINT pk_contract_residuals PRIMARY KEY (residual_id), ", "")
    assert keyless != create
    connection.execute(keyless.replace("TABLE contract_residuals", "TABLE rebuilt", 1))
    connection.execute("INSERT INTO rebuilt SELECT * FROM contract_residuals")
    connection.execute("INSERT INTO rebuilt SELECT * FROM contract_residuals WHERE residual_id = ?",
                       (CHANGED_OBJECT_UNBOUND,))
    connection.execute("DROP TABLE contract_residuals")  # its indexes and triggers go too
    connection.execute("ALTER TABLE rebuilt RENAME TO contract_residuals")
    for sql in (*indexes, *triggers):  # put back exactly as they were
        connection.execute(sql)
    connection.close()

    result = refused_verify(examples_store)

    assert first_problem(result.stderr) == "contract_residuals: primary key is missing"
    assert (f"  also contract_residuals: residual_id {CHANGED_OBJECT_UNBOUND} is stored 2 times"
            in result.stderr.splitlines())


EXAMPLES = [REPO / "examples" / name for name in (
    "adr_0225_frames.jsonl", "core_frames_families.jsonl", "adr_0052_surfaces.jsonl",
    "workbench_turn_journal.jsonl")]


@pytest.fixture
def pg_store(pg_url: str) -> str:
    """A PostgreSQL store holding the examples: every table has rows."""
    for path in EXAMPLES:
        assert cli("ingest", "--db", pg_url, path).exit_code == 0
    return pg_url


@pytest.fixture
def raw(pg_store: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(libpq_url(pg_store), autocommit=True) as connection:
        yield connection


@pytest.mark.postgres
def test_postgres_a_dropped_key_constraint_and_a_duplicate_row(
    pg_store: str, raw: psycopg.Connection
) -> None:
    row = raw.execute("SELECT occurrence_id FROM surface_occurrences ORDER BY seq LIMIT 1")
    (occurrence,) = row.fetchone()  # type: ignore[misc]
    raw.execute("ALTER TABLE surface_occurrences DROP CONSTRAINT pk_surface_occurrences")
    raw.execute("INSERT INTO surface_occurrences SELECT * FROM surface_occurrences "
                "WHERE occurrence_id = %s", (occurrence,))

    result = refused_verify(pg_store)

    assert first_problem(result.stderr) == "surface_occurrences: primary key is missing"
    assert (f"  also surface_occurrences: occurrence_id {occurrence} is stored 2 times"
            in result.stderr.splitlines())


# --- (b), (c), (d) SQLite guard triggers: a no-op, a move, an edit of the stored SQL ----------


def test_sqlite_a_guard_replaced_by_a_same_named_no_op(examples_store: Path) -> None:
    connection = raw_connect(examples_store)
    connection.execute("DROP TRIGGER contract_residuals_append_only_update")
    connection.execute("CREATE TRIGGER contract_residuals_append_only_update BEFORE UPDATE ON "
                       "contract_residuals WHEN 0 BEGIN SELECT 1; END")
    connection.close()

    assert first_problem(refused_verify(examples_store).stderr) == (
        "contract_residuals: append-only trigger contract_residuals_append_only_update is not "
        "its definition: CREATE TRIGGER contract_residuals_append_only_update BEFORE UPDATE ON "
        "contract_residuals WHEN 0 BEGIN SELECT 1; END")


def test_sqlite_a_guard_moved_to_another_table_under_its_name(examples_store: Path) -> None:
    connection = raw_connect(examples_store)
    connection.execute("DROP TRIGGER contract_residuals_append_only_delete")
    connection.execute("CREATE TRIGGER contract_residuals_append_only_delete BEFORE DELETE ON "
                       "ingest_batches BEGIN SELECT RAISE(ABORT, 'contract_residuals is "
                       "append-only: DELETE rejected'); END")
    connection.close()

    assert first_problem(refused_verify(examples_store).stderr) == (
        "contract_residuals: append-only trigger contract_residuals_append_only_delete is on "
        "table ingest_batches instead")


def test_sqlite_a_guard_edited_through_writable_schema(examples_store: Path) -> None:
    connection = raw_connect(examples_store)
    connection.execute("PRAGMA writable_schema=ON")
    connection.execute(
        "UPDATE sqlite_master SET sql = replace(sql, 'ON contract_residuals BEGIN', "
        "'ON contract_residuals WHEN 0 BEGIN') "
        "WHERE name = 'contract_residuals_append_only_delete'")
    connection.execute("PRAGMA writable_schema=OFF")
    connection.close()

    assert first_problem(refused_verify(examples_store).stderr) == (
        "contract_residuals: append-only trigger contract_residuals_append_only_delete is not "
        "its definition: CREATE TRIGGER contract_residuals_append_only_delete BEFORE DELETE ON "
        "contract_residuals WHEN 0 BEGIN SELECT RAISE(ABORT, 'contract_residuals is "
        "append-only: DELETE rejected'); END")


# --- (e) PostgreSQL guards disabled, demoted to replica-only, or emptied out ------------------


@pytest.mark.postgres
def test_postgres_guards_disabled(pg_store: str, raw: psycopg.Connection) -> None:
    raw.execute("ALTER TABLE contract_residuals DISABLE TRIGGER USER")

    problems = refused_verify(pg_store).stderr.splitlines()

    assert problems[:3] == [
        "NOT intact: first problem at contract_residuals: append-only trigger "
        "contract_residuals_append_only_update is disabled",
        "  also contract_residuals: append-only trigger contract_residuals_append_only_delete "
        "is disabled",
        "  also contract_residuals: append-only trigger contract_residuals_append_only_truncate "
        "is disabled",
    ]


@pytest.mark.postgres
def test_postgres_a_guard_enabled_for_replicas_only(pg_store: str,
                                                    raw: psycopg.Connection) -> None:
    raw.execute("ALTER TABLE contract_residuals ENABLE REPLICA TRIGGER "
                "contract_residuals_append_only_delete")

    assert first_problem(refused_verify(pg_store).stderr) == (
        "contract_residuals: append-only trigger contract_residuals_append_only_delete fires "
        "only in replica sessions (ENABLE REPLICA)")


@pytest.mark.postgres
def test_postgres_the_reject_function_replaced_by_one_that_allows(
    pg_store: str, raw: psycopg.Connection
) -> None:
    raw.execute("CREATE OR REPLACE FUNCTION core_audit_reject_change() RETURNS trigger "
                "LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$")
    raw.execute("UPDATE contract_residuals SET explanation = 'nothing to see'")  # now allowed

    assert first_problem(refused_verify(pg_store).stderr) == (
        "ingest_batches: append-only trigger ingest_batches_append_only_update runs "
        "core_audit_reject_change() whose body was changed (it must reject the change)")


# --- (f) content forged under a real key -------------------------------------------------------


def test_sqlite_residual_content_forged_under_its_real_id(examples_store: Path) -> None:
    connection = raw_connect(examples_store)
    saved = connection.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in saved:
        connection.execute(f"DROP TRIGGER {name}")
    connection.execute("UPDATE contract_residuals SET residual_code = 'direction_unbound' "
                       "WHERE residual_id = ?", (CHANGED_OBJECT_UNBOUND,))
    for _, sql in saved:
        connection.execute(sql)
    connection.close()

    result = refused_verify(examples_store)

    assert (f"seq 6: contract_residuals {CHANGED_OBJECT_UNBOUND}: residual_id is not the hash "
            "of its content") in result.stderr


@pytest.mark.parametrize(("table", "key", "forgery"), [
    ("contract_assessments", "assessment_id", "problem_text = 'Tom lost 3 apples.'"),
    ("surface_records", "surface_id", "surface = 'light — reviewed by nobody'"),
    ("surface_occurrences", "occurrence_id", "prompt = 'Why does dark exist?'"),
    ("turns", "turn_key", "line = replace(line, 'Why does light exist?', 'Why not?')"),
])
def test_sqlite_forged_content_of_each_content_addressed_table(
    tmp_path: Path, table: str, key: str, forgery: str
) -> None:
    path = tmp_path / "audit.db"
    for name in ("adr_0225_frames.jsonl", "workbench_turn_journal.jsonl"):
        assert cli("ingest", "--db", path, REPO / "examples" / name).exit_code == 0
    connection = raw_connect(path)
    (seq, stored_key) = connection.execute(
        f"SELECT seq, {key} FROM {table} ORDER BY seq LIMIT 1").fetchone()
    saved = connection.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in saved:
        connection.execute(f"DROP TRIGGER {name}")
    assert connection.execute(f"UPDATE {table} SET {forgery} WHERE seq = ?", (seq,)).rowcount == 1
    for _, sql in saved:
        connection.execute(sql)
    connection.close()

    result = refused_verify(path)

    assert (f"seq {seq}: {table} {stored_key}: {key} is not the hash of its content"
            in result.stderr)


@pytest.mark.postgres
def test_postgres_residual_content_forged_in_a_replica_session(
    pg_store: str, raw: psycopg.Connection
) -> None:
    """session_replication_role = replica skips the guards for one session, leaving them intact."""
    raw.execute("SET session_replication_role = replica")
    raw.execute("UPDATE contract_residuals SET residual_code = 'direction_unbound' "
                "WHERE residual_id = %s", (CHANGED_OBJECT_UNBOUND,))

    result = refused_verify(pg_store)

    assert (f"seq 6: contract_residuals {CHANGED_OBJECT_UNBOUND}: residual_id is not the hash "
            "of its content") in result.stderr
