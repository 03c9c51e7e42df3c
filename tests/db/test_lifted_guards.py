"""The writer lifts the insert guards only inside its own write transaction: every state
another connection can see or write to has every guard, byte for byte as before the batch."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from raw_reads import query, trigger_definitions
from store_support import (
    HEAD_TRIGGERS,
    distinct_frames,
    raw_connect,
    refused_verify,
    row_counts,
    url_of,
)

from store import BatchRejected
from store.db.audit_store import AuditStore
from store.db.write.guard_lift import InsertGuards

# A residual's insert guard made a no-op, as an attacker with the file could leave it.
NO_OP_GUARD = (
    "CREATE TRIGGER contract_residuals_append_only_insert BEFORE INSERT ON contract_residuals "
    "WHEN 0 BEGIN SELECT RAISE(ABORT, 'contract_residuals is append-only: "
    "a row with this key exists'); END"
)


def _schema_version(path: Path) -> int:
    return int(query(path, "PRAGMA schema_version")[0][0])


def _lines(count: int, tag: str) -> list[bytes]:
    return [json.dumps(f).encode() + b"\n" for f in distinct_frames(count, tag)]


@pytest.fixture
def store_path(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "audit.db"
    AuditStore.open(url_of(path)).close()  # a new store at head: every guard, no batch
    assert {name for name, _, _ in trigger_definitions(path)} == HEAD_TRIGGERS
    yield path


@pytest.mark.parametrize("parallel", [False, True])
def test_a_batch_leaves_every_trigger_as_it_was(store_path: Path, parallel: bool) -> None:
    before, version = trigger_definitions(store_path), _schema_version(store_path)
    with AuditStore.open(url_of(store_path)) as store:
        summary = store.ingest(_lines(1200, "big"), "big.jsonl", parallel=parallel)
        assert summary.batch_id == 1
        assert store.verify().intact
    assert _schema_version(store_path) > version  # they were lifted: dropped and recreated
    assert trigger_definitions(store_path) == before


def test_a_batch_of_one_chunk_leaves_the_schema_untouched(store_path: Path) -> None:
    """Small batches (a journal's few lines) keep their guards: no schema change for the
    readers of a served store to notice."""
    before, version = trigger_definitions(store_path), _schema_version(store_path)
    with AuditStore.open(url_of(store_path)) as store:
        assert store.ingest(_lines(20, "small"), "small.jsonl").batch_id == 1
    assert (trigger_definitions(store_path), _schema_version(store_path)) == (before, version)


def test_while_a_batch_writes_other_connections_see_every_guard_and_cannot_write(
    store_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = trigger_definitions(store_path)
    seen: list[set[tuple[str, str, str]]] = []
    lifts: list[bool] = []
    lift = InsertGuards.lift

    def lift_counted(guards: InsertGuards) -> None:
        lifts.append(True)
        lift(guards)

    monkeypatch.setattr(InsertGuards, "lift", lift_counted)

    def lines() -> Iterator[bytes]:
        first, second = _lines(1500, "one"), _lines(600, "two")
        yield from first
        assert lifts  # the writer has lifted its guards by now
        other = sqlite3.connect(store_path, isolation_level=None, timeout=0)
        seen.append(trigger_definitions(store_path))
        with pytest.raises(sqlite3.OperationalError, match="database is locked"):
            other.execute("REPLACE INTO ingest_batches (batch_id) VALUES (1)")
        other.close()
        yield from second

    with AuditStore.open(url_of(store_path)) as store:
        store.ingest(lines(), "mid.jsonl", parallel=False)
    assert seen == [before]
    assert trigger_definitions(store_path) == before


def test_a_rejected_batch_leaves_every_guard_in_place(store_path: Path) -> None:
    before, counts = trigger_definitions(store_path), row_counts(store_path)
    bad = [*_lines(1200, "ok"), b"{not json\n"]  # rows flushed before the bad line
    with AuditStore.open(url_of(store_path)) as store, pytest.raises(BatchRejected):
        store.ingest(bad, "bad.jsonl", parallel=False)
    assert trigger_definitions(store_path) == before
    assert row_counts(store_path) == counts


def test_a_batch_whose_input_fails_mid_read_leaves_every_guard_in_place(
    store_path: Path,
) -> None:
    before, counts = trigger_definitions(store_path), row_counts(store_path)

    def lines() -> Iterator[bytes]:
        yield from _lines(1200, "cut")
        raise OSError("input went away")

    with AuditStore.open(url_of(store_path)) as store, pytest.raises(OSError, match="went"):
        store.ingest(lines(), "cut.jsonl", parallel=False)
    assert trigger_definitions(store_path) == before
    assert row_counts(store_path) == counts


def test_a_tampered_guard_stays_as_found_and_verify_still_reports_it(store_path: Path) -> None:
    with raw_connect(store_path) as connection:
        connection.execute("DROP TRIGGER contract_residuals_append_only_insert")
        connection.execute(NO_OP_GUARD)
        connection.execute("DROP TRIGGER surface_records_append_only_insert")
    tampered = trigger_definitions(store_path)
    with AuditStore.open(url_of(store_path)) as store:
        store.ingest(_lines(1200, "after"), "after.jsonl")  # a batch that lifts them
    assert trigger_definitions(store_path) == tampered  # neither repaired nor hidden
    assert "contract_residuals_append_only_insert" in refused_verify(store_path).stderr
