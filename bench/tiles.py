"""Tiles and witness benchmark: C2SP tiles served per second and a full tile's fetch time on a
large store, and a witness round trip, each beside a floor measured in the same run.

    .venv/bin/python bench/tiles.py [--db /tmp/core-audit-bench-tiles.db]
                                    [--occurrences 420000] [--requests 300] [--seed 0]

Uses the store `--db` names if it exists; otherwise generates frames (bench/frames.py) and
ingests them (420,000 occurrences make about a million leaves). Keeps a signed checkpoint in
it (a throwaway key) if it has none. The app runs on a real socket in this process (uvicorn),
requests go over one keep-alive connection (http.client), rounds interleaved:

- tiles/s: full level-0 tiles at random positions (hashes recomputed from 256 rows each),
  full level-1 tiles (stored subtrees), entry bundles; floor: GET /healthz on the same server
  (the HTTP stack and one read), and the same level-0 tile's rows read and hashed in this
  process (the store's own row reader, no HTTP);
- the witness: POST add-checkpoint (signature, proof, state fsync, cosignature) to `witness
  serve`'s app; floor: a POST to an app that only answers 200 on the same kind of server.

Prints figures only; it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import random
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query import build_store

from store.api.app import create_app
from store.api.witness_server import Witness, WitnessState, create_witness_app
from store.db.audit_store import AuditStore
from store.db.log.kept_checkpoints import newest_kept_checkpoint
from store.db.log.stored_log import leaf_rows, log_entry
from store.model.checkpoint import COSIGNATURE_V1, SignerKey
from store.model.tiles.layout import Tile
from store.model.witness import request_body

LOG_KEY = SignerKey("bench.example/log", b"\x11" * 32)
WITNESS_KEY = SignerKey("bench-witness.example", b"\x22" * 32, COSIGNATURE_V1)


@contextmanager
def serving(app: Starlette) -> Iterator[int]:
    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # accepted sockets inherit it
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_keep_alive=300))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield int(sock.getsockname()[1])
    finally:
        server.should_exit = True
        thread.join()


def timed(call: Callable[[], object], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def getter(port: int, method: str = "GET", body: bytes | None = None
           ) -> Callable[[str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port)

    def connect() -> None:
        connection.close()
        connection.connect()
        # headers and body leave in separate writes: without this, delayed ACKs add ~40 ms
        connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    connect()

    def fetch(path: str) -> bytes:
        try:
            connection.request(method, path, body=body)
            response = connection.getresponse()
        except (http.client.RemoteDisconnected, ConnectionError):
            connect()  # the server closed an idle connection: once more on a new one
            connection.request(method, path, body=body)
            response = connection.getresponse()
        data = response.read()
        if response.status != 200:
            raise SystemExit(f"{method} {path}: {response.status} {data[:200]!r}")
        return data

    return fetch


def report(name: str, times: list[float], floor: list[float] | None = None) -> None:
    median = statistics.median(times)
    versus = f"  {median / statistics.median(floor):6.1f}x floor" if floor else ""
    print(f"{name:44} {1 / median:9.0f}/s  median {median * 1000:7.2f} ms  "
          f"best {min(times) * 1000:7.2f} ms{versus}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="/tmp/core-audit-bench-tiles.db",
                        help="store path (default: %(default)s); reused if it exists, else "
                             "built there (about 660 MB at the default size; delete it after)")
    parser.add_argument("--occurrences", type=int, default=420_000,
                        help="residual occurrences to generate if the store must be built")
    parser.add_argument("--requests", type=int, default=300, help="requests per measured figure")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated frames")
    args = parser.parse_args()

    if not Path(args.db).exists():
        # Say where the disk goes before it goes: the default store is about 660 MB.
        print(f"building {args.db} ({args.occurrences:,} occurrences, about "
              f"{args.occurrences * 1_600 // 1_000_000:,} MB; kept for the next run, delete it "
              "after)", flush=True)
        build_store(args.db, args.occurrences, args.seed)
    with AuditStore.open(args.db) as store:
        with store.engine.connect() as connection:
            kept = newest_kept_checkpoint(connection)
        if kept is None:
            kept = store.keep_checkpoint([LOG_KEY], store.origin() or "bench.example/log")
        size = store.tree_head().size
    print(f"store {args.db}: {size} leaves; kept checkpoint of size {kept.tree_size}")
    rng = random.Random(args.seed)
    full0 = size // 256

    def floor_rows() -> None:  # the rows of one level-0 tile, read and hashed, no HTTP
        start = rng.randrange(full0) * 256
        for _, table, row in leaf_rows(raw_connection, start, start + 256):
            hashlib.sha256(b"\x00" + log_entry(table, row)).digest()

    db = AuditStore.open(args.db, read_only=True)
    raw_connection = db.engine.connect()
    with serving(create_app(db)) as port:
        fetch = getter(port)
        fetch("/healthz")
        rounds = args.requests
        results: dict[str, list[float]] = {}
        for _ in range(3):  # interleaved
            results.setdefault("floor: GET /healthz", []).extend(
                timed(lambda: fetch("/healthz"), rounds // 3))
            results.setdefault("level-0 full tile (256 rows hashed)", []).extend(timed(
                lambda: fetch("/log/" + Tile(0, rng.randrange(full0)).path()), rounds // 3))
            results.setdefault("level-1 full tile (stored subtrees)", []).extend(timed(
                lambda: fetch("/log/" + Tile(1, rng.randrange(max(1, size // 65536))).path()),
                rounds // 3) if size >= 65536 else [])
            results.setdefault("entry bundle (256 entries)", []).extend(timed(
                lambda: fetch("/log/" + Tile(None, rng.randrange(full0)).path()), rounds // 3))
            results.setdefault("the newest full level-0 tile", []).extend(timed(
                lambda: fetch("/log/" + Tile(0, full0 - 1).path()), rounds // 3))
            results.setdefault("floor: 256 rows read + hashed, no HTTP", []).extend(
                timed(floor_rows, rounds // 3))
        floor = results["floor: GET /healthz"]
        for name, times in results.items():
            if times:
                report(name, times, None if name.startswith("floor") else floor)
    raw_connection.close()
    db.close()

    with tempfile.TemporaryDirectory(prefix="core-audit-witness-") as state:
        witness = Witness(WITNESS_KEY, {kept.signed_note.split("\n", 1)[0]: [LOG_KEY.verifier]},
                          WitnessState(Path(state)))
        body = request_body(0, [], kept.signed_note)
        witness.add_checkpoint(body)  # it now holds this size: the same request again is 200
        same = request_body(kept.tree_size, [], kept.signed_note)

        async def ok(_: Request) -> PlainTextResponse:
            return PlainTextResponse("ok\n")

        echo = Starlette(routes=[Route("/add-checkpoint", ok, methods=["POST"])])
        with serving(create_witness_app(witness)) as port, serving(echo) as echo_port:
            post, post_floor = getter(port, "POST", same), getter(echo_port, "POST", same)
            times: dict[str, list[float]] = {}
            for _ in range(3):
                times.setdefault("floor: POST to an app answering 200", []).extend(
                    timed(lambda: post_floor("/add-checkpoint"), rounds // 6))
                times.setdefault("witness round trip (check, fsync, cosign)", []).extend(
                    timed(lambda: post("/add-checkpoint"), rounds // 6))
            report("floor: POST to an app answering 200", times[
                "floor: POST to an app answering 200"])
            report("witness round trip (check, fsync, cosign)",
                   times["witness round trip (check, fsync, cosign)"],
                   times["floor: POST to an app answering 200"])


if __name__ == "__main__":
    main()
