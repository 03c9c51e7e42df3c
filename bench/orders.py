"""Order benchmark: the query layer's time for one page in each order over a large store.

    .venv/bin/python bench/orders.py --db /tmp/core-audit-bench-1m.db [--repeat 3] [--size 100]

Uses a store that already holds residuals (build one with bench/query.py). Times
`list_residuals` pages in OLDEST_FIRST, NEWEST_FIRST and MOST_SEEN: the first page, the next,
the last (`last`), one filtered by the most common kind and one by a single code, a MOST_SEEN
page deep among the residuals seen once, and one as of the newest tree head. For comparison it
also times the plain statement MOST_SEEN would be without splitting off the residuals seen
more than once: every residual's correlated sightings count, ORDER BY it, LIMIT. Prints the
best of `--repeat` runs, CPU and wall (SQLite runs in this process, so its CPU time is the
query's own even on a busy machine); asserts nothing about time.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import text

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import Order, ResidualFilter
from store.db.queries.cursors import cursor_for
from store.model.taxonomy import ResidualKind

PLAIN_MOST_SEEN = """
SELECT r.*, (SELECT count(*) FROM residual_occurrences o WHERE o.residual_id = r.residual_id)
       AS occurrence_count
FROM contract_residuals r ORDER BY occurrence_count DESC, r.seq LIMIT :size
"""


def timed(label: str, repeat: int, call: Callable[[], Any]) -> Any:
    best_cpu = best_wall = float("inf")
    result = None
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        result = call()
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    print(f"{label:58} cpu {best_cpu * 1000:8.1f} ms   wall {best_wall * 1000:8.1f} ms",
          flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="store URL or path, holding residuals")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=100, help="rows per page")
    args = parser.parse_args()
    db = AuditStore.open(args.db, read_only=True, time_limit=3600)
    run, size, repeat = db.execute, args.size, args.repeat
    occurrences = run(lambda c: c.execute(
        text("SELECT count(*) FROM residual_occurrences")).scalar_one())
    print(f"store: {run(queries.count_residuals)} residuals, {occurrences} occurrences")
    for order in Order:
        name = order.name
        first = timed(f"{name} first {size}", repeat,
                      lambda o=order: run(queries.list_residuals, None, size, order=o))
        timed(f"{name} next {size} (after)", repeat, lambda o=order, p=first: run(
            queries.list_residuals, None, size, p.end_cursor, order=o))
        timed(f"{name} last {size}", repeat,
              lambda o=order: run(queries.list_residuals, None, last=size, order=o))
    common = ResidualFilter(kind=[ResidualKind.MISSING_ROLE])
    one_code = ResidualFilter(code=["entity_unbound"])
    timed(f"MOST_SEEN first {size}, kind missing_role", repeat, lambda: run(
        queries.list_residuals, common, size, order=Order.MOST_SEEN))
    timed(f"MOST_SEEN first {size}, code entity_unbound", repeat, lambda: run(
        queries.list_residuals, one_code, size, order=Order.MOST_SEEN))
    # A cursor in the middle of the residuals seen once, as a page there would hand out.
    seen_once = run(lambda c: c.execute(text(
        "SELECT r.seq FROM contract_residuals r WHERE r.seq > (SELECT max(seq) / 2 FROM "
        "contract_residuals) AND (SELECT count(*) FROM residual_occurrences o WHERE "
        "o.residual_id = r.residual_id) = 1 ORDER BY r.seq LIMIT 1")).scalar_one())
    deep = cursor_for(Order.MOST_SEEN, (1, seen_once))
    timed(f"MOST_SEEN next {size} after a seen-once cursor", repeat, lambda: run(
        queries.list_residuals, None, size, deep, order=Order.MOST_SEEN))
    head = run(queries.ledger_status).tree_size
    timed(f"MOST_SEEN first {size}, as of the newest head", repeat, lambda: run(
        queries.list_residuals, None, size, order=Order.MOST_SEEN, as_of=head))
    timed(f"plain ORDER BY correlated count LIMIT {size} (not used)", repeat, lambda: run(
        lambda c: c.execute(text(PLAIN_MOST_SEEN), {"size": size}).all()))


if __name__ == "__main__":
    main()
