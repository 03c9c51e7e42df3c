"""The writers' advisory lock is the store's, not the database's (issue 32): two stores (two
schemas) in one PostgreSQL database never wait for each other's writers, while two writers of
one store still queue."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES, pg_schema
from cli_runs import subprocess_environ

from store.db.schema.engine import LEDGER_LOCK_KEY, create_store_engine, lock_log_tip

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

CORE_AUDIT = str(Path(sys.executable).with_name("core-audit"))


def _ingest(url: str, path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([CORE_AUDIT, "ingest", "--db", url, str(path)],
                            env=subprocess_environ(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _waiting_for_advisory_lock(engine_url: str) -> bool:
    engine = create_store_engine(engine_url)
    try:
        with engine.connect() as connection:
            return bool(connection.exec_driver_sql(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                f"AND classid = {LEDGER_LOCK_KEY} AND objid = "
                "hashtext(current_schema())::oid").scalar())
    finally:
        engine.dispose()


def test_a_writer_of_one_store_does_not_block_another_store_s(pg_url: str) -> None:
    with pg_schema() as other:
        for url in (pg_url, other):  # both stores exist, at head
            process = _ingest(url, EXAMPLE_FILES[0])
            assert process.wait(timeout=120) == 0
        holder = create_store_engine(pg_url, write=True)
        try:
            with holder.begin() as connection:
                lock_log_tip(connection)  # a writer of the first store, mid-batch

                free = _ingest(other, EXAMPLE_FILES[1])  # the other store's writer
                assert free.wait(timeout=120) == 0, free.stderr.read() if free.stderr else ""

                queued = _ingest(pg_url, EXAMPLE_FILES[1])  # the same store's writer waits
                for _ in range(600):
                    if _waiting_for_advisory_lock(pg_url) or queued.poll() is not None:
                        break
                    time.sleep(0.1)
                assert queued.poll() is None, "a second writer of one store did not queue"
                assert _waiting_for_advisory_lock(pg_url)
            assert queued.wait(timeout=120) == 0  # the lock released: it writes
        finally:
            holder.dispose()
