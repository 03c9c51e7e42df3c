"""`core-audit follow`: a real follower process tailing a journal another process appends to."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
from cli_runs import cli, subprocess_environ
from raw_reads import dump
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.cli.follow import Abandoned, StopRequest
from store.db.audit_store import AuditStore

WAIT_SECONDS = 60  # a loaded 2-core machine; the follower is told to poll every 20 ms


def line(turn_id: int) -> bytes:
    """Journal line `turn_id`, as CORE's TurnJournal.append writes it (with its newline)."""
    entry = journal_entry(turn_id, f"Why does zorp {turn_id} exist?", DISCLOSURE, "none",
                          epistemic_state="undetermined", normative_clearance="suppressed",
                          refusal_emitted=True)
    return (journal_line(entry) + "\n").encode("utf-8")


def journal_of(tmp_path: Path, *turn_ids: int) -> tuple[Path, Path]:
    """A journal holding turns `turn_ids`, and where its store will be."""
    journal = tmp_path / "turn_journal.jsonl"
    journal.write_bytes(b"".join(line(n) for n in turn_ids))
    return journal, tmp_path / "store.db"


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as journal:
        journal.write(data)


def stored_turn_ids(db: Path) -> list[int]:
    """The journal turns the store holds, in append order; [] before the store exists."""
    if not db.exists():
        return []
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
            return [turn_id for (turn_id,) in connection.execute(
                "SELECT turn_id FROM turns ORDER BY seq")]
    except sqlite3.OperationalError:  # created, its tables not yet committed
        return []


def wait_for_turns(db: Path, count: int, follower: subprocess.Popen[bytes]) -> list[int]:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        ids = stored_turn_ids(db)
        if len(ids) >= count:
            return ids
        assert follower.poll() is None, f"follow exited with {follower.returncode}"
        assert time.monotonic() < deadline, f"not {count} turns within {WAIT_SECONDS} s: {ids}"
        time.sleep(0.05)


@contextmanager
def following(journal: Path, db: Path, out: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`core-audit follow JOURNAL` as a process of its own, stdout and stderr into files."""
    process = subprocess.Popen(
        [sys.executable, "-c", "from store.cli import main; main()", "follow", str(journal),
         "--db", str(db), "--interval", "0.02"],
        env=subprocess_environ(), stdout=out.with_suffix(".out").open("wb"),
        stderr=out.with_suffix(".err").open("wb"))
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


# A second process appends the lines given, one write each, flushed, with a pause between:
# as CORE's file sink appends and flushes each line.
APPENDER = """
import sys, time
path, pause = sys.argv[1], float(sys.argv[2])
with open(path, "ab") as journal:
    for piece in sys.stdin.buffer.read().split(b"\\0"):
        journal.write(piece)
        journal.flush()
        time.sleep(pause)
"""


def appender(journal: Path, pieces: list[bytes], pause: float) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-c", APPENDER, str(journal), str(pause)],
                               stdin=subprocess.PIPE)
    assert process.stdin is not None
    process.stdin.write(b"\0".join(pieces))
    process.stdin.close()
    return process


def verified(db: Path) -> None:
    with AuditStore.open(str(db), read_only=True) as store:
        report = store.verify()
    assert report.intact, report.problems


@pytest.mark.slow
def test_appended_lines_become_batches_a_half_line_waits_and_sigterm_stops(
        tmp_path: Path) -> None:
    journal, db = journal_of(tmp_path, 1, 2)
    with following(journal, db, tmp_path / "follow") as follower:
        assert wait_for_turns(db, 2, follower) == [1, 2]
        writer = appender(journal, [line(n) for n in range(3, 11)], pause=0.05)
        assert writer.wait(timeout=WAIT_SECONDS) == 0
        assert wait_for_turns(db, 10, follower) == list(range(1, 11))
        half = line(11)
        append(journal, half[:40])  # written up to byte 40, its newline not yet
        time.sleep(1.0)  # fifty polls: a half line is not a line
        assert stored_turn_ids(db) == list(range(1, 11))
        append(journal, half[40:])
        assert wait_for_turns(db, 11, follower) == list(range(1, 12))
        follower.send_signal(signal.SIGTERM)
        assert follower.wait(timeout=WAIT_SECONDS) == 0
    assert "follow: stopped (SIGTERM)" in (tmp_path / "follow.err").read_text()
    verified(db)


@pytest.mark.slow
def test_killed_mid_way_and_restarted_nothing_is_duplicated_or_skipped(tmp_path: Path) -> None:
    journal, db = journal_of(tmp_path, 1)
    lines = [line(n) for n in range(2, 61)]
    with following(journal, db, tmp_path / "first") as follower:
        wait_for_turns(db, 1, follower)
        writer = appender(journal, lines, pause=0.02)
        wait_for_turns(db, 15, follower)
        follower.send_signal(signal.SIGKILL)  # kill -9, batches or not under way
        follower.wait(timeout=WAIT_SECONDS)
    assert writer.wait(timeout=WAIT_SECONDS) == 0  # CORE kept appending meanwhile
    stored_before = len(stored_turn_ids(db))
    assert stored_before < 60
    with following(journal, db, tmp_path / "second") as follower:
        ids = wait_for_turns(db, 60, follower)
        append(journal, line(61))
        ids = wait_for_turns(db, 61, follower)
        follower.send_signal(signal.SIGINT)  # Ctrl-C
        assert follower.wait(timeout=WAIT_SECONDS) == 0
    assert ids == list(range(1, 62))  # each turn once, none missing, in order
    assert "follow: stopped (SIGINT)" in (tmp_path / "second.err").read_text()
    verified(db)


@pytest.mark.slow
@pytest.mark.parametrize(("change", "where", "reason"), [
    ("truncated", 3, "the file was truncated: it ends before the end of line 3; lines 1-3 "
                     "were followed (stored)"),
    ("rewritten", 2, "line 2 is not the line 2 followed (stored): the file was rewritten or "
                     "replaced; a followed file is append-only"),
    ("replaced", 1, "line 1 is not the line 1 followed (stored): the file was rewritten or "
                    "replaced; a followed file is append-only"),
])
def test_a_truncated_rewritten_or_replaced_file_is_refused_naming_the_line(
        tmp_path: Path, change: str, where: int, reason: str) -> None:
    journal, db = journal_of(tmp_path, 1, 2, 3)
    with following(journal, db, tmp_path / "follow") as follower:
        wait_for_turns(db, 3, follower)
        time.sleep(0.2)
        before = dump(db)
        if change == "truncated":  # cut inside line 3
            data = line(1) + line(2) + line(3)[:-10]
            with journal.open("r+b") as file:
                file.truncate(len(data))
        elif change == "rewritten":  # in place, one write: another turn 2, then turns 3, 4
            other = journal_entry(2, "Why does zorp 2 matter?", DISCLOSURE, "none",
                                  epistemic_state="undetermined",
                                  normative_clearance="suppressed", refusal_emitted=True)
            with journal.open("r+b") as file:
                file.write(line(1) + (journal_line(other) + "\n").encode() + line(3) + line(4))
        else:  # another journal moved over it (a new inode), holding more lines
            other_file = tmp_path / "other.jsonl"
            other_file.write_bytes(line(1).replace(b"zorp 1", b"zorp one") + line(2) + line(3)
                                   + line(4))
            other_file.replace(journal)
        assert follower.wait(timeout=WAIT_SECONDS) == 2
    stderr = (tmp_path / "follow.err").read_text()
    assert f"{journal}:{where}: {reason}\n" in stderr
    assert f"{journal}: rejected, nothing written\n" in stderr
    assert dump(db) == before


@pytest.mark.slow
def test_a_line_core_would_reject_is_named_and_nothing_of_its_batch_is_written(
        tmp_path: Path) -> None:
    journal, db = journal_of(tmp_path, 1, 2)
    with following(journal, db, tmp_path / "follow") as follower:
        wait_for_turns(db, 2, follower)
        time.sleep(0.2)
        before = dump(db)
        bad = line(4).replace(b'"prompt":', b'"prompter":')  # not a journal field
        append(journal, line(3) + bad)  # one write: both lines in one batch
        assert follower.wait(timeout=WAIT_SECONDS) == 2
    stderr = (tmp_path / "follow.err").read_text()
    assert f"{journal}:4: prompter: not a journal field\n" in stderr
    assert f"{journal}: rejected, nothing written\n" in stderr
    assert dump(db) == before  # turn 3, good on its own, was not written either


def test_standard_input_and_a_missing_file_are_refused_before_a_store_exists(
        tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    missing = cli("follow", tmp_path / "nope.jsonl", "--db", db)
    assert missing.exit_code == 1
    assert f"{tmp_path / 'nope.jsonl'}: cannot open: No such file or directory" in missing.stderr
    piped = cli("follow", "-", "--db", db)
    assert piped.exit_code == 1
    assert "-: standard input cannot be followed; name a file" in piped.stderr
    assert not db.exists()


def test_a_second_signal_during_a_batch_abandons_it_and_between_batches_only_stops() -> None:
    stop = StopRequest()
    stop(signal.SIGTERM, None)
    assert stop.signal == signal.SIGTERM  # the loop ends after the batch under way
    stop(signal.SIGINT, None)  # between batches: nothing under way to abandon
    stop.in_batch = True
    with pytest.raises(Abandoned):  # raised in the writer: its transaction rolls back
        stop(signal.SIGINT, None)
