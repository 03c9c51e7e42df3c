"""Query benchmark: GraphQL API latency over a large store, and its ratio to the SQL floor.

    .venv/bin/python bench/query.py [--occurrences 1000000] [--seed 0] [--db URL_OR_PATH]
                                    [--requests 200] [--concurrency 8] [--max-seconds 60]
                                    [--workers 1] [--read-threads N]

Uses the store `--db` names if it holds residuals (building a 1M store takes minutes: build
it once, e.g. `--db /tmp/core-audit-bench-1m.db`, and reuse it); otherwise generates frames
(bench/frames.py) and ingests them through the AuditStore API, printing how long that took.

Then it serves the store with `core-audit serve` (uvicorn, 127.0.0.1, a free port) in a
subprocess and sends four Workbench operations over HTTP, first one client at a time, then
from `--concurrency` clients at once (and the first, page, from one client fewer while one
more sends a slow read, a filter no index serves); each phase stops after `--requests`
requests or `--max-seconds`, whichever comes first:

  page       ResidualsByTaxonomy: 100 rows filtered by kind (the most common), totalCount,
             occurrenceCount on every node (the Workbench's list of residuals)
  page500    the same, 500 rows (the largest page)
  page5      ResidualsByTaxonomy: organ + axis (the most common pair), 100 rows, page 5
  facets     FacetOverview, no filter
  detail     ResidualWithOccurrences: the most-seen residual, its first 20 sightings
  minimal    `{ __typename }`: no SQL; the fixed cost of one HTTP + GraphQL request

The floor, measured in the same run: the SQL statements the query layer issues for each
operation (captured by running it once in-process), executed on one plain read-only
connection (sqlite3 `mode=ro` with the page cache the store's readers have,
bench/floor_reads.py; or psycopg for PostgreSQL) plus `json.dumps` of the rows,
the same number of times as the server answered sequentially. Prints p50/p95 per operation
and mode, the ratio server/floor, and CPU per request: the server process's (and its
workers') user + system time over the phase / its requests, beside the floor's own CPU per
call. Then, in-process, each operation's CPU (all threads: SQL included) with strawberry's own
execution and with the server's (store/api/page_executor.py), the same schema otherwise; and
per request to the app a user serves (`create_app`), called through httpx's ASGI transport
in this process (no socket, no second process: the least noisy figure to compare commits
by), beside the floor's CPU per call. It asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import http.client
import json
import math
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
from floor_reads import floor_connection
from frames import write_frames

from store.db import audit_store as audit_store_module
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
BIG_PAGE = 500


@dataclass(frozen=True)
class Goal:
    """An operation's goal (issue #24; page5 and facets: the issue before it), 1 client."""
    p50_ms: float | None = None  # server p50
    ratio: float | None = None  # server p50 / floor p50
    cpu_ms: float | None = None  # server CPU per request


GOALS = {"page": Goal(p50_ms=6.0, ratio=5.0, cpu_ms=8.0), "page500": Goal(p50_ms=25.0),
         "page5": Goal(ratio=2.0), "facets": Goal(ratio=1.5)}
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
    """The operations, their arguments picked from the store's own data."""
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
        Operation("page500", f"{BIG_PAGE} residuals, kind {kind}, totalCount", residuals_doc,
                  {"kind": [_enum_name(ResidualKind, kind)], "first": BIG_PAGE}),
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
    """Run the operation in-process once; keep every SQL statement (and parameters) it sent.

    Its quick reads' first try on the loop's thread is not cut short here: a first try cut
    short (a cold page cache reads past FIRST_TRY_SECONDS) is read again in a worker thread,
    and its statement was captured twice, doubling the floor (0.41 -> 0.80 ms for the 100-row
    page)."""
    from store.api.execution import execute_operation

    sent: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if not statement.lstrip().upper().startswith(_NOT_SQL):
            sent.append((statement, parameters))

    cut_short_after = audit_store_module.FIRST_TRY_SECONDS
    audit_store_module.FIRST_TRY_SECONDS = math.inf
    event.listen(database.engine, "before_cursor_execute", record)
    try:
        result = asyncio.run(execute_operation(database, operation.document,
                                               operation.variables, None))
    finally:
        event.remove(database.engine, "before_cursor_execute", record)
        audit_store_module.FIRST_TRY_SECONDS = cut_short_after
    if result.get("errors"):
        sys.exit(f"{operation.name}: {result['errors']}")
    operation.statements = sent


# --- timing -------------------------------------------------------------------------------


@dataclass
class Timing:
    seconds: list[float]  # successful calls only
    wall: float
    errors: list[str] = field(default_factory=list)
    cpu: float | None = None  # CPU seconds the measured process(es) spent over the phase
    note: str = ""  # what else ran in the phase

    @property
    def cpu_per_call(self) -> float | None:
        calls = self.count + len(self.errors)
        return None if self.cpu is None or not calls else self.cpu / calls

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


# A read no index serves: every assessment scanned (~0.4 s at 1M occurrences), as an
# auditor's filter on a rare field may be.
SLOW_READ = Operation("slow", "assessments of a source no row has: a scan of every assessment",
                      '{ assessments(filter: {sourceRef: ["no such source"]}, first: 1)'
                      " { totalCount } }", {})


def beside_a_slow_read(port: int, operation: Operation, requests: int, clients: int,
                       max_seconds: float) -> Timing:
    """`clients` - 1 clients on `operation` while one more sends SLOW_READ again and again:
    whether quick reads pass a slow one (serve --read-threads)."""
    stop = threading.Event()
    slow: list[float] = []

    def slow_reads() -> None:
        call = Client(port, SLOW_READ)
        while not stop.is_set():
            started = time.perf_counter()
            call()
            slow.append(time.perf_counter() - started)

    thread = threading.Thread(target=slow_reads)
    thread.start()
    try:
        timing = concurrent_loop(functools.partial(Client, port, operation), requests,
                                 clients - 1, max_seconds)
    finally:
        stop.set()
        thread.join()
    middle = f", p50 {sorted(slow)[len(slow) // 2] * 1000:.0f} ms" if slow else ""
    timing.note = f"beside {len(slow)} slow reads{middle}"
    return timing


def process_tree_cpu(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` and its live descendants (uvicorn's
    workers), from /proc; None where there is no /proc."""
    stats: dict[int, tuple[int, int]] = {}  # pid -> (parent pid, CPU ticks)
    try:
        entries = [entry for entry in Path("/proc").iterdir() if entry.name.isdigit()]
    except OSError:
        return None
    for entry in entries:
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # from field 3 (state) on
        stats[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    if pid not in stats:
        return None
    tree = {pid}
    while True:
        children = {p for p, (parent, _) in stats.items() if parent in tree} - tree
        if not children:
            break
        tree |= children
    return sum(stats[p][1] for p in tree) / os.sysconf("SC_CLK_TCK")


def server_cpu_over(pid: int, phase: Callable[[], Timing]) -> Timing:
    """`phase`'s timing, with the server's CPU over it."""
    before = process_tree_cpu(pid)
    timing = phase()
    after = process_tree_cpu(pid)
    if before is not None and after is not None:
        timing.cpu = after - before
    return timing


def own_cpu_over(phase: Callable[[], Timing]) -> Timing:
    """`phase`'s timing, with this process's CPU over it (the floor runs here, alone)."""
    before = time.process_time()
    timing = phase()
    timing.cpu = time.process_time() - before
    return timing


def in_process_cpu(database: AuditStore, operation: Operation, count: int) -> dict[bool, float]:
    """CPU seconds per run of `operation` in-process (every thread: the SQL too), with
    strawberry's own execution (False) and the server's PageExecutor (True); exits if the two
    answer differently."""
    from store.api.context import RequestContext
    from store.api.schema import build_schema

    cpu: dict[bool, float] = {}
    answers: dict[bool, bytes] = {}
    for plain_leaves in (False, True):
        schema = build_schema(plain_leaves=plain_leaves)

        async def run(schema: Any = schema) -> Any:
            return await schema.execute(operation.document, variable_values=operation.variables,
                                        context_value=RequestContext(database))

        async def runs(plain_leaves: bool = plain_leaves) -> None:
            for _ in range(3):  # warm up: caches
                result = await run()
            answers[plain_leaves] = orjson.dumps([result.data, [
                error.formatted for error in result.errors or ()]])
            started = time.process_time()
            for _ in range(count):
                await run()
            cpu[plain_leaves] = (time.process_time() - started) / count

        asyncio.run(runs())
    if answers[False] != answers[True]:
        sys.exit(f"{operation.name}: PageExecutor's answer differs from strawberry's own")
    return cpu


def in_process_app_cpu(database: AuditStore, operation: Operation, count: int) -> float:
    """CPU seconds per request of `operation` to the app a user serves (`create_app`: its
    middleware, the prepared documents, the PageExecutor, the JSON), called in this process
    through httpx's ASGI transport: no socket, no other process, so less noise than the
    server's figures (a figure to compare commits by, beside the floor's CPU)."""
    import httpx

    from store.api.app import create_app

    app = create_app(database, close_db_on_shutdown=False)
    body = {"query": operation.document, "variables": operation.variables}

    async def runs() -> float:
        async with app.router.lifespan_context(app), httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            for _ in range(20):  # warm up: caches
                answer = await client.post("/graphql", json=body)
            if answer.status_code != 200 or b'"errors"' in answer.content:
                sys.exit(f"{operation.name}: the app answered {answer.status_code}: "
                         f"{answer.text[:200]}")
            started = time.process_time()
            for _ in range(count):
                await client.post("/graphql", json=body)
            return (time.process_time() - started) / count

    return asyncio.run(runs())


# --- the server ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db: str, port: int, workers: int, read_threads: int | None = None
                 ) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-c", "from store.cli import main; main()", "serve",
               "--db", db, "--host", "127.0.0.1", "--port", str(port), "--no-graphiql",
               "--workers", str(workers),
               *(() if read_threads is None else ("--read-threads", str(read_threads)))]
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
        connection: Any = floor_connection(path, check_same_thread=False)
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
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--occurrences", type=int, default=1_000_000,
                        help="residual occurrences to generate if the store must be built")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated frames")
    parser.add_argument("--db", help="store URL or path; reused if it holds residuals"
                        " (default: a fresh file in a temp dir)")
    parser.add_argument("--requests", type=int, default=200, help="per operation and mode")
    parser.add_argument("--concurrency", type=int, default=8,
                        help="clients in the concurrent phase")
    parser.add_argument("--workers", type=int, default=1, help="server processes (serve --workers)")
    parser.add_argument("--read-threads", type=int, default=None,
                        help="queries each server process runs at once (serve --read-threads;"
                             " default: serve's)")
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
        server = start_server(db, port, args.workers, args.read_threads)
        results: dict[tuple[str, str], Timing] = {}
        try:
            for op in ops:
                client = Client(port, op)
                for _ in range(3):  # warm up: connection, caches
                    with contextlib.suppress(CallFailed):
                        client()
                results[op.name, "seq"] = server_cpu_over(server.pid, functools.partial(
                    timed_loop, client, args.requests, args.max_seconds))
                results[op.name, "conc"] = server_cpu_over(server.pid, functools.partial(
                    concurrent_loop, functools.partial(Client, port, op), args.requests,
                    args.concurrency, args.max_seconds))
                if op is ops[0]:
                    results[op.name, "slow"] = server_cpu_over(server.pid, functools.partial(
                        beside_a_slow_read, port, op, args.requests, args.concurrency,
                        args.max_seconds))
        finally:
            server.terminate()
            server.wait(timeout=30)

        for op in ops:
            call = floor_call(url, op)
            call()  # warm up
            served = results[op.name, "seq"]
            count = max(1, served.count + len(served.errors))
            results[op.name, "floor"] = own_cpu_over(
                functools.partial(timed_loop, call, count, args.max_seconds))

        database = AuditStore.open(db, read_only=True, time_limit=3600)
        try:
            in_process = {op.name: in_process_cpu(database, op, min(args.requests, 100))
                          for op in ops}
            in_app = {op.name: in_process_app_cpu(database, op, args.requests) for op in ops}
        finally:
            database.close()

    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print()
    print(f"{'operation':9} {'mode':18} {'n':>5} {'p50 ms':>9} {'p95 ms':>9} {'req/s':>8}"
          f" {'CPU/req':>8}  {'p50/floor':>9} {'p95/floor':>9}  goal")
    for op in ops:
        floor = results[op.name, "floor"]
        for mode, label in (("seq", "server, 1 client"),
                            ("conc", f"server, {args.concurrency} clients"),
                            ("slow", f"{args.concurrency - 1} + a slow read"),
                            ("floor", "floor (SQL+json)")):
            if (op.name, mode) not in results:
                continue
            t = results[op.name, mode]
            rate = t.count / t.wall if t.wall else 0.0
            cpu = t.cpu_per_call
            ratio = ""
            if mode == "seq" and t.count and floor.count:
                ratio = (f"  {t.quantile(0.5) / floor.quantile(0.5):8.2f}x"
                         f" {t.quantile(0.95) / floor.quantile(0.95):8.2f}x")
                ratio += goal_text(GOALS.get(op.name), t, floor)
            elif mode == "seq":
                ratio = f"  {'n/a':>9} {'n/a':>9}  (no successful request)"
            print(f"{op.name:9} {label:18} {t.count:5} {ms(t.quantile(0.5))} "
                  f"{ms(t.quantile(0.95))} {rate:8.1f}"
                  f" {'n/a' if cpu is None else ms(cpu)[1:]:>8}{ratio}")
            if t.note:
                print(f"{'':9} {'':18} {t.note} (CPU/req: the slow reads' CPU included)")
            if t.errors:
                print(f"{'':9} {'':18} {len(t.errors)} requests failed: {t.errors[0][:160]}")
    print("\nin-process CPU per operation (all threads, SQL included), the same answers; 'app':"
          " a request to create_app's app through httpx's ASGI transport (--requests of"
          " them), beside the floor's CPU per call:")
    print(f"{'operation':9} {'strawberry ms':>14} {'PageExecutor ms':>16} {'faster':>7}"
          f" {'app ms':>8} {'floor ms':>9} {'app/floor':>9}")
    for op in ops:
        plain, fast = in_process[op.name][False], in_process[op.name][True]
        floor_cpu = results[op.name, "floor"].cpu_per_call
        versus = (f"{ms(floor_cpu):>9} {in_app[op.name] / floor_cpu:8.2f}x" if floor_cpu
                  else f"{'n/a':>9} {'n/a':>9}")
        print(f"{op.name:9} {ms(plain):>14} {ms(fast):>16} {plain / fast:6.2f}x"
              f" {ms(in_app[op.name]):>8} {versus}")
    threads = "serve's default" if args.read_threads is None else args.read_threads
    print(f"\nserver: {args.workers} worker process(es), read threads: {threads}")
    print(f"(p50/p95 over the requests each phase completed: at most --requests"
          f" {args.requests}, stopped after --max-seconds {args.max_seconds:g};"
          f" the floor ran as many times as the sequential server phase; CPU/req: the"
          f" server's user + system time over the phase / its requests, the floor's own)")


def goal_text(goal: Goal | None, server: Timing, floor: Timing) -> str:
    """Each part of `goal`, met or not, for the 1-client phase."""
    if goal is None:
        return ""
    parts = []
    p50 = server.quantile(0.5)
    if goal.p50_ms is not None:
        parts.append(f"p50 <= {goal.p50_ms:g} ms: {_met(p50 * 1000 <= goal.p50_ms)}")
    if goal.ratio is not None:
        parts.append(f"<= {goal.ratio:g}x: {_met(p50 / floor.quantile(0.5) <= goal.ratio)}")
    cpu = server.cpu_per_call
    if goal.cpu_ms is not None and cpu is not None:
        parts.append(f"CPU <= {goal.cpu_ms:g} ms: {_met(cpu * 1000 <= goal.cpu_ms)}")
    return "  " + "; ".join(parts)


def _met(met: bool) -> str:
    return "met" if met else "NOT met"


def make_backend(url: str) -> str:
    path = sqlite_path(url)
    if path is not None:
        return f"SQLite, {path.stat().st_size / 2**20:.0f} MiB"
    return "PostgreSQL"


if __name__ == "__main__":
    main()
