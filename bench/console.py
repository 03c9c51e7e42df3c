"""Console benchmark: server time of the console's pages at 1M occurrences, beside the GraphQL
API answering the same list and the SQL floor, all measured in the same run.

    .venv/bin/python bench/console.py [--db PATH] [--occurrences 1000000] [--seed 0]
                                      [--rounds 30]

Uses the store `--db` names if it holds residuals (build one once, e.g. with
`bench/query.py --db /tmp/core-audit-bench-1m.db`, and reuse it); otherwise generates frames
(bench/frames.py) and ingests them, with the bundled examples for surfaces and turns.

Each page is requested in-process through the ASGI app (Starlette's test client, no socket),
with the rendered-page cache off, so every request reads the store and renders; a record page
is timed over `--rounds` different records spread across the log (cold leaf-hash blocks
included). GraphQL: the same 100-row list through POST /graphql on the same app. Floor: the
list's one SQL statement on a plain sqlite3 connection (mode=ro), rows fetched. Prints p50 and
p95 in ms; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from floor_reads import floor_connection
from query import build_store, stored_residuals
from starlette.testclient import TestClient

from store.api.app import create_app
from store.console.histograms import core_time_histogram, ingest_histogram
from store.console.pages import Console
from store.db.audit_store import AuditStore
from store.db.queries.browsing import assessment_facets
from store.db.schema.engine import resolve_url, sqlite_path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GOALS = {"overview": 100.0, "list": 100.0, "record": 30.0, "grouped": 150.0,
         "histogram": 100.0}


def timed(call: Callable[[], object], rounds: int) -> list[float]:
    found = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        found.append((time.perf_counter() - started) * 1000)
    return found


def timed_each(calls: list[Callable[[], object]]) -> list[float]:
    found = []
    for call in calls:
        started = time.perf_counter()
        call()
        found.append((time.perf_counter() - started) * 1000)
    return found


def line(name: str, times: list[float], goal: float | None = None) -> None:
    p50 = statistics.median(times)
    p95 = sorted(times)[max(0, round(len(times) * 0.95) - 1)]
    target = "" if goal is None else f"  (goal p50 <= {goal:.0f} ms)"
    print(f"{name:<44} p50 {p50:8.2f} ms   p95 {p95:8.2f} ms{target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="/tmp/core-audit-bench-1m.db",
                        help="store path; reused if it holds residuals, else built here (about"
                             " 1.2 GB at 1M occurrences)")
    parser.add_argument("--occurrences", type=int, default=1_000_000,
                        help="residual occurrences to generate if the store must be built")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated frames")
    parser.add_argument("--rounds", type=int, default=30, help="requests per page")
    args = parser.parse_args()
    path = sqlite_path(resolve_url(args.db))
    if path is None:
        parser.error("the floor reads SQLite: --db must be a SQLite file")
    if not stored_residuals(args.db):
        build_store(args.db, args.occurrences, args.seed)
        with AuditStore.open(args.db) as store:
            for example in sorted(EXAMPLES.glob("*.jsonl")):
                store.ingest(example.read_bytes().splitlines(keepends=True),
                             source=example.name)

    db = AuditStore.open(args.db, read_only=True)
    uncached = Console(db, cache_pages=0)
    app = create_app(db, close_db_on_shutdown=False, console=False)
    app.router.routes.extend(uncached.routes())
    client = TestClient(app, base_url="http://127.0.0.1")
    floor = floor_connection(path)
    size = db.tree_head().size
    kind, = floor.execute("SELECT residual_kind FROM contract_residuals GROUP BY 1 "
                          "ORDER BY count(*) DESC LIMIT 1").fetchone()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on "
          f"{os.cpu_count()} cores: wall times, inflated by other work; compare each with its "
          "floor")
    print(f"store: {args.db}, tree size {size:,}, "
          f"{floor.execute('SELECT count(*) FROM residual_occurrences').fetchone()[0]:,} "
          f"occurrences; {args.rounds} rounds each, page cache off")

    refused: dict[str, int] = {}

    def get(url: str) -> Callable[[], object]:
        def call() -> object:
            answer = client.get(url)
            if answer.status_code != 200:  # 503: past the time limit (5 s)
                refused[url] = refused.get(url, 0) + 1
            return answer
        return call

    get("/")()  # warm: imports, templates, the first connection
    line("overview /", timed(get("/"), args.rounds), GOALS["overview"])
    name = kind.upper()
    for url in ("/residuals?first=100", f"/residuals?kind={name}&first=100",
                "/assessments?first=100", "/turns?first=100", "/batches?first=100"):
        line(f"list {url}", timed(get(url), args.rounds), GOALS["list"])
    for url in ("/residuals?order=MOST_SEEN&first=100",  # the query layer's MOST_SEEN
                "/surfaces?order=MOST_SEEN&first=100"):
        line(f"list {url}", timed(get(url), args.rounds), GOALS["list"])
    # Issue 33: the group pages, a page as JSON, and the histogram above a list alone.
    for url in ("/residuals/groups?by=kind,organ", "/residuals/groups?by=ingest_day,kind",
                "/turns/groups?by=clearance", "/residuals.json?first=100"):
        line(f"page {url}", timed(get(url), args.rounds), GOALS["grouped"])
    histogram_reads = db.engine.connect()
    line("histogram alone: residuals per day of ingest", timed(
        partial(ingest_histogram, histogram_reads, "residuals", None, None, "Residuals"),
        args.rounds), GOALS["histogram"])
    line("SQL floor: residual tallies per day", timed(
        lambda: floor.execute("SELECT substr(b.ingested_at, 1, 10), sum(t.residuals) FROM "
                              "residual_tallies t JOIN ingest_batches b USING (batch_id) "
                              "GROUP BY 1").fetchall(), args.rounds))
    line("histogram alone: turns per CORE-time bucket", timed(
        partial(core_time_histogram, histogram_reads, None, None), args.rounds),
        GOALS["histogram"])
    line("SQL floor: turns per day of CORE time", timed(
        lambda: floor.execute("SELECT core_time / 86400000000, count(*) FROM turn_fields "
                              "GROUP BY 1").fetchall(), args.rounds))
    histogram_reads.close()
    facets_page = client.get("/assessments?first=100").text
    held = "left out" not in facets_page
    print(f"  /assessments: facets (organ, familyId, runnable) "
          f"{'shown, exact' if held else 'LEFT OUT (past their limit)'}")
    assessments = db.engine.connect()
    line("assessment facets alone (query layer)",
         timed(partial(assessment_facets, assessments), args.rounds))
    line("SQL floor: assessments per (organ, runnable)", timed(
        lambda: floor.execute("SELECT candidate_organ, runnable, count(*) FROM "
                             "contract_assessments GROUP BY 1, 2").fetchall(), args.rounds))
    assessments.close()

    query = ("query($k: [ResidualKind!]) { residuals(filter: {kind: $k}, first: 100) { "
             "totalCount nodes { residualId residualKind sourceAxis candidateOrgan "
             "residualCode occurrenceCount } } residualFacets(filter: {kind: $k}) { "
             "total byKind { value count } byAxis { value count } byOrgan { value count } "
             "byFamily { value count } byCode { value count } } }")

    def graphql() -> object:
        answer = client.post("/graphql", json={"query": query, "variables": {"k": [name]}})
        assert "errors" not in answer.json(), answer.text[:300]
        return answer

    graphql()
    line(f"GraphQL: the same list + facets ({name})", timed(graphql, args.rounds))

    def sql_floor() -> object:
        return floor.execute("SELECT * FROM contract_residuals WHERE residual_kind = ? "
                             "ORDER BY seq LIMIT 101", (kind,)).fetchall()

    line("SQL floor: the list's rows", timed(sql_floor, args.rounds))
    most_seen = ("{ residuals(order: MOST_SEEN, first: 100) { nodes { residualId "
                 "occurrenceCount } } }")
    line("GraphQL: residuals(order: MOST_SEEN, first: 100)", timed(
        lambda: client.post("/graphql", json={"query": most_seen}), max(3, args.rounds // 5)))

    chooser = random.Random(args.seed)
    for table, key, page in (("contract_residuals", "residual_id", "residuals"),
                             ("contract_assessments", "assessment_id", "assessments")):
        count, = floor.execute(f"SELECT max(rowid) FROM {table}").fetchone()
        picks = [floor.execute(f"SELECT {key} FROM {table} WHERE rowid >= ? LIMIT 1",
                               (chooser.randint(1, count),)).fetchone()[0]
                 for _ in range(args.rounds)]
        pages = [get(f"/{page}/{pick}") for pick in picks]
        line(f"record /{page}/ID (+ proof), cold blocks", timed_each(pages), GOALS["record"])
        line(f"record /{page}/ID (+ proof), again", timed_each(pages), GOALS["record"])
        statement = f"SELECT * FROM {table} WHERE {key} = ?"
        line(f"SQL floor: one {page[:-1]} row by id", timed_each(
            [partial(floor.execute, statement, (pick,)) for pick in picks]))
    line("log /log?from=1000 (consistency proof)", timed(get("/log?from=1000"), args.rounds))

    started = time.perf_counter()
    with client.stream("GET", "/export/residuals.csv") as answer:
        written = sum(len(chunk) for chunk in answer.iter_bytes())
    seconds = time.perf_counter() - started
    rows, = floor.execute("SELECT count(*) FROM contract_residuals").fetchone()
    started = time.perf_counter()
    for _ in floor.execute("SELECT * FROM contract_residuals ORDER BY seq"):
        pass
    print(f"{'export /export/residuals.csv (whole table)':<44} {seconds:8.2f} s for {rows:,} "
          f"rows, {written / 2**20:.0f} MiB (SQL floor, rows read: "
          f"{time.perf_counter() - started:.2f} s)")
    print(f"process CPU time over the whole run: {time.process_time():.1f} s")
    for url, count in refused.items():
        print(f"  {url}: {count} answers were not 200 (503: past the time limit)")
    db.close()


if __name__ == "__main__":
    main()
