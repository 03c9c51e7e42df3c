"""Order benchmark: a MOST_SEEN page beside its SQL floor, and every order's pages, over a
large store.

    .venv/bin/python bench/orders.py --db /tmp/seen-1m.db [--repeat 20] [--size 100]

Uses a store that already holds residuals (e.g. a copy of a gen_frames.py store after
`core-audit db upgrade`). Times the query layer's `list_residuals` MOST_SEEN pages: the
first, page 5 (by the cursor page 4 handed out), filtered by the most common kind, filtered
by the rarest code, deep among the residuals seen once, and as of the oldest and the newest
tree head. Beside each, its floor, measured in the same run: the plain statement a 100-row
page of the same rows in seq order is (`SELECT * ... WHERE filter ORDER BY seq LIMIT n`, as
of the head when asOf is given), run on a plain read-only sqlite3 connection and fetched:
the cheapest read of a page there is. Then the first, next and last page of the other
orders, and the statement MOST_SEEN ran per page before revision 0010 (every sighting
counted). Then the column orders (CODE_ASC, KIND_DESC, ID_ASC, ...): the first page and the
page after page 4's cursor, beside the same page as plain SQL along the column's index
(`ORDER BY column, seq LIMIT n`, the cursor's row onwards). Prints p50 of `--repeat` runs,
CPU and wall (SQLite runs in this process, so its CPU time is the query's own even on a busy
machine); asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import text

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import Order, ResidualFilter
from store.db.queries.cursors import cursor_for
from store.db.schema.engine import resolve_url, sqlite_path
from store.model.taxonomy import ResidualKind

# What a MOST_SEEN page cost before revision 0010: every residual seen more than once,
# counted from the sightings on every page.
COUNTING_EVERY_SIGHTING = """
SELECT residual_id, count(*) FROM residual_occurrences GROUP BY residual_id HAVING count(*) > 1
"""


def timed(repeat: int, call: Callable[[], Any]) -> tuple[float, float]:
    """p50 CPU and wall of `repeat` calls, in ms."""
    cpu_times, wall_times = [], []
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        call()
        cpu_times.append(time.process_time() - cpu)
        wall_times.append(time.perf_counter() - wall)
    return statistics.median(cpu_times) * 1000, statistics.median(wall_times) * 1000


def show(label: str, figures: tuple[float, float],
         floor: tuple[float, float] | None = None) -> None:
    line = f"{label:52} cpu {figures[0]:7.1f} ms  wall {figures[1]:7.1f} ms"
    if floor is not None:
        line += (f"   floor cpu {floor[0]:6.2f} ms  wall {floor[1]:6.2f} ms"
                 f"   {figures[1] / max(floor[1], 1e-6):6.1f}x")
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="store path, holding residuals")
    parser.add_argument("--repeat", type=int, default=20,
                        help="times each page is read (the median is printed)")
    parser.add_argument("--size", type=int, default=100, help="rows per page")
    args = parser.parse_args()
    db = AuditStore.open(args.db, read_only=True, time_limit=3600)
    path = sqlite_path(resolve_url(args.db))
    assert path is not None, "the floor reads a SQLite file"
    raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    run, size, repeat = db.execute, args.size, args.repeat

    def floor(where: str = "1", params: tuple[Any, ...] = ()) -> tuple[float, float]:
        statement = (f"SELECT * FROM contract_residuals WHERE {where} ORDER BY seq "
                     f"LIMIT {size + 1}")
        return timed(repeat, lambda: raw.execute(statement, params).fetchall())

    def most_seen(*page: Any, **options: Any) -> Callable[[], Any]:
        return lambda: run(queries.list_residuals, *page, order=Order.MOST_SEEN, **options)

    occurrences = run(lambda c: c.execute(
        text("SELECT count(*) FROM residual_occurrences")).scalar_one())
    heads = run(lambda c: c.execute(text(
        "SELECT tree_size FROM tree_heads ORDER BY tree_size")).scalars().all())
    rare = run(lambda c: c.execute(text(
        "SELECT residual_code FROM contract_residuals GROUP BY residual_code "
        "ORDER BY count(*), residual_code LIMIT 1")).scalar_one())
    rare_count = run(lambda c: c.execute(text(
        "SELECT count(*) FROM contract_residuals WHERE residual_code = :code"),
        {"code": rare}).scalar_one())
    print(f"store: {run(queries.count_residuals)} residuals, {occurrences} occurrences, "
          f"{len(heads)} tree heads; load average {os.getloadavg()[0]:.2f}")
    print(f"p50 of {repeat} runs; floor: the same rows' {size}-row page in seq order, plain "
          "SQL on a read-only sqlite3 connection\n")

    show(f"MOST_SEEN first {size}", timed(repeat, most_seen(None, size)), floor())
    cursor = None
    for _ in range(4):
        cursor = run(queries.list_residuals, None, size, cursor, order=Order.MOST_SEEN).end_cursor
    show("MOST_SEEN page 5 (after page 4's cursor)",
         timed(repeat, most_seen(None, size, cursor)), floor())
    common = ResidualFilter(kind=[ResidualKind.MISSING_ROLE])
    show(f"MOST_SEEN first {size}, kind missing_role", timed(repeat, most_seen(common, size)),
         floor("residual_kind = 'missing_role'"))
    one_code = ResidualFilter(code=[rare])
    show(f"MOST_SEEN first {size}, code {rare} ({rare_count})",
         timed(repeat, most_seen(one_code, size)), floor("residual_code = ?", (rare,)))
    seen_once = run(lambda c: c.execute(text(
        "SELECT record_seq FROM sighting_counts WHERE record_table = 'contract_residuals' "
        "AND sightings = 1 AND record_seq > (SELECT max(seq) / 2 FROM contract_residuals) "
        "ORDER BY record_seq LIMIT 1")).scalar_one())
    deep = cursor_for(Order.MOST_SEEN, (1, seen_once))
    show(f"MOST_SEEN next {size} after a seen-once cursor", timed(repeat, most_seen(
        None, size, deep)), floor("seq > ?", (seen_once,)))
    show(f"MOST_SEEN last {size}", timed(repeat, most_seen(None, last=size)), floor())
    for name, head in (("oldest", heads[0]), ("newest", heads[-1])):
        show(f"MOST_SEEN first {size}, as of the {name} head ({head})",
             timed(repeat, most_seen(None, size, as_of=head)), floor("seq <= ?", (head,)))
        show(f"MOST_SEEN page 2, kind missing_role, as of {name}", timed(repeat, most_seen(
            common, size, run(queries.list_residuals, common, size, order=Order.MOST_SEEN,
                              as_of=head).end_cursor, as_of=head)),
            floor("residual_kind = 'missing_role' AND seq <= ?", (head,)))
    print()
    for order in (Order.OLDEST_FIRST, Order.NEWEST_FIRST):
        first = run(queries.list_residuals, None, size, order=order)
        show(f"{order.name} first {size}", timed(repeat, lambda o=order: run(
            queries.list_residuals, None, size, order=o)), floor())
        show(f"{order.name} next {size} (after)", timed(repeat, lambda o=order, p=first: run(
            queries.list_residuals, None, size, p.end_cursor, order=o)), floor())
    show("counting every sighting, as a page did before 0010", timed(
        min(repeat, 3), lambda: raw.execute(COUNTING_EVERY_SIGHTING).fetchall()))
    print()
    for order, column in ((Order.CODE_ASC, "residual_code"), (Order.KIND_DESC, "residual_kind"),
                          (Order.ORGAN_ASC, "candidate_organ"), (Order.ID_ASC, "residual_id")):
        column_orders(run, raw, order, column, size, repeat)


def column_orders(run: Callable[..., Any], raw: sqlite3.Connection, order: Order, column: str,
                  size: int, repeat: int) -> None:
    """A column order's first page and page 5, beside the same rows read along its index."""
    direction = "DESC" if order.descending else "ASC"
    show(f"{order.name} first {size}", timed(repeat, lambda: run(
        queries.list_residuals, None, size, order=order)), timed(repeat, lambda: raw.execute(
            f"SELECT * FROM contract_residuals ORDER BY {column} {direction}, seq {direction} "
            f"LIMIT {size + 1}").fetchall()))
    cursor = None
    for _ in range(4):
        cursor = run(queries.list_residuals, None, size, cursor, order=order).end_cursor
    value, seq = raw.execute(
        f"SELECT {column}, seq FROM contract_residuals ORDER BY {column} {direction}, "
        f"seq {direction} LIMIT 1 OFFSET {4 * size - 1}").fetchone()
    beyond = ">" if direction == "ASC" else "<"
    show(f"{order.name} page 5 (after page 4's cursor)", timed(repeat, lambda: run(
        queries.list_residuals, None, size, cursor, order=order)), timed(
        repeat, lambda: raw.execute(
            f"SELECT * FROM contract_residuals WHERE ({column}, seq) {beyond} (?, ?) ORDER BY "
            f"{column} {direction}, seq {direction} LIMIT {size + 1}", (value, seq)).fetchall()))


if __name__ == "__main__":
    main()
