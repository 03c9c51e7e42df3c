"""The same revisions on PostgreSQL: pytest-alembic's checks, triggers after every revision,
rows kept, and a failed upgrade that leaves the schema as it was (transactional DDL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from backends import libpq_url, raw_query
from pytest_alembic.tests import (
    test_model_definitions_match_ddl,
    test_single_head_revision,
    test_up_down_consistency,
    test_upgrade,
)
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from store_support import copy_migrations, revision_of, revision_source, revisions_oldest_first

from store.db.schema.engine import create_store_engine
from store.db.schema.record_kinds import LEDGERED_KEYS
from store.db.schema.schema_version import (
    downgrade,
    head_revision,
    upgrade,
)
from store.db.write.writer import append_batch

HEAD = head_revision()  # this checkout's newest revision

pytestmark = pytest.mark.postgres

__all__ = [
    "test_model_definitions_match_ddl",
    "test_single_head_revision",
    "test_up_down_consistency",
    "test_upgrade",
]

PG_OPS = ("update", "delete", "truncate")


@pytest.fixture
def alembic_engine(pg_url: str) -> Iterator[Engine]:
    """pytest-alembic's built-in tests run on an empty PostgreSQL schema here."""
    engine = create_store_engine(pg_url)
    yield engine
    engine.dispose()


def _tables(url: str) -> set[str]:
    rows = raw_query(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    return {r[0] for r in rows} - {"alembic_version"}  # type: ignore[misc]


def _triggers(url: str) -> set[str]:
    rows = raw_query(url, "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = "
                          "t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                          "WHERE NOT t.tgisinternal AND n.nspname = current_schema()")
    return {r[0] for r in rows}  # type: ignore[misc]


def _expected_triggers(tables: set[str]) -> set[str]:
    return {f"{t}_append_only_{op}" for t in tables for op in PG_OPS}


def _ingest(url: str, path: Path) -> None:
    engine = create_store_engine(url, write=True)
    try:
        with path.open("rb") as stream:
            append_batch(engine, stream, "examples")
    finally:
        engine.dispose()


def _snapshot(url: str) -> dict[str, object]:
    """The schema's catalog (tables, columns, indexes, triggers) and every row."""
    snapshot: dict[str, object] = {
        "columns": raw_query(url, "SELECT table_name, column_name, data_type, is_nullable "
                                  "FROM information_schema.columns WHERE table_schema = "
                                  "current_schema() ORDER BY 1, 2"),
        "indexes": raw_query(url, "SELECT indexname, indexdef FROM pg_indexes "
                                  "WHERE schemaname = current_schema() ORDER BY 1"),
        "triggers": sorted(_triggers(url)),
        "functions": raw_query(url, "SELECT p.proname FROM pg_proc p JOIN pg_namespace n "
                                    "ON n.oid = p.pronamespace WHERE n.nspname = "
                                    "current_schema() ORDER BY 1"),
    }
    for table in sorted(_tables(url) | {"alembic_version"}):
        snapshot[table] = raw_query(url, f"SELECT * FROM {table} ORDER BY 1")
    return snapshot


def test_append_only_triggers_exist_after_every_revision_and_downgrade(pg_url: str) -> None:
    revisions = revisions_oldest_first()
    for revision in revisions:
        upgrade(pg_url, revision)
        tables = _tables(pg_url)
        assert tables, revision
        assert _triggers(pg_url) == _expected_triggers(tables), revision
    for revision in reversed(revisions[:-1]):
        downgrade(pg_url, revision)
        assert _triggers(pg_url) == _expected_triggers(_tables(pg_url)), revision
    downgrade(pg_url, "base")
    assert _tables(pg_url) == set() and _triggers(pg_url) == set()
    assert revision_of(pg_url) is None


def test_rows_survive_downgrade_and_upgrade(pg_url: str, examples_path: Path) -> None:
    upgrade(pg_url, "head")
    _ingest(pg_url, examples_path)
    before = _snapshot(pg_url)
    assert before["residual_tallies"] and before["sighting_counts"]
    downgrade(pg_url, "0002")  # drops the derived tallies and sighting counts only
    after = _snapshot(pg_url)
    assert "residual_tallies" not in after and "sighting_counts" not in after
    assert before["turns"] == []  # revision 0005's table: dropped by the downgrade
    assert before["turn_constructions"] == before["turn_assessments"] == []  # 0012's, too
    ledgered = [t for t in LEDGERED_KEYS
                if t not in ("turns", "turn_constructions", "turn_assessments")]
    assert {t: after[t] for t in ledgered} == {t: before[t] for t in ledgered}
    upgrade(pg_url, "head")  # backfills them: the same rows the writer wrote
    assert _snapshot(pg_url) == before


FAILING_REVISION = revision_source(
    "9001", HEAD,
    upgrade="""\
op.create_table("half_done", sa.Column("id", sa.Integer(), primary_key=True))
op.execute("INSERT INTO half_done (id) VALUES (1)")
op.execute("DROP TRIGGER tree_heads_append_only_delete ON tree_heads")
raise RuntimeError("this revision fails after creating a table")""",
    doc="test: creates a table, drops a trigger, then fails",
)


def test_a_failed_upgrade_leaves_the_schema_as_it_was(tmp_path: Path, pg_url: str,
                                                      examples_path: Path) -> None:
    scripts = copy_migrations(tmp_path, {"9001_fails.py": FAILING_REVISION})
    upgrade(pg_url, HEAD, scripts)
    _ingest(pg_url, examples_path)
    before = _snapshot(pg_url)
    with pytest.raises((RuntimeError, SQLAlchemyError), match="this revision fails"):
        upgrade(pg_url, "head", scripts)
    assert _snapshot(pg_url) == before
    assert revision_of(pg_url) == HEAD
    assert "half_done" not in _tables(pg_url)


POSITIONS = {  # revision 0007: every place a log position is stored
    ("contract_assessments", "seq"), ("contract_residuals", "seq"), ("ingest_batches", "seq"),
    ("residual_occurrences", "seq"), ("surface_occurrences", "seq"), ("surface_records", "seq"),
    ("turns", "seq"), ("tree_heads", "tree_size"), ("log_subtrees", "start"),
}
PAST_INT32 = 2**31 + 256  # a subtree start no 32-bit INTEGER holds


def _position_types(url: str) -> set[tuple[object, ...]]:
    return set(raw_query(url, "SELECT table_name, column_name, data_type FROM "
                              "information_schema.columns WHERE table_schema = "
                              "current_schema() AND column_name IN ('seq', 'tree_size', 'start')"))


def _stores_past_int32(url: str) -> bool:
    """Whether a subtree row at a start past 2**31 - 1 is accepted (then rolled back)."""
    with psycopg.connect(libpq_url(url)) as connection:
        try:
            connection.execute("INSERT INTO log_subtrees (level, start, hash) VALUES (8, %s, %s)",
                               (PAST_INT32, "0" * 64))
        except psycopg.errors.NumericValueOutOfRange:
            return False
        finally:
            connection.rollback()
    return True


def test_log_positions_hold_more_than_two_billion_rows(pg_url: str, examples_path: Path) -> None:
    upgrade(pg_url, "head")  # the writer writes head's tables: written there, taken back
    _ingest(pg_url, examples_path)
    downgrade(pg_url, "0006")
    assert not _stores_past_int32(pg_url)  # INTEGER: ingest would stop at 2**31 - 1 rows
    before = _snapshot(pg_url)

    upgrade(pg_url, "0007")  # the revision that widened them; later ones add their own tables
    assert _position_types(pg_url) == {(t, c, "bigint") for t, c in POSITIONS}
    assert _stores_past_int32(pg_url)
    after = _snapshot(pg_url)
    at_0007 = [t for t in LEDGERED_KEYS if t not in ("turn_constructions", "turn_assessments")]
    assert {t: after[t] for t in at_0007} == {t: before[t] for t in at_0007}
    assert sorted(_triggers(pg_url)) == before["triggers"]

    downgrade(pg_url, "0006")
    assert _position_types(pg_url) == {(t, c, "integer") for t, c in POSITIONS}
    assert _snapshot(pg_url) == before
