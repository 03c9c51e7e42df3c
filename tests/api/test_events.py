"""GET /events: a server-sent event when a new tree head exists, from one watcher per server
process shared by every client; bounded clients; heartbeat comments."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from browser_runs import serving
from cli_runs import subprocess_environ
from starlette.applications import Starlette
from starlette.routing import Route
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.api.events import TreeHeadWatcher, events_endpoint
from store.db.audit_store import AuditStore

WAIT = 60  # seconds a server may take to start on a loaded 2-core machine; not a measured limit


def journal(*turn_ids: int) -> list[str]:
    return [journal_line(journal_entry(n, f"Why does zorp {n} exist?", DISCLOSURE, "none",
                                       epistemic_state="undetermined",
                                       normative_clearance="suppressed",
                                       refusal_emitted=True)) for n in turn_ids]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store.db"
    with AuditStore.open(str(path)) as db:
        db.ingest(journal(1), source="turn_journal.jsonl")
    return path


def newest_head(path: Path) -> tuple[int, str]:
    with AuditStore.open(str(path), read_only=True) as db:
        head = db.probe()
    return head.tree_size, head.root_hash


def messages(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """The stream's messages as the EventSource spec cuts them: fields up to a blank line;
    a comment line (":") is its own message here, {"comment": text}."""
    fields: dict[str, str] = {}
    for line in lines:
        if line.startswith(":"):
            yield {"comment": line[1:].strip()}
        elif line:
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        elif fields:
            yield fields
            fields = {}


def next_event(stream: Iterator[dict[str, str]]) -> dict[str, str]:
    return next(m for m in stream if "comment" not in m and "retry" not in m)


@pytest.mark.slow
def test_a_client_of_a_real_server_hears_of_an_ingest(store: Path, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-c", "from store.cli import main; main()", "serve", "--db",
         str(store), "--port", str(port)],
        env=subprocess_environ(), stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "serve.err").open("wb"))
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + WAIT
        while True:
            assert server.poll() is None, (tmp_path / "serve.err").read_text()
            try:
                if httpx.get(f"{base}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"no answer within {WAIT} s"
            time.sleep(0.2)
        size, root = newest_head(store)
        with httpx.stream("GET", f"{base}/events", timeout=WAIT) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            assert response.headers["cache-control"] == "no-store"
            stream = messages(response.iter_lines())
            assert next(stream) == {"retry": "3000"}
            first = next_event(stream)  # the head when the client came
            assert first == {"event": "tree-head", "id": str(size),
                             "data": orjson.dumps({"tree_size": size,
                                                   "root_hash": root}).decode()}
            with AuditStore.open(str(store)) as db:  # another process appends a batch
                db.ingest(journal(1, 2), source="turn_journal.jsonl")
            grown, grown_root = newest_head(store)
            assert grown > size
            assert next_event(stream) == {
                "event": "tree-head", "id": str(grown),
                "data": orjson.dumps({"tree_size": grown, "root_hash": grown_root}).decode()}
    finally:
        server.terminate()
        server.wait(timeout=WAIT)  # no stream left open keeps it from exiting


class CountedStore:
    """A store whose tree-head reads are counted."""

    def __init__(self, db: AuditStore) -> None:
        self.db, self.reads, self.time_limit = db, 0, db.time_limit

    def probe(self) -> Any:
        self.reads += 1
        return self.db.probe()


def events_app(db: Any, *, max_clients: int) -> tuple[Starlette, TreeHeadWatcher]:
    watcher = TreeHeadWatcher(db, interval=0.05, max_clients=max_clients)
    return Starlette(routes=[Route("/events", events_endpoint(watcher, heartbeat=0.2))]), watcher


def test_clients_share_one_watcher_are_bounded_and_hear_heartbeats(store: Path) -> None:
    with AuditStore.open(str(store), read_only=True) as db:
        counted = CountedStore(db)
        app, watcher = events_app(counted, max_clients=3)
        size = str(newest_head(store)[0])
        with serving(app) as base, httpx.Client(base_url=base, timeout=WAIT) as client, \
                ExitStack() as listening:
            responses = [listening.enter_context(client.stream("GET", "/events"))
                         for _ in range(3)]
            streams = [messages(r.iter_lines()) for r in responses]
            assert [next_event(s)["id"] for s in streams] == [size] * 3
            assert watcher.clients == 3
            refused = client.get("/events")  # a fourth, over the bound
            assert refused.status_code == 503
            assert refused.headers["retry-after"] == "5"
            assert refused.json() == {
                "error": "too many event streams (at most 3); retry later"}
            reads_before, started = counted.reads, time.monotonic()
            for stream in streams:  # each hears a heartbeat comment, no event
                assert next(stream) == {"comment": "heartbeat"}
            rounds = (time.monotonic() - started) / watcher.interval
            # One read a round for all three clients (three would be one each).
            assert counted.reads - reads_before <= rounds + 2
        assert watcher.clients == 0


def test_a_client_back_with_last_event_id_hears_only_a_newer_head(store: Path) -> None:
    with AuditStore.open(str(store), read_only=True) as db:
        app, _ = events_app(db, max_clients=2)
        size = newest_head(store)[0]
        with serving(app) as base, httpx.Client(base_url=base, timeout=WAIT) as client:
            with client.stream("GET", "/events",
                               headers={"last-event-id": str(size)}) as current:
                stream = messages(current.iter_lines())
                assert next(stream) == {"retry": "3000"}
                assert next(stream) == {"comment": "heartbeat"}  # nothing new to tell
            with client.stream("GET", "/events",
                               headers={"last-event-id": str(size - 1)}) as behind:
                assert next_event(messages(behind.iter_lines()))["id"] == str(size)
