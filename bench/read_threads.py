"""Read threads benchmark: CPU per read when N threads of one process read at once, beside
one thread alone in the same run (the floor): why a server runs few reads at once
(store/db/read_threads.py, `core-audit serve --read-threads`).

    .venv/bin/python bench/read_threads.py --db STORE [--calls 1500] [--threads 1,2,3,4,8]

Reads the store `--db` names (a 1M store: build one with `bench/query.py --db PATH`, or
`core-audit ingest` of `gen_frames.py --frames 400000`); it builds nothing. Each call is the
query layer's 100-row residual page of the most common kind and its count, on the store's
pooled read-only connections, no HTTP: `--calls` of them shared by each number of threads in
turn, then one thread again. Prints CPU per call (every thread of the process) and wall
time per call for each; it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import text

from store.db import queries
from store.db.audit_store import AuditStore
from store.model.taxonomy import ResidualKind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="the store to read (path or URL)")
    parser.add_argument("--calls", type=int, default=1500,
                        help="calls per number of threads")
    parser.add_argument("--threads", default="1,2,3,4,8",
                        help="the numbers of threads, in turn (comma-separated)")
    args = parser.parse_args()
    counts = [int(n) for n in args.threads.split(",")]
    database = AuditStore.open(args.db, read_only=True, time_limit=3600)
    try:
        kind = database.execute(lambda c: c.execute(text(
            "SELECT residual_kind FROM contract_residuals GROUP BY residual_kind"
            " ORDER BY count(*) DESC, residual_kind LIMIT 1")).scalar_one())
        where = queries.ResidualFilter(kind=[ResidualKind(kind)])

        def call(_: int) -> None:
            database.execute(queries.list_residuals, where, 100)
            database.execute(queries.LISTINGS["residuals"].count, where)

        for _ in range(50):  # warm up: caches, statements kept by shape
            call(0)
        print(f"{'threads':>7} {'CPU/call ms':>12} {'wall/call ms':>13} {'CPU x 1 thread':>15}")
        floor = None
        for threads in [1, *counts, 1]:
            cpu, wall = time.process_time(), time.perf_counter()
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(call, range(args.calls)))
            per_call = (time.process_time() - cpu) / args.calls
            floor = per_call if floor is None else floor
            print(f"{threads:>7} {per_call * 1000:12.2f}"
                  f" {(time.perf_counter() - wall) / args.calls * 1000:13.2f}"
                  f" {per_call / floor:14.2f}x")
    finally:
        database.close()


if __name__ == "__main__":
    main()
