"""On PostgreSQL the store is append-only against any connection, and the API cannot write.

Raw psycopg connections stand in for psql or any other client that bypasses core-audit.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from backends import libpq_url, raw_query
from construction_data import construction_journal
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from store.db.audit_store import AuditStore
from store.db.queries import QueryTimeout
from store.db.schema.record_kinds import APPEND_ONLY_TABLES
from store.db.schema.tables import metadata
from store.model.checkpoint import COSIGNATURE_V1, SignerKey
from store.model.cosignature import cosign

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = [REPO / "examples" / name for name in (
    "adr_0225_frames.jsonl", "core_frames_families.jsonl", "adr_0052_surfaces.jsonl",
    "workbench_turn_journal.jsonl")]
RESTRICT_VIOLATION = "23001"


def _frames(count: int) -> list[str]:
    """Distinct refused frames: enough leaves (> 256) for the log to store a subtree."""
    return [json.dumps({"problem_text": f"Tom gained {i} apples.", "contract_assessments": [{
        "candidate_organ": "unary_delta_transition", "missing_bindings": ["direction_unbound"],
        "unresolved_hazards": [], "runnable": False, "explanation": "not runnable",
        "evidence_spans": [{"text": "gained", "start": 4, "end": 10}]}]})
        for i in range(count)]


@pytest.fixture
def pg_store(pg_url: str) -> str:
    """A PostgreSQL store holding the examples, a log subtree and an origin: every table has
    rows."""
    with AuditStore.open(pg_url) as store:
        for path in EXAMPLES:
            store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
        store.ingest(_frames(100), source="frames.jsonl")
        store.ingest(construction_journal(), source="constructions.jsonl")
        store.checkpoint("audit.example.org/core")  # the origin chosen: log_origin has a row
        witness = SignerKey("w", b"\x02" * 32, COSIGNATURE_V1)
        kept = store.keep_checkpoint([SignerKey("log", b"\x01" * 32)])
        store.add_cosignatures(kept.checkpoint_id, [cosign(store.checkpoint().body(), witness,
                                                           1)], [witness.verifier])
    return pg_url


@pytest.fixture
def raw(pg_store: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(libpq_url(pg_store), autocommit=True) as connection:
        yield connection


def _rejected(connection: psycopg.Connection, sql: str) -> str:
    with pytest.raises(psycopg.Error) as caught:
        connection.execute(sql)
    assert caught.value.sqlstate == RESTRICT_VIOLATION, caught.value
    return str(caught.value)


def _counts(url: str) -> dict[str, int]:
    return {t: raw_query(url, f"SELECT count(*) FROM {t}")[0][0]  # type: ignore[misc]
            for t in APPEND_ONLY_TABLES}


@pytest.mark.parametrize("table", APPEND_ONLY_TABLES)
def test_update_delete_truncate_are_rejected(raw: psycopg.Connection, pg_store: str,
                                             table: str) -> None:
    before = _counts(pg_store)
    assert before[table] > 0
    column = next(iter(metadata.tables[table].primary_key.columns)).name
    assert "UPDATE rejected" in _rejected(raw, f"UPDATE {table} SET {column} = {column}")
    assert "DELETE rejected" in _rejected(raw, f"DELETE FROM {table}")
    assert "TRUNCATE rejected" in _rejected(raw, f"TRUNCATE {table} CASCADE")
    assert _counts(pg_store) == before
    assert _verify(pg_store)


@pytest.mark.parametrize("table", APPEND_ONLY_TABLES)
def test_on_conflict_do_update_cannot_swap_a_row(raw: psycopg.Connection, pg_store: str,
                                                 table: str) -> None:
    t = metadata.tables[table]
    keys = [c.name for c in t.primary_key.columns]
    columns = [c.name for c in t.columns]
    row = raw.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {', '.join(keys)} "
                      "LIMIT 1").fetchone()
    assert row is not None
    sql = (f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
           f"({', '.join(['%s'] * len(columns))}) ON CONFLICT ({', '.join(keys)}) "
           f"DO UPDATE SET {columns[-1]} = EXCLUDED.{columns[-1]}")
    with pytest.raises(psycopg.Error) as caught:
        raw.execute(sql, row)
    assert caught.value.sqlstate == RESTRICT_VIOLATION
    # A plain insert of an existing key is a key violation; the stored row is untouched.
    with pytest.raises(psycopg.errors.UniqueViolation):
        raw.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                    f"({', '.join(['%s'] * len(columns))})", row)
    assert _verify(pg_store)


def _verify(url: str) -> bool:
    with AuditStore.open(url, read_only=True) as store:
        return store.verify().intact


def test_a_dropped_trigger_is_reported_by_verify(raw: psycopg.Connection, pg_store: str) -> None:
    raw.execute("DROP TRIGGER tree_heads_append_only_delete ON tree_heads")
    with AuditStore.open(pg_store, read_only=True) as store:
        report = store.verify()
    assert [str(p) for p in report.problems] == [
        "tree_heads: append-only trigger tree_heads_append_only_delete is missing"]


def test_the_api_engine_cannot_write(pg_store: str) -> None:
    database = AuditStore.open(pg_store, read_only=True)
    try:
        for statement in ("DELETE FROM tree_heads", "CREATE TABLE intruder (x integer)",
                          "INSERT INTO ingest_batches (batch_id) VALUES (99)"):
            with pytest.raises(DBAPIError, match="read-only transaction"), \
                    database.engine.begin() as connection:
                connection.exec_driver_sql(statement)
    finally:
        database.close()
    assert _verify(pg_store)


def test_the_time_limit_stops_a_runaway_query(pg_store: str) -> None:
    database = AuditStore.open(pg_store, read_only=True, time_limit=0.3)
    try:
        def runaway(connection: object) -> None:  # test-only hook, as tests/api does for SQLite
            connection.execute(text("SELECT pg_sleep(5)"))  # type: ignore[attr-defined]

        with pytest.raises(QueryTimeout, match="ran past the request's time limit"):
            database.execute(runaway)
        # The connection goes back to the pool usable, without the limit left set.
        database.time_limit = 30
        assert database.execute(
            lambda c: c.execute(text("SELECT count(*) FROM tree_heads")).scalar_one()) > 0
        assert database.execute(
            lambda c: c.execute(text("SHOW statement_timeout")).scalar_one()) != "300ms"
    finally:
        database.close()


# --- docs/postgresql.md's SELECT-only role for the API server ---------------------------------


def _readme_role_snippet() -> str:
    page = (REPO / "docs" / "postgresql.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sql\n(.*?)```", page, flags=re.S)
    assert len(blocks) == 1, "the PostgreSQL page shows one SQL snippet: the reader role"
    return blocks[0]


def test_the_readme_select_only_role_reads_and_cannot_write(pg_store: str) -> None:
    schema = make_url(pg_store).query["options"].split("=", 1)[1]
    role = f"core_audit_api_{uuid.uuid4().hex[:12]}"
    snippet = _readme_role_snippet()
    assert "core_audit_api" in snippet and "core_audit_store" in snippet
    sql = snippet.replace("core_audit_api", role).replace("core_audit_store", schema)
    with psycopg.connect(libpq_url(pg_store), autocommit=True) as admin:
        try:
            for statement in filter(None, (s.strip() for s in sql.split(";"))):
                admin.execute(statement)
            reader_url = make_url(pg_store).set(username=role, password=None)
            reader = reader_url.render_as_string(hide_password=False)
            # Reads work, through the API's own path (revision check included) ...
            database = AuditStore.open(reader, read_only=True)
            try:
                assert database.execute(
                    lambda c: c.execute(text("SELECT count(*) FROM tree_heads")).scalar_one()
                ) == raw_query(pg_store, "SELECT count(*) FROM tree_heads")[0][0]
            finally:
                database.close()
            with AuditStore.open(reader, read_only=True) as store:
                assert store.verify().intact
            # ... and a plain read-write connection as that role cannot write.
            with psycopg.connect(libpq_url(reader), autocommit=True) as connection:
                assert connection.execute("SELECT count(*) FROM contract_residuals").fetchone()
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    connection.execute("INSERT INTO ingest_batches (batch_id) VALUES (99)")
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    connection.execute("CREATE TABLE intruder (x integer)")
        finally:
            if _role_exists(admin, role):
                admin.execute(f'DROP OWNED BY "{role}" CASCADE')  # its grants
                admin.execute(f'DROP ROLE "{role}"')


def _role_exists(connection: psycopg.Connection, role: str) -> bool:
    return connection.execute("SELECT 1 FROM pg_roles WHERE rolname = %s",
                              (role,)).fetchone() is not None
