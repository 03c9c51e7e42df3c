"""Ingest's second process and key filters: the same batch either way, nothing written when
the reading process fails, and no stored key ever taken for new."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import subprocess
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from cli_runs import cli
from hypothesis import given
from hypothesis import strategies as st
from jsonl_files import write_jsonl
from log_leaves import history
from store_support import distinct_frames, gained_frame, residual_ids, row_counts

import store.db.write.input_kinds as appended_rows
import store.db.write.row_builders as rows_module
import store.db.write.writer as writer
from store import BatchRejected
from store.db.audit_store import AuditStore
from store.db.write.key_filter import KeyFilter, stored_key_filter
from store.db.write.reading_process import (
    PARALLEL_MIN_BYTES,
    ReaderFailed,
    RowChunk,
    chunk_received,
    chunk_sent,
    worth_a_process,
)


class _FrozenClock:
    @staticmethod
    def now(tz: object = None) -> datetime:
        return datetime(2026, 12, 3, 9, 0, 0, tzinfo=UTC)


@pytest.fixture
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "datetime", _FrozenClock)


def _ingest(db: Path, source: Path, *, parallel: bool, **options: object) -> writer.BatchSummary:
    with AuditStore.open(str(db)) as store, source.open("rb") as stream:
        return store.ingest(stream, source=source.name, parallel=parallel, **options)


@pytest.mark.parametrize("chunk_rows", [5000, 7])
def test_a_second_process_writes_the_same_batch_byte_for_byte(
    tmp_path: Path, frozen_clock: None, monkeypatch: pytest.MonkeyPatch, chunk_rows: int,
) -> None:
    monkeypatch.setattr(writer, "CHUNK_ROWS", chunk_rows)
    first = write_jsonl(tmp_path / "first.jsonl", list(distinct_frames(40, "a")))
    # Repeats across and within files: residuals shared with the first file, a frame twice.
    again = gained_frame("Tom gained apples.", "delta_quantity_unbound")
    second = write_jsonl(tmp_path / "second.jsonl",
                         [again, *distinct_frames(30, "a"), *distinct_frames(20, "b"), again])
    stores = {}
    for parallel in (False, True):
        db = tmp_path / f"parallel-{parallel}.db"
        summaries = [_ingest(db, f, parallel=parallel).as_dict() for f in (first, second)]
        stores[parallel] = (history(db), residual_ids(db), summaries)
    assert stores[True] == stores[False]
    # First: 40 frames of 7 rows (2 assessments, 2 residuals of their own digit, 3
    # occurrences) + 2 "apples" residuals (one per digit count) + the batch row. Second: Tom's
    # frame (3 rows), 20 frames of tag "b" whose residuals tag "a" already stored (their
    # spans sit at the same offsets): 5 rows each, the batch row.
    assert len(history(tmp_path / "parallel-True.db")) == (40 * 7 + 2 + 1) + (3 + 20 * 5 + 1)


def test_a_bad_line_read_in_the_second_process_is_named_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    good = [json.dumps(f) for f in distinct_frames(5, "c")]
    source = tmp_path / "bad.jsonl"
    source.write_text("\n".join([*good[:3], "{not json", *good[3:], '{"problem_text": 5}']) + "\n")
    db = tmp_path / "store.db"
    with pytest.raises(BatchRejected) as rejected:
        _ingest(db, source, parallel=True)
    reasons = [(f.line, f.reason.split(":")[0]) for f in rejected.value.summary.failures]
    assert [line for line, _ in reasons] == [4, 7]
    assert reasons[0][1] == "malformed JSON"
    assert sum(row_counts(db).values()) == 0


def test_a_reading_process_that_dies_writes_nothing(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "frames.jsonl", list(distinct_frames(5, "d")))
    surface = {"grounding_source": "teaching", "surface": "x", "session_id": "s", "turn_id": "1"}
    with source.open("a") as stream:
        stream.write(json.dumps(surface) + "\n")  # needs the registry: the child calls it

    def dies() -> object:
        os._exit(3)

    db = tmp_path / "store.db"
    with pytest.raises(ReaderFailed, match="exited with code 3"):
        _ingest(db, source, parallel=True, registry=dies)
    assert sum(row_counts(db).values()) == 0


def test_an_error_in_the_reading_process_is_raised_as_it_is(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "surface.jsonl", [
        {"grounding_source": "teaching", "surface": "x", "session_id": "s", "turn_id": "1"}])

    def broken() -> object:
        raise LookupError("no corpora here")

    db = tmp_path / "store.db"
    with pytest.raises(LookupError, match="no corpora here"):
        _ingest(db, source, parallel=True, registry=broken)
    assert sum(row_counts(db).values()) == 0


def test_only_a_large_regular_file_gets_a_second_process(tmp_path: Path) -> None:
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"{}\n")
    large = tmp_path / "large.jsonl"
    large.write_bytes(b" " * PARALLEL_MIN_BYTES)
    with small.open("rb") as s, large.open("rb") as big:
        assert (worth_a_process(s), worth_a_process(big)) == (False, True)
    assert not worth_a_process([b"{}\n"])
    with subprocess.Popen(["cat", str(large)], stdout=subprocess.PIPE) as pipe:
        assert not worth_a_process(pipe.stdout)  # a pipe's size is unknown
        pipe.stdout.read()  # type: ignore[union-attr]


@pytest.mark.parametrize("fraction", [0, 8], ids=["lookups-only", "key-filter"])
def test_stored_keys_are_present_with_or_without_the_key_filter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fraction: int,
) -> None:
    """fraction 0 never builds the filter on a non-empty store; 8 builds it at once here."""
    monkeypatch.setattr(writer, "FILTER_AFTER_FRACTION", fraction)
    db = tmp_path / "store.db"
    first = write_jsonl(tmp_path / "first.jsonl", list(distinct_frames(10, "e")))
    _ingest(db, first, parallel=False)
    both = write_jsonl(tmp_path / "both.jsonl",
                       [*distinct_frames(10, "e"), *distinct_frames(3, "f")])
    summary = _ingest(db, both, parallel=False)
    counts = {t: (c.new, c.present) for t, c in summary.tables.items() if c.new or c.present}
    # Tag "f" frames 0-2 have their residuals in common with tag "e" frames 0-2 (same
    # offsets): 3 residual rows a frame, all stored already.
    assert counts == {
        "contract_assessments": (6, 20),
        "contract_residuals": (0, 39),
        "residual_occurrences": (9, 30),
    }


@given(st.lists(st.text(min_size=1, max_size=70), max_size=200))
def test_a_key_filter_never_rejects_a_key_it_holds(held: list[str]) -> None:
    key_filter = KeyFilter(capacity=len(held))
    key_filter.add_all(held)
    assert all(key_filter.may_hold(key) for key in held)


def test_a_key_filter_admits_few_keys_it_does_not_hold() -> None:
    held = [hashlib.sha256(f"held {i}".encode()).hexdigest() for i in range(20_000)]
    absent = [hashlib.sha256(f"absent {i}".encode()).hexdigest() for i in range(20_000)]
    key_filter = KeyFilter(capacity=len(held))
    key_filter.add_all(held)
    # 16 bits a key, 4 probes: about 0.24% expected; a lookup for each is all it costs.
    assert sum(key_filter.may_hold(key) for key in absent) < 200


def test_a_stores_key_filter_is_sized_by_its_tables_rows(tmp_path: Path) -> None:
    """Not by the log's size: at 10M occurrences each filter took 64 MiB where its table
    needed 16 (bench/scale.py's peak RSS)."""
    db = tmp_path / "store.db"
    _ingest(db, write_jsonl(tmp_path / "frames.jsonl", list(distinct_frames(10, "k"))),
            parallel=False)
    residuals = residual_ids(db)
    with AuditStore.open(str(db)) as store, store.engine.connect() as connection:
        built = stored_key_filter(connection, "contract_residuals", "residual_id",
                                  stored_rows=10_000_000)
    # 16 bits a key for the table's few rows and HEADROOM_KEYS (2^20) more: two bytes a key,
    # ~2 MiB; sized by 10M it would have been 22 MiB (and 32 MiB rounded up to a power of
    # two, as it was).
    assert 0 < len(residuals) < 100
    assert len(built._bits) == 2 * (len(residuals) + 2**20)
    assert all(built.may_hold(key) for key in residuals)


def _foreign_keys_setting(store: AuditStore) -> int:
    with store.engine.connect() as connection:
        return int(connection.exec_driver_sql("PRAGMA foreign_keys").scalar_one())


def test_the_writer_connection_gets_its_foreign_key_checks_back(tmp_path: Path) -> None:
    """A batch runs without SQLite's row-by-row checks; the pooled connection must not keep
    that setting, whether the batch was written or rejected."""
    good = write_jsonl(tmp_path / "good.jsonl", list(distinct_frames(3, "g")))
    bad = write_jsonl(tmp_path / "bad.jsonl", [*distinct_frames(2, "h"), {"not": "a frame"}])
    with AuditStore.open(str(tmp_path / "store.db")) as store:
        assert _foreign_keys_setting(store) == 1
        with good.open("rb") as stream:
            store.ingest(stream, source=good.name, parallel=False)
        assert _foreign_keys_setting(store) == 1
        with bad.open("rb") as stream, pytest.raises(BatchRejected):
            store.ingest(stream, source=bad.name, parallel=False)
        assert _foreign_keys_setting(store) == 1


def _drop_assessment_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader gone wrong: every chunk reaches the writer without its assessment rows."""
    original = writer.row_chunks

    def without_assessments(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        for chunk in original(*args, **kwargs):
            chunk.rows = [r for r in chunk.rows if r[1] != "contract_assessments"]
            yield chunk

    monkeypatch.setattr(writer, "row_chunks", without_assessments)


def test_a_row_referring_to_a_record_outside_store_and_batch_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the foreign keys refused, the writer refuses: here a reader gone wrong sends
    occurrences whose assessment rows it dropped."""
    db = tmp_path / "store.db"
    source = write_jsonl(tmp_path / "frames.jsonl", list(distinct_frames(4, "r")))
    _drop_assessment_rows(monkeypatch)
    with pytest.raises(appended_rows.BrokenReference, match=r"residual_occurrences row refers to"
                       r" contract_assessments [0-9a-f]{64}, which is neither stored nor in"):
        _ingest(db, source, parallel=False)
    assert row_counts(db) == dict.fromkeys(row_counts(db), 0)


def test_references_are_every_foreign_key_but_the_batch() -> None:
    assert appended_rows.REFERENCES == {
        "contract_assessments": (),
        "contract_residuals": (),
        "residual_occurrences": (("assessment_id", "contract_assessments"),
                                 ("residual_id", "contract_residuals")),
        "surface_records": (),
        "surface_occurrences": (("surface_id", "surface_records"),),
        "turns": (("surface_id", "surface_records"),),
        "turn_constructions": (("turn_key", "turns"),),
        "turn_assessments": (("assessment_id", "contract_assessments"),
                             ("turn_key", "turn_constructions")),
    }


def test_verify_names_rows_that_refer_to_records_not_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows in the log whose references dangle (a writer defect, or a tool writing without
    foreign key checks): verify names each, by seq, table, key and the missing record."""
    db = tmp_path / "store.db"
    source = write_jsonl(tmp_path / "frames.jsonl", list(distinct_frames(1, "o")))
    _drop_assessment_rows(monkeypatch)
    monkeypatch.setattr(writer, "check_references", lambda inserts, known: None)
    _ingest(db, source, parallel=False)

    result = cli("verify", "--db", db, "--json")

    assert result.exit_code == 1
    problems = json.loads(result.stdout)["problems"]
    # 1 frame: 2 assessments, 2 and 1 residuals; each residual row precedes its occurrence.
    assert len(problems) == 3, problems
    for problem, (seq, ordinal) in zip(problems, [(2, 0), (4, 1), (6, 0)], strict=True):
        assert re.fullmatch(
            rf"seq {seq}: residual_occurrences ([0-9a-f]{{64}})/{ordinal}: assessment_id refers"
            r" to contract_assessments \1, which is not stored", problem), problem


@pytest.mark.parametrize("parallel", [False, True])
def test_a_row_stored_with_other_content_under_its_key_refuses_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parallel: bool,
) -> None:
    """A later projection that orders an assessment's residuals otherwise gives its
    occurrence (assessment_id, 0) another residual: the stored row wins, the batch is
    refused at the line that disagrees, and nothing of it is written."""
    db = tmp_path / "store.db"
    source = write_jsonl(tmp_path / "frames.jsonl", list(distinct_frames(1, "c")))
    _ingest(db, source, parallel=parallel)
    stored = row_counts(db)
    original = rows_module.project_assessment
    monkeypatch.setattr(rows_module, "project_assessment",
                        lambda assessment: list(reversed(original(assessment))))

    with pytest.raises(BatchRejected) as refused:
        _ingest(db, source, parallel=parallel)

    [failure] = refused.value.summary.failures
    assert failure.line == 1
    assert re.fullmatch(r"residual_occurrences [0-9a-f]{64}/0 is already stored with"
                        r" different content", failure.reason), failure.reason
    assert row_counts(db) == stored


def test_a_chunk_crosses_between_the_processes_as_it_was_read() -> None:
    # Marshal carries the rows' str, int, bool, bytes and None; a value it cannot write
    # (here a Decimal) leaves the whole chunk to pickle: either way the same chunk arrives.
    plain = RowChunk(rows=[(1, "residual_occurrences", ("a" * 64, 0), ("a" * 64, 0, "b" * 64),
                            b"\x01" * 32, ("code", None)),
                           (2, "contract_assessments", ("c" * 64,), ("c" * 64, False), b"\x02" * 32,
                            None)],
                     failures=[(3, "malformed JSON")], records=2,
                     record_types={"assessment_frame"}, lines=3, bytes_read=120,
                     input_sha256="d" * 64)
    odd = RowChunk(rows=[(1, "t", ("k",), (Decimal("1.5"),), b"\x03" * 32, None)], lines=1)
    for chunk in (plain, odd):
        sent = chunk_sent(chunk)
        assert isinstance(sent, bytes) == (chunk is plain)
        arrived = chunk_received(pickle.loads(pickle.dumps(sent)))
        assert arrived == chunk
        assert [type(v) for v in arrived.rows[-1][3]] == [type(v) for v in chunk.rows[-1][3]]
