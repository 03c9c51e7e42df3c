"""Query benchmark: GraphQL API latency over a large store, and its ratio to the SQL floor.

    .venv/bin/python bench/query.py [--occurrences 1000000] [--seed 0] [--db URL_OR_PATH]
                                    [--requests 200] [--concurrency 8] [--max-seconds 60]
                                    [--workers 1]

Uses the store `--db` names if it holds residuals (building a 1M store takes minutes: build
it once, e.g. `--db /tmp/core-audit-bench-1m.db`, and reuse it); otherwise generates frames
(bench/frames.py) and ingests them through the AuditStore API, printing how long that took.

Then it serves the store with `core-audit serve` (uvicorn, 127.0.0.1, a free port) in a
subprocess and sends four Workbench operations over HTTP, first one client at a time, then
from `--concurrency` clients at once; each phase stops after `--requests` requests or
`--max-seconds`, whichever comes first:

  page       ResidualsByTaxonomy: 100 rows filtered by kind (the most common), totalCount
  page5      ResidualsByTaxonomy: organ + axis (the most common pair), 100 rows, page 5
  facets     FacetOverview, no filter
  detail     ResidualWithOccurrences: the most-seen residual, its first 20 sightings
  minimal    `{ __typename }`: no SQL; the fixed cost of one HTTP + GraphQL request

The floor, measured in the same run: the SQL statements the query layer issues for each
operation (captured by running it once in-process), executed on one plain read-only
connection (sqlite3 `mode=ro`, or psycopg for PostgreSQL) plus `json.dumps` of the rows,
the same number of times as the server answered sequentially. Prints p50/p95 per operation
and mode and the ratio server/floor; it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import event, text

sys.path.insert(0, str(Path(__file__).resolve().parent))

from frames import write_frames

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.schema.engine import resolve_url, sqlite_path
from store.errors import StoreError
from store.model.taxonomy import ResidualKind, ResidualSourceAxis

ROOT = Path(__file__).resolve().parent.parent
WORKBENCH = ROOT / "graphql" / "workbench"
PAGE_SIZE = 100
PAGE_NUMBER = 5
DETAIL_SIGHTINGS = 20
GOALS = {"page": 2.0, "page5": 2.0, "facets": 1.5}  # server p50 / floor p50, from the issue
_NOT_SQL = ("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA", "SET ", "SAVEPOINT", "RELEASE")


# --- the store ----------------------------------------------------------------------------


def stored_residuals(db: str) -> int | None:
    """Residual rows in the store `db` names, or None if there is no store."""
    try:
        database = AuditStore.open(db, read_only=True)
    except StoreError:
        return None
    try:
        return database.execute(queries.count_residuals)
    finally:
        database.close()


def build_store(db: str, occurrences: int, seed: int) -> None:
    with tempfile.TemporaryDirectory(prefix="core-audit-qbench-") as tmp:
        source = Path(tmp) / "frames.jsonl"
        started = time.perf_counter()
        frames, total = write_frames(source, occurrences, seed)
        generated = time.perf_counter() - started
        started = time.perf_counter()
        with AuditStore.open(db) as store, source.open("rb") as stream:
            store.ingest(stream, source=source.name)
        print(f"built the store: {frames} frames, {total} residual occurrences (seed {seed});"
              f" generated in {generated:.1f} s, ingested in {time.perf_counter() - started:.1f} s")


# --- the operations -----------------------------------------------------------------------


@dataclass
class Operation:
    name: str
    what: str
    document: str
    variables: dict[str, Any]
    statements: list[tuple[str, Any]] = field(default_factory=list)  # filled by capture()


def _enum_name(enum: type, value: str) -> str:
    return enum(value).name  # GraphQL takes the member name (MISSING_ROLE)


def operations(database: AuditStore) -> list[Operation]:
    """The four operations, their arguments picked from the store's own data."""
    residuals_doc = (WORKBENCH / "ResidualsByTaxonomy.graphql").read_text()

    def most_common(sql: str) -> Any:
        return database.execute(lambda c: c.execute(text(sql)).first())

    kind = most_common("SELECT residual_kind, count(*) AS n FROM contract_residuals"
                       " GROUP BY residual_kind ORDER BY n DESC, residual_kind LIMIT 1")[0]
    organ, axis = most_common(
        "SELECT candidate_organ, source_axis, count(*) AS n FROM contract_residuals"
        " GROUP BY candidate_organ, source_axis ORDER BY n DESC, 1, 2 LIMIT 1")[:2]
    residual_id, sightings = most_common(
        "SELECT residual_id, count(*) AS n FROM residual_occurrences"
        " GROUP BY residual_id ORDER BY n DESC, residual_id LIMIT 1")

    where = queries.ResidualFilter(organ=[organ], axis=[ResidualSourceAxis(axis)])
    after = None
    for _ in range(PAGE_NUMBER - 1):
        page = database.execute(queries.list_residuals, where, PAGE_SIZE, after)
        after = page.end_cursor
    return [
        Operation("page", f"{PAGE_SIZE} residuals, kind {kind}, totalCount", residuals_doc,
                  {"kind": [_enum_name(ResidualKind, kind)], "first": PAGE_SIZE}),
        Operation("page5", f"{PAGE_SIZE} residuals, organ {organ} + axis {axis}, page"
                  f" {PAGE_NUMBER}, totalCount", residuals_doc,
                  {"organ": [organ], "axis": [_enum_name(ResidualSourceAxis, axis)],
                   "first": PAGE_SIZE, "after": after}),
        Operation("facets", "FacetOverview, no filter",
                  (WORKBENCH / "FacetOverview.graphql").read_text(), {}),
        Operation("detail", f"residual {residual_id[:12]}.. ({sightings} sightings),"
                  f" first {DETAIL_SIGHTINGS}",
                  (WORKBENCH / "ResidualWithOccurrences.graphql").read_text(),
                  {"id": residual_id, "first": DETAIL_SIGHTINGS}),
        Operation("minimal", "{ __typename }: no SQL, the fixed cost of a request",
                  "query Minimal { __typename }", {}),
    ]


def capture(database: AuditStore, operation: Operation) -> None:
    """Run the operation in-process once; keep every SQL statement (and parameters) it sent."""
    from store.api.execution import execute_operation

    sent: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if not statement.lstrip().upper().startswith(_NOT_SQL):
            sent.append((statement, parameters))

    event.listen(database.engine, "before_cursor_execute", record)
    try:
        result = asyncio.run(execute_operation(database, operation.document,
                                               operation.variables, None))
    finally:
        event.remove(database.engine, "before_cursor_execute", record)
    if result.get("errors"):
        sys.exit(f"{operation.name}: {result['errors']}")
    operation.statements = sent


# --- timing -------------------------------------------------------------------------------


@dataclass
class Timing:
    seconds: list[float]  # successful calls only
    wall: float
    errors: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.seconds)

    def quantile(self, q: float) -> float:
        ordered = sorted(self.seconds)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class CallFailed(Exception):
    """A request answered with an error (e.g. the server's time limit): counted, not timed."""


def timed_loop(call: Callable[[], object], requests: int, max_seconds: float) -> Timing:
    timing = Timing([], 0.0)
    started = time.perf_counter()
    stop = started + max_seconds
    while timing.count + len(timing.errors) < requests and time.perf_counter() < stop:
        t0 = time.perf_counter()
        try:
            call()
        except CallFailed as exc:
            timing.errors.append(str(exc))
            continue
        timing.seconds.append(time.perf_counter() - t0)
    timing.wall = time.perf_counter() - started
    return timing


def concurrent_loop(make_call: Callable[[], Callable[[], object]], requests: int,
                    workers: int, max_seconds: float) -> Timing:
    """`workers` threads, each with its own client, sharing a budget of `requests` calls."""
    seconds: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    budget = [requests]
    started = time.perf_counter()
    stop = started + max_seconds
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            call = make_call()
            while time.perf_counter() < stop:
                with lock:
                    if budget[0] <= 0:
                        return
                    budget[0] -= 1
                t0 = time.perf_counter()
                try:
                    call()
                except CallFailed as exc:
                    with lock:
                        failures.append(str(exc))
                    continue
                elapsed = time.perf_counter() - t0
                with lock:
                    seconds.append(elapsed)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return Timing(seconds, time.perf_counter() - started, failures)


# --- the server ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db: str, port: int, workers: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-c", "from store.cli import main; main()", "serve",
               "--db", db, "--host", "127.0.0.1", "--port", str(port), "--no-graphiql",
               "--workers", str(workers)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"the server exited with status {server.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                connection.close()
                return server
        except OSError:
            time.sleep(0.2)
    server.terminate()
    sys.exit("the server did not answer /healthz within 60 s")


class Client:
    """One keep-alive HTTP connection posting one operation (stdlib: little client overhead)."""

    def __init__(self, port: int, operation: Operation) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.body = orjson.dumps({"query": operation.document,
                                  "variables": operation.variables})
        self.name = operation.name

    def __call__(self) -> bytes:
        self.connection.request("POST", "/graphql", body=self.body,
                                headers={"content-type": "application/json"})
        response = self.connection.getresponse()
        payload = response.read()
        if response.status != 200 or b'"errors"' in payload:
            try:
                message = orjson.loads(payload)["errors"][0]["message"]
            except (orjson.JSONDecodeError, KeyError, IndexError, TypeError):
                message = f"HTTP {response.status}: {payload[:200]!r}"
            raise CallFailed(message)
        return payload


# --- the floor ----------------------------------------------------------------------------


def floor_call(url: str, operation: Operation) -> Callable[[], str]:
    """The operation's statements on one plain read-only connection, rows to JSON."""
    path = sqlite_path(url)
    if path is not None:
        import sqlite3

        connection: Any = sqlite3.connect(f"file:{path}?mode=ro", uri=True,
                                          check_same_thread=False)
    else:
        import psycopg
        from sqlalchemy.engine import make_url

        parsed = make_url(url)
        options = parsed.query.get("options")
        connection = psycopg.connect(
            host=parsed.host, port=parsed.port, user=parsed.username,
            password=parsed.password, dbname=parsed.database, autocommit=True,
            **({"options": options} if options else {}))
    statements = operation.statements

    def call() -> str:
        cursor = connection.cursor()
        results = []
        for statement, parameters in statements:
            cursor.execute(statement, parameters)
            results.append(cursor.fetchall())
        return json.dumps(results, default=str)

    return call


# --- main ---------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:9.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--occurrences", type=int, default=1_000_000,
                        help="residual occurrences to generate if the store must be built")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--db", help="store URL or path; reused if it holds residuals"
                        " (default: a fresh file in a temp dir)")
    parser.add_argument("--requests", type=int, default=200, help="per operation and mode")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1, help="server processes (serve --workers)")
    parser.add_argument("--max-seconds", type=float, default=60.0,
                        help="stop a phase (operation x mode) after this long")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="core-audit-qbench-") as tmp:
        db = args.db or str(Path(tmp) / "bench.db")
        url = resolve_url(db)
        residuals = stored_residuals(db)
        if not residuals:
            build_store(db, args.occurrences, args.seed)
            residuals = stored_residuals(db)
        else:
            print(f"reusing the store at {db} (--occurrences/--seed ignored)")

        # Setup and capture: no request limit.
        database = AuditStore.open(db, read_only=True, time_limit=3600)
        try:
            occurrences = database.execute(lambda c: c.execute(
                text("SELECT count(*) FROM residual_occurrences")).scalar_one())
            print(f"store: {residuals} residuals, {occurrences} residual occurrences"
                  f" ({make_backend(url)})")
            ops = operations(database)
            for op in ops:
                capture(database, op)
        finally:
            database.close()

        load = os.getloadavg()
        print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
              f" ({os.cpu_count()} CPUs)")
        for op in ops:
            print(f"  {op.name:7} {op.what}; {len(op.statements)} SQL statements")

        port = free_port()
        server = start_server(db, port, args.workers)
        results: dict[tuple[str, str], Timing] = {}
        try:
            for op in ops:
                client = Client(port, op)
                for _ in range(3):  # warm up: connection, caches
                    with contextlib.suppress(CallFailed):
                        client()
                results[op.name, "seq"] = timed_loop(client, args.requests, args.max_seconds)
                results[op.name, "conc"] = concurrent_loop(
                    lambda op=op: Client(port, op), args.requests, args.concurrency,
                    args.max_seconds)
        finally:
            server.terminate()
            server.wait(timeout=30)

        for op in ops:
            call = floor_call(url, op)
            call()  # warm up
            server = results[op.name, "seq"]
            count = max(1, server.count + len(server.errors))
            results[op.name, "floor"] = timed_loop(call, count, args.max_seconds)

    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print()
    print(f"{'operation':9} {'mode':18} {'n':>5} {'p50 ms':>9} {'p95 ms':>9} {'req/s':>8}"
          f"  {'p50/floor':>9} {'p95/floor':>9}  goal")
    for op in ops:
        floor = results[op.name, "floor"]
        for mode, label in (("seq", "server, 1 client"),
                            ("conc", f"server, {args.concurrency} clients"),
                            ("floor", "floor (SQL+json)")):
            t = results[op.name, mode]
            rate = t.count / t.wall if t.wall else 0.0
            ratio = ""
            if mode == "seq" and t.count and floor.count:
                ratio = (f"  {t.quantile(0.5) / floor.quantile(0.5):8.2f}x"
                         f" {t.quantile(0.95) / floor.quantile(0.95):8.2f}x")
                goal = GOALS.get(op.name)
                if goal:
                    met = t.quantile(0.5) / floor.quantile(0.5) <= goal
                    ratio += f"  <= {goal}x: {'met' if met else 'NOT met'}"
            elif mode == "seq":
                ratio = f"  {'n/a':>9} {'n/a':>9}  (no successful request)"
            print(f"{op.name:9} {label:18} {t.count:5} {ms(t.quantile(0.5))} "
                  f"{ms(t.quantile(0.95))} {rate:8.1f}{ratio}")
            if t.errors:
                print(f"{'':9} {'':18} {len(t.errors)} requests failed: {t.errors[0][:160]}")
    print(f"\nserver: {args.workers} worker process(es)")
    print(f"(p50/p95 over the requests each phase completed: at most --requests"
          f" {args.requests}, stopped after --max-seconds {args.max_seconds:g};"
          f" the floor ran as many times as the sequential server phase)")


def make_backend(url: str) -> str:
    path = sqlite_path(url)
    if path is not None:
        return f"SQLite, {path.stat().st_size / 2**20:.0f} MiB"
    return "PostgreSQL"


if __name__ == "__main__":
    main()
