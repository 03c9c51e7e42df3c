"""Two fresh stores fed the same files in the same order hold the same ledger and ids."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_runs import cli
from jsonl_files import write_jsonl
from log_leaves import history
from store_support import distinct_frames, gained_frame, residual_ids

import store.db.write.writer as writer


class _FrozenClock:
    """The batch row's ingested_at is the one input besides the files; hold it still."""

    @staticmethod
    def now(tz: object = None) -> datetime:
        return datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def inputs(tmp_path: Path, examples_path: Path) -> list[Path]:
    more = write_jsonl(tmp_path / "more.jsonl", [
        gained_frame("Tom gained apples.", "delta_quantity_unbound"),
        gained_frame("Sam gained pears.", "delta_quantity_unbound"),
        *distinct_frames(50, "det"),
    ])
    return [examples_path, more, examples_path]


def _feed(path: Path, files: list[Path]) -> None:
    for file in files:
        assert cli("ingest", "--db", path, file).exit_code == 0


def test_same_files_same_order_give_byte_identical_ledgers(
    tmp_path: Path, inputs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer, "datetime", _FrozenClock)
    first, second = tmp_path / "first.db", tmp_path / "second.db"

    _feed(first, inputs)
    _feed(second, inputs)

    # examples 18; more.jsonl: Tom/Sam 2 assessments + 2 occurrences (their residual is
    # example B's), 50 frames x (2 assessments + 2 own residuals + 3 occurrences) + 2 shared
    # "apples" residuals (one per digit count), its batch; the examples again: nothing (no
    # new row, so no batch).
    assert len(history(first)) == 18 + (4 + 50 * 7 + 2 + 1)
    assert history(first) == history(second)
    assert residual_ids(first) == residual_ids(second)


def test_without_a_frozen_clock_only_the_batch_rows_hash_differently(
    tmp_path: Path, inputs: list[Path]
) -> None:
    """Ingest time is a leaf (in the batch row), so tree roots depend on it; rows don't."""
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    _feed(first, inputs)
    _feed(second, inputs)

    def record_hashes(path: Path) -> list[tuple]:
        return [entry for entry in history(path) if entry[1] != "ingest_batches"]

    assert record_hashes(first) == record_hashes(second)
    assert residual_ids(first) == residual_ids(second)
