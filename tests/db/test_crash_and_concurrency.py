"""Killed mid-file, the store keeps its last commit; concurrent writers queue, never collide.

These run real `core-audit` processes, so they are marked slow (CI runs them too).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_runs import cli, subprocess_environ
from jsonl_files import write_jsonl
from raw_reads import trigger_definitions
from store_support import distinct_frames, row_counts

pytestmark = pytest.mark.slow

_CONSOLE_SCRIPT = Path(sys.executable).with_name("core-audit")
CORE_AUDIT = (
    [str(_CONSOLE_SCRIPT)] if _CONSOLE_SCRIPT.exists()
    else [sys.executable, "-c", "from store.cli import main; main()"]
)

# Reads in a loop until told to stop: every snapshot a reader sees must verify intact.
READER = """
import sys
from pathlib import Path
from store.db.audit_store import AuditStore

db, stop = sys.argv[1], Path(sys.argv[2])
rounds = 0
while not stop.exists() or rounds == 0:
    with AuditStore.open(db, read_only=True) as store:
        report = store.verify()
    if not report.intact:
        print("NOT intact:", report.first_problem, flush=True)
        sys.exit(1)
    rounds += 1
print(rounds, flush=True)
"""


def _start(*args: str | Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*CORE_AUDIT, *map(str, args)], env=subprocess_environ(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _clean_counts(tmp_path: Path, *files: Path) -> dict[str, int]:
    """Row counts after ingesting `files` in order into another fresh store."""
    reference = tmp_path / "reference.db"
    for file in files:
        assert cli("ingest", "--db", reference, file).exit_code == 0
    return row_counts(reference)


def _wait_until_writing(wal: Path, process: subprocess.Popen[bytes]) -> None:
    """Until the transaction has spilled pages into the -wal file (so it is mid-file)."""
    while process.poll() is None:
        if wal.exists() and wal.stat().st_size > 256 * 1024:
            return
        time.sleep(0.01)
    _, err = process.communicate()
    pytest.fail(f"ingest finished before it could be killed; make the file larger\n{err!r}")


def test_ingest_killed_mid_file_leaves_the_store_as_it_was(
    tmp_path: Path, db_path: Path, examples_path: Path
) -> None:
    big = write_jsonl(tmp_path / "big.jsonl", list(distinct_frames(4000, "crash")))
    assert cli("ingest", "--db", db_path, examples_path).exit_code == 0
    before, guards = row_counts(db_path), trigger_definitions(db_path)

    process = _start("ingest", "--db", db_path, big)
    _wait_until_writing(Path(f"{db_path}-wal"), process)
    process.send_signal(signal.SIGKILL)  # while its insert guards are lifted
    process.wait()
    assert process.returncode == -signal.SIGKILL

    verified = cli("verify", "--db", db_path)
    assert verified.exit_code == 0, verified.stderr
    assert row_counts(db_path) == before  # the killed batch is wholly absent
    assert trigger_definitions(db_path) == guards  # and every guard is there as it was

    assert cli("ingest", "--db", db_path, big).exit_code == 0
    assert cli("verify", "--db", db_path).exit_code == 0
    assert row_counts(db_path) == _clean_counts(tmp_path, examples_path, big)


def test_two_writers_and_a_reader_at_once(
    tmp_path: Path, db_path: Path, examples_path: Path
) -> None:
    first = write_jsonl(tmp_path / "first.jsonl", list(distinct_frames(1500, "one")))
    second = write_jsonl(tmp_path / "second.jsonl", list(distinct_frames(1500, "two")))
    assert cli("ingest", "--db", db_path, examples_path).exit_code == 0
    stop = tmp_path / "stop"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(db_path), str(stop)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    writers = [_start("ingest", "--db", db_path, file) for file in (first, second)]
    results = [writer.communicate() for writer in writers]
    stop.touch()
    reader_out, reader_err = reader.communicate()

    for writer, (_, err) in zip(writers, results, strict=True):
        assert writer.returncode == 0, err.decode()
        assert b"database is locked" not in err
    assert reader.returncode == 0, (reader_out + reader_err).decode()
    assert int(reader_out.split()[-1]) >= 1
    assert cli("verify", "--db", db_path).exit_code == 0
    assert row_counts(db_path) == _clean_counts(tmp_path, examples_path, first, second)


def test_writers_creating_a_new_store_at_once(tmp_path: Path, db_path: Path) -> None:
    """All find no store; one creates it at head, the others wait for it and then write."""
    files = [write_jsonl(tmp_path / f"{tag}.jsonl", list(distinct_frames(50, tag)))
             for tag in ("a", "b", "c", "d")]

    writers = [_start("ingest", "--db", db_path, file) for file in files]
    results = [writer.communicate() for writer in writers]

    for writer, (_, err) in zip(writers, results, strict=True):
        assert writer.returncode == 0, err.decode()
    assert cli("verify", "--db", db_path).exit_code == 0
    assert row_counts(db_path) == _clean_counts(tmp_path, *files)


def test_a_killed_writer_does_not_block_the_next_one(
    tmp_path: Path, db_path: Path
) -> None:
    """SQLite releases a dead process's locks: the next writer proceeds, no stale lock file."""
    big = write_jsonl(tmp_path / "big.jsonl", list(distinct_frames(4000, "stale")))
    small = write_jsonl(tmp_path / "small.jsonl", list(distinct_frames(10, "next")))
    assert cli("ingest", "--db", db_path, small).exit_code == 0
    process = _start("ingest", "--db", db_path, big)
    _wait_until_writing(Path(f"{db_path}-wal"), process)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()

    result = subprocess.run([*CORE_AUDIT, "ingest", "--db", str(db_path), str(small)],
                            env=subprocess_environ(), capture_output=True)

    assert result.returncode == 0, result.stderr.decode()
    assert b"0 new/" in result.stdout  # small was already in; the kill left nothing
