"""/healthz keeps answering while clients load the server and slow ones trickle (issue 21):
a bounded check (every probe 200, each within the server's time limit); the latency figures
are bench/healthz.py's."""

from __future__ import annotations

import multiprocessing
import sys
import time
from pathlib import Path

import pytest

from store.db.audit_store import AuditStore
from store.db.time_limit import DEFAULT_TIME_LIMIT

BENCH = Path(__file__).resolve().parents[2] / "bench"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.slow
def test_healthz_answers_every_probe_under_load_and_slow_clients(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import healthz  # bench/healthz.py: the same load, smaller
        from query import free_port, start_server
    finally:
        sys.path.remove(str(BENCH))
    db = str(tmp_path / "audit.db")
    with AuditStore.open(db) as store:
        for path in sorted(EXAMPLES.glob("*.jsonl")):
            store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
    port = free_port()
    server = start_server(db, port, 1)
    try:
        loader = multiprocessing.get_context("fork").Process(
            target=healthz.run_load, args=(port, 40, 10, 8.0))
        loader.start()
        time.sleep(2)
        taken = healthz.probe(port, 40, 0.1, time.monotonic() + 30)  # SystemExit on a non-200
        loader.join(timeout=60)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert len(taken) == 40
    assert max(taken) < DEFAULT_TIME_LIMIT  # answered, not timed out behind the load
