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

    .venv/bin/python bench/orders.py --db STORE --columns [--build-texted TURNS]

`--columns` times only issue 33's column orders (assessments by organ, runnable, problem
text and id; surfaces by text; turns by prompt; batches by source and ingest time) on
whichever of those lists the store holds: the first page, the page after the cursor of the
row half way down, and the last page, each beside its floor (the same rows as plain SQL),
with each order's index and its bytes (SQLite's dbstat). `--build-texted TURNS` first builds
`--db` (a new file: it writes about 6 KB a turn, 1.25 GB for 200,000) with TURNS journal
turns whose prompts and surfaces are distinct texts of 20-400 characters.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import text

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import Order, ResidualFilter
from store.db.queries.cursors import cursor_for
from store.db.schema.engine import resolve_url, sqlite_path
from store.model.taxonomy import ResidualKind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from floor_reads import floor_connection
from journal import journal_lines

WORDS = ["apples", "pears", "the", "a", "of", "grounded", "surface", "teaching", "chain",
         "prompt", "why", "how", "many", "does", "which", "corpus", "verified", "every",
         "river", "stone", "light", "north", "Ünïcode", "émigré", "東京", "ß", "Zebra", "zebra",
         "_under", "0", "9"]


def texted_lines(journal: int, turns: int, seed: int) -> Iterator[bytes]:
    """bench/journal.py's journal lines with a distinct prompt and surface text per turn, of
    20 to 400 characters (words drawn with `seed`): long texts to sort by."""
    draw = random.Random(seed + journal)
    for line in journal_lines(journal, turns):
        entry = json.loads(line)
        for name in ("prompt", "surface"):
            length = draw.randint(20, 400)
            words: list[str] = []
            while sum(len(w) + 1 for w in words) < length:
                words.append(draw.choice(WORDS))
            entry[name] = " ".join(words)[:length] + f" #{journal}.{entry['turn_id']}"
        yield json.dumps(entry, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def build_texted(path: Path, turns: int, journals: int = 4, seed: int = 33) -> None:
    """A store of `turns` journal turns (and as many surfaces) with long texts."""
    with AuditStore.open(str(path)) as store:
        for journal in range(journals):
            store.ingest(list(texted_lines(journal, turns // journals, seed)),
                         source=f"texted-{journal}.jsonl")

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
    parser.add_argument("--columns", action="store_true",
                        help="time only the column orders of issue 33 (assessments, surface "
                             "text, prompt, batches), on whichever of them the store holds")
    parser.add_argument("--build-texted", type=int, metavar="TURNS",
                        help="first build --db (it must not exist) with TURNS journal turns, "
                             "each with a distinct prompt and surface of 20-400 characters")
    args = parser.parse_args()
    if args.build_texted:
        if Path(args.db).exists():
            parser.error(f"--build-texted: {args.db} exists")
        build_texted(Path(args.db), args.build_texted)
    db = AuditStore.open(args.db, read_only=True, time_limit=3600)
    path = sqlite_path(resolve_url(args.db))
    assert path is not None, "the floor reads a SQLite file"
    raw = floor_connection(path)
    run, size, repeat = db.execute, args.size, args.repeat
    if args.columns:
        shown_columns(run, raw, size, repeat)
        return

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


# Issue 33's column orders: (list, order, its table, its column).
SHOWN_COLUMNS = [
    ("assessments", Order.ORGAN_ASC, "contract_assessments", "candidate_organ"),
    ("assessments", Order.RUNNABLE_DESC, "contract_assessments", "runnable"),
    ("assessments", Order.PROBLEM_TEXT_ASC, "contract_assessments", "problem_text"),
    ("assessments", Order.PROBLEM_TEXT_DESC, "contract_assessments", "problem_text"),
    ("assessments", Order.ID_ASC, "contract_assessments", "assessment_id"),
    ("surfaces", Order.TEXT_ASC, "surface_records", "surface"),
    ("surfaces", Order.TEXT_DESC, "surface_records", "surface"),
    ("turns", Order.PROMPT_ASC, "turns", "prompt"),
    ("turns", Order.PROMPT_DESC, "turns", "prompt"),
    ("batches", Order.SOURCE_ASC, "ingest_batches", "source"),
    ("batches", Order.INGESTED_AT_DESC, "ingest_batches", "ingested_at"),
]


def index_bytes(raw: sqlite3.Connection) -> dict[str, int]:
    """Each index's bytes in the file (SQLite's dbstat)."""
    return dict(raw.execute(
        "SELECT d.name, sum(d.pgsize) FROM dbstat d JOIN sqlite_master m ON m.name = d.name "
        "WHERE m.type = 'index' GROUP BY d.name").fetchall())


def shown_columns(run: Callable[..., Any], raw: sqlite3.Connection, size: int,
                  repeat: int) -> None:
    """Each order's first page and a deep one (after the cursor of the row half way down),
    through the query layer, beside its floor: the same rows as plain SQL (`ORDER BY column,
    seq LIMIT n`, from the cursor's row onwards) on a read-only sqlite3 connection."""
    indexes = index_bytes(raw)
    print(f"load average {os.getloadavg()[0]:.2f}; p50 of {repeat} runs; floor: the same "
          f"{size}-row page as plain SQL on a read-only sqlite3 connection\n")
    for name, order, table, column in SHOWN_COLUMNS:
        rows = raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        if rows:
            index = next((i for i in indexes if i == f"ix_{table}_{column}_seq"), None)
            print(f"{name} ({rows} rows) by {column}: index "
                  + (f"{index}, {indexes[index] / 2**20:.1f} MiB" if index else "none"))
            shown_column(run, raw, size, repeat, queries.LISTINGS[name], order, table, column,
                         rows)


def shown_column(run: Callable[..., Any], raw: sqlite3.Connection, size: int, repeat: int,
                 listing: Any, order: Order, table: str, column: str, rows: int) -> None:
    direction = "DESC" if order.descending else "ASC"
    beyond = "<" if order.descending else ">"
    sql = (f"SELECT * FROM {table} WHERE {{where}} ORDER BY {column} {direction}, "
           f"seq {direction} LIMIT {size + 1}")
    show(f"  {order.name} first {size}", timed(repeat, lambda: run(
        listing.list, None, size, order=order)),
        timed(repeat, lambda: raw.execute(sql.format(where="1")).fetchall()))
    value, seq = raw.execute(
        f"SELECT {column}, seq FROM {table} ORDER BY {column} {direction}, seq "
        f"{direction} LIMIT 1 OFFSET {rows // 2}").fetchone()
    deep = cursor_for(order, (0, value, seq))
    show(f"  {order.name} after row {rows // 2}", timed(repeat, lambda: run(
        listing.list, None, size, deep, order=order)), timed(repeat, lambda: raw.execute(
            sql.format(where=f"({column}, seq) {beyond} (?, ?)"), (value, seq)).fetchall()))
    show(f"  {order.name} last {size} (backwards)", timed(repeat, lambda: run(
        listing.list, None, last=size, order=order)))

if __name__ == "__main__":
    main()
