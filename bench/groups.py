"""Groups benchmark: `residualGroups` (two dimensions, and a day histogram) over a large store,
through GraphQL and the query layer, beside the SQL floor measured in the same run.

    .venv/bin/python bench/groups.py --db /tmp/bench/bench-1m.db [--rounds 30]

Uses a store that already holds residuals (e.g. `gen_frames.py --frames 400000 --seed
20261202`, ≈1M occurrences, split into several files and ingested one batch a file, so the
day histogram has batches to bucket). For each grouping it times, rounds interleaved:

- GraphQL: the operation run in-process through the server's schema (`execute_operation`:
  parse, validate, the object estimate, resolvers, JSON-ready result), as `core-audit query`
  runs it;
- the query layer: `queries.groups.residual_groups` on an open store;
- the floor: the grouping statement itself on a plain read-only sqlite3 connection, fetched
  (the tallies summed per combination, ordered, limited);
- for contrast, the same counts from the residual rows themselves (`count(*) ... GROUP BY` on
  `contract_residuals`, what a facet over a table is without tallies).

Prints p50 wall and CPU in ms and the ratio to the floor; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import time
from collections.abc import Callable
from typing import Any

from store.api.execution import execute_operation
from store.db.audit_store import AuditStore
from store.db.queries.groups import residual_groups
from store.db.schema.engine import resolve_url, sqlite_path

TWO = ("KIND", "ORGAN")
DAY = ("INGEST_DAY",)
DOCUMENT = """query($by: [ResidualDimension!]!) { residualGroups(by: $by, first: 50) {
  total occurrences groupCount hasMore groups { values count occurrences } } }"""
FLOOR = {
    TWO: """SELECT residual_kind, candidate_organ, sum(residuals) n, sum(occurrences) s
            FROM residual_tallies GROUP BY 1, 2 ORDER BY n DESC, s DESC, 1, 2 LIMIT 50""",
    DAY: """SELECT substr(b.ingested_at, 1, 10), sum(t.residuals) n, sum(t.occurrences) s
            FROM residual_tallies t JOIN ingest_batches b USING (batch_id)
            GROUP BY 1 ORDER BY n DESC, s DESC, 1 LIMIT 50""",
}
FROM_ROWS = {
    TWO: """SELECT residual_kind, candidate_organ, count(*) n FROM contract_residuals
            GROUP BY 1, 2 ORDER BY n DESC LIMIT 50""",
    DAY: """SELECT substr(b.ingested_at, 1, 10), count(*) n FROM contract_residuals r
            JOIN ingest_batches b USING (batch_id) GROUP BY 1 ORDER BY n DESC LIMIT 50""",
}


def timed(call: Callable[[], Any]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    call()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="a store path holding residuals")
    parser.add_argument("--rounds", type=int, default=30, help="timed calls of each")
    args = parser.parse_args()
    path = sqlite_path(resolve_url(args.db))
    assert path is not None, "a SQLite store path"
    raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    store = AuditStore.open(args.db, read_only=True, time_limit=600)
    leaves, batches = raw.execute(
        "SELECT (SELECT max(tree_size) FROM tree_heads), (SELECT count(*) FROM ingest_batches)"
    ).fetchone()
    print(f"store {path}: {leaves:,} leaves, {batches} batches")
    for by in (TWO, DAY):
        ways: dict[str, Callable[[], Any]] = {
            "GraphQL residualGroups": lambda by=by: asyncio.run(execute_operation(
                store, DOCUMENT, {"by": list(by)}, None)),
            "query layer": lambda by=by: store.execute(residual_groups, list(by), None, 50),
            "floor: tallies GROUP BY (sqlite3)": lambda by=by: raw.execute(FLOOR[by]).fetchall(),
            "contrast: rows GROUP BY (sqlite3)": lambda by=by: raw.execute(
                FROM_ROWS[by]).fetchall(),
        }
        for call in ways.values():  # warm: page cache, statement caches
            call()
        walls: dict[str, list[float]] = {name: [] for name in ways}
        cpus: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.rounds):
            for name, call in ways.items():
                wall, cpu = timed(call)
                walls[name].append(wall)
                cpus[name].append(cpu)
        floor = statistics.median(walls["floor: tallies GROUP BY (sqlite3)"])
        print(f"\nby {', '.join(by)} (p50 of {args.rounds}, rounds interleaved)")
        for name in ways:
            wall = statistics.median(walls[name])
            print(f"  {name:38} wall {wall:8.2f} ms  cpu {statistics.median(cpus[name]):8.2f}"
                  f" ms  {wall / floor:7.1f}x floor")
    store.close()


if __name__ == "__main__":
    main()
