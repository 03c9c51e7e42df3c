"""A writer killed with kill -9 never wedges the store (issue 32): its reading process (an
input of 4 MiB or more is read in a forked process) dies with it, holds none of its database
connections, and the next ingest proceeds, on both backends."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES, libpq_url
from cli_runs import subprocess_environ
from jsonl_files import write_jsonl
from store_support import distinct_frames

from store.db.schema.engine import LEDGER_LOCK_KEY
from store.db.write.reading_process import PARALLEL_MIN_BYTES

pytestmark = pytest.mark.slow

CORE_AUDIT = str(Path(sys.executable).with_name("core-audit"))
KILLS = 3
SEED = 20261206


def _children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid:
            found.append(int(name))
    return found


def _alive(pid: int) -> bool:
    """Running or sleeping: a zombie (dead, waiting to be reaped) holds nothing."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _wait(condition, seconds: float = 30) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def large_input(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = write_jsonl(tmp_path_factory.mktemp("large") / "frames.jsonl",
                       distinct_frames(9000, "killed"))
    assert path.stat().st_size >= PARALLEL_MIN_BYTES  # read in a second process
    return path


def _lock_holders(url: str) -> list[tuple[object, ...]]:
    """The sessions holding this store's writers' lock (pid, state)."""
    import psycopg

    with psycopg.connect(libpq_url(url), autocommit=True) as connection:
        return connection.execute(
            "SELECT a.pid, a.state FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
            f"WHERE l.locktype = 'advisory' AND l.classid = {LEDGER_LOCK_KEY} "
            "AND l.objid = hashtext(current_schema())::oid").fetchall()


def test_kill_9_of_the_writer_leaves_no_reader_and_no_lock(backend_url: str,
                                                           large_input: Path) -> None:
    environ = subprocess_environ()
    first = subprocess.run([CORE_AUDIT, "ingest", "--db", backend_url, str(EXAMPLE_FILES[0])],
                           env=environ, capture_output=True, timeout=300, check=False)
    assert first.returncode == 0, first.stderr
    delays = random.Random(SEED).sample([0.0, 0.2, 0.5, 1.0, 2.0], KILLS)
    killed_with_reader = 0
    for delay in delays:
        writer = subprocess.Popen([CORE_AUDIT, "ingest", "--db", backend_url, str(large_input)],
                                  env=environ, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        assert _wait(lambda w=writer: bool(_children(w.pid)) or w.poll() is not None)
        readers = _children(writer.pid)
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
        killed_with_reader += bool(readers)
        # The reading process dies with its writer, whatever point it was at.
        assert _wait(lambda r=readers: not any(_alive(pid) for pid in r)), readers
        if not backend_url.startswith("sqlite"):
            # No session of the killed writer lives on, idle in transaction, holding the lock.
            assert _wait(lambda: not _lock_holders(backend_url)), _lock_holders(backend_url)
        after = subprocess.run([CORE_AUDIT, "ingest", "--db", backend_url,
                                str(EXAMPLE_FILES[1])],
                               env=environ, capture_output=True, timeout=300, check=False)
        assert after.returncode == 0, after.stderr  # the next ingest proceeds
    assert killed_with_reader == KILLS
    verify = subprocess.run([CORE_AUDIT, "verify", "--db", backend_url], env=environ,
                            capture_output=True, text=True, timeout=600, check=False)
    assert verify.returncode == 0, verify.stderr
