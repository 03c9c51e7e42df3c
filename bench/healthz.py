"""/healthz under load: its latency while 200 clients query and 50 slow ones trickle.

    .venv/bin/python bench/healthz.py [--clients 200] [--slow 50] [--seconds 20]
                                      [--probes-per-second 20] [--db PATH]

Serves a store (the bundled examples, or `--db`) with `core-audit serve` (uvicorn,
127.0.0.1, a free port) in a subprocess. The floor, in the same run: /healthz probed alone.
Then under load: `--clients` asyncio clients each post GraphQL reads back to back (a page of
residuals with its count), and `--slow` clients each hold a connection open sending a request
body one byte every half second (a slow network, or slowloris). A prober sends GET /healthz
`--probes-per-second` times a second on fresh connections. Prints p50/p99/max of both phases
and the ratio; the issue's goal is p99 within 100 ms under load. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import multiprocessing
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from query import free_port, start_server

from store.db.audit_store import AuditStore

REPO = Path(__file__).resolve().parents[1]
READ = {"query": "{ residuals(first: 50) { totalCount nodes { residualId kind code } } }"}


def probe(port: int, count: int, interval: float, deadline: float) -> list[float]:
    """Up to `count` GETs of /healthz (until `deadline`), each on a fresh connection, from
    this process alone (the load runs in another): seconds each took."""
    taken: list[float] = []
    for _ in range(count):
        if time.monotonic() > deadline:
            break
        started = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        body = response.read()
        connection.close()
        taken.append(time.perf_counter() - started)
        if response.status != 200:
            raise SystemExit(f"/healthz answered {response.status}: {body!r}")
        time.sleep(max(0.0, interval - taken[-1]))
    return taken


async def reader(port: int, stop: asyncio.Event, answered: list[int]) -> None:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
        while not stop.is_set():
            response = await http.post("/graphql", json=READ)
            answered[0] += response.status_code == 200


async def trickler(port: int, stop: asyncio.Event) -> None:
    """A slow client: a POST whose 10,000-byte body arrives one byte every half second."""
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n")
    try:
        while not stop.is_set():
            writer.write(b" ")
            await writer.drain()
            await asyncio.sleep(0.5)
    except ConnectionError:
        pass
    finally:
        writer.close()


async def load(port: int, clients: int, slow: int, seconds: float) -> None:
    stop = asyncio.Event()
    answered = [0]
    tasks = [asyncio.create_task(reader(port, stop, answered)) for _ in range(clients)]
    tasks += [asyncio.create_task(trickler(port, stop)) for _ in range(slow)]
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(f"  (the load: {answered[0]} reads answered in {seconds:.0f} s)")


def run_load(port: int, clients: int, slow: int, seconds: float) -> None:
    asyncio.run(load(port, clients, slow, seconds))


def p99(taken: list[float]) -> float:
    ordered = sorted(taken)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def figures(taken: list[float]) -> str:
    ms = [t * 1000 for t in taken]
    return (f"p50 {statistics.median(ms):7.1f} ms  p99 {p99(taken) * 1000:7.1f} ms  "
            f"max {max(ms):7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=200,
                        help="GraphQL clients posting reads back to back")
    parser.add_argument("--slow", type=int, default=50,
                        help="slow clients sending a body one byte every half second")
    parser.add_argument("--seconds", type=float, default=20, help="length of each phase")
    parser.add_argument("--probes-per-second", type=float, default=20,
                        help="GET /healthz probes a second, on fresh connections")
    parser.add_argument("--db", help="a store to serve (default: the bundled examples)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="core-audit-healthz-"))
    try:
        db = args.db or str(folder / "audit.db")
        if args.db is None:
            with AuditStore.open(db) as store:
                for path in sorted((REPO / "examples").glob("*.jsonl")):
                    store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
        port = free_port()
        server = start_server(db, port, 1)
        try:
            interval = 1 / args.probes_per_second
            probes = max(20, int(args.seconds * args.probes_per_second))
            floor = probe(port, probes, interval, time.monotonic() + args.seconds * 3)
            print(f"/healthz alone (floor):  {figures(floor)}  ({len(floor)} probes)")
            loader = multiprocessing.get_context("fork").Process(
                target=run_load, args=(port, args.clients, args.slow, args.seconds + 4))
            loader.start()
            time.sleep(3)  # every client connected and busy
            loaded = probe(port, probes, interval, time.monotonic() + args.seconds)
            loader.join()
            print(f"/healthz, {args.clients} clients + {args.slow} slow: {figures(loaded)}  "
                  f"({len(loaded)} probes)")
            print(f"ratio loaded/floor, p99: {p99(loaded) / p99(floor):.1f}x "
                  "(goal: loaded p99 within 100 ms)")
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
