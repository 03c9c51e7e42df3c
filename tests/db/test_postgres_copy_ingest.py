"""PostgreSQL appends by COPY: the same rows, ids, leaves and tree sizes as by INSERT, and as
SQLite stores from the same input (docs/postgresql.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import EXAMPLE_FILES, pg_schema
from jsonl_files import gained_frame, write_jsonl
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from store.db.audit_store import AuditStore
from store.db.schema.record_kinds import LEDGERED_KEYS
from store.db.schema.tables import metadata
from store.db.write import inserts

pytestmark = pytest.mark.postgres


def _frames(count: int) -> list[dict[str, Any]]:
    """Text COPY must escape: tabs, newlines, backslashes, quotes, a \\N look-alike, unicode."""
    return [gained_frame(f"Zoë\t{i} gained {i % 5} \\N äpfel.\nThen \"lost\" them \\ {i % 7}.",
                         f"copy:{i}",
                         missing_bindings=["changed_object_unbound", "direction_unbound"][
                             : 1 + i % 2],
                         unresolved_hazards=["unit_object_conflict"] if i % 3 else [],
                         runnable=i % 4 == 0,
                         explanation="not runnable:\tline\nbreak \\ backslash",
                         sentence_index=None if i % 2 else 0)
            for i in range(count)]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    generated = write_jsonl(tmp_path_factory.mktemp("copy") / "generated.jsonl", _frames(300))
    journal = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"
    return [*EXAMPLE_FILES, journal, generated, generated]  # the last again: all "present"


def _build(url: str, inputs: list[Path], copy_min_rows: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(inserts, "COPY_MIN_ROWS", copy_min_rows)
        with AuditStore.open(url) as store:
            for path in inputs:
                store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)


def _dump(url: str) -> dict[str, list[dict[str, Any]]]:
    with AuditStore.open(url, read_only=True) as store, store.engine.connect() as connection:
        dump = {}
        for name in (*LEDGERED_KEYS, "tree_heads", "log_subtrees", "residual_tallies"):
            table = metadata.tables[name]
            rows = connection.execute(select(table).order_by(*table.primary_key.columns))
            # Batch rows hold their time: so do the leaves, subtrees and roots over them.
            dump[name] = [{k: v for k, v in r.items() if k not in (
                "ingested_at", "root_hash", "hash")} for r in rows.mappings()]
        return dump


@pytest.fixture(scope="module")
def dumps(inputs: list[Path], tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[dict[str, dict[str, list[dict[str, Any]]]]]:
    sqlite_url = f"sqlite:///{tmp_path_factory.mktemp('copy-sqlite') / 'audit.db'}"
    _build(sqlite_url, inputs, 1)
    with pg_schema() as by_copy, pg_schema() as by_insert:
        _build(by_copy, inputs, 1)  # every multi-row append by COPY
        _build(by_insert, inputs, 10**9)  # none
        with AuditStore.open(by_copy, read_only=True) as store:
            assert store.verify().intact
        yield {"copy": _dump(by_copy), "insert": _dump(by_insert), "sqlite": _dump(sqlite_url)}


def test_copy_stores_the_rows_insert_stores(dumps: dict[str, Any]) -> None:
    assert len(dumps["copy"]["contract_assessments"]) == 300 + 10
    assert any("\t" in r["problem_text"] and "\\N" in r["problem_text"]
               for r in dumps["copy"]["contract_assessments"])
    assert dumps["copy"] == dumps["insert"]


def test_copy_stores_what_sqlite_stores(dumps: dict[str, Any]) -> None:
    for table in LEDGERED_KEYS:
        assert dumps["copy"][table] == dumps["sqlite"][table], table


def test_a_refused_copy_raises_as_an_insert_would_and_writes_nothing(tmp_path: Path) -> None:
    with pg_schema() as url, AuditStore.open(url) as store:
        with store.engine.begin() as connection:
            row = (1, 1, "a" * 64, "t", "r", "organ", False, "[]", "[]", "e", "[]")
            columns = ("seq", "batch_id", *inserts.content_columns("contract_assessments"))
            with pytest.raises(IntegrityError):
                inserts.insert_values(connection, "contract_assessments", columns,
                                      [row] * inserts.COPY_MIN_ROWS)
        with store.engine.connect() as connection:
            count = connection.exec_driver_sql("SELECT count(*) FROM contract_assessments")
            assert count.scalar_one() == 0
