"""Groups benchmark: `residualGroups` (two dimensions, and a day histogram) over a large store,
and `turnGroups` by CORE's own day (alone, and with the grounding source) over a store of
turns, through GraphQL and the query layer, beside the SQL floor measured in the same run.

    .venv/bin/python bench/groups.py --db /tmp/bench/bench-1m.db [--rounds 30]
    .venv/bin/python bench/groups.py --turns-db /tmp/bench/turns-1m.db [--rounds 30]

A store of turns: `bench/journal.py --turns 1000000 --journals 10 --db PATH` builds one (one
CORE time every 7 s in each journal: about 81 days), or any store holding turns.

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

For turns, the CORE-day histogram (`turnGroups(by: [CORE_DAY])`, unfiltered: one range count
a day on turn_fields' (core_time, turn_seq) index) beside its floor, the same range counts on
sqlite3, and for contrast the one-statement `GROUP BY core_time / 86400000000` on sqlite3;
CORE day x grounding source (the general grouping: a bucket computed per turn, joined to its
turn) beside the same `GROUP BY` written by hand on sqlite3.

Prints p50 wall and CPU in ms and the ratio to the floor; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from store.api.execution import execute_operation
from store.db.audit_store import AuditStore
from store.db.queries.groups import residual_groups, turn_groups
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


TURN_DOCUMENT = """query($by: [TurnDimension!]!) { turnGroups(by: $by, first: 50) {
  total occurrences groupCount hasMore groups { values count occurrences } } }"""
CORE_DAY = ("CORE_DAY",)
CORE_DAY_SOURCE = ("CORE_DAY", "GROUNDING_SOURCE")
DAY_US = 86_400_000_000
UNIX_SECONDS = 62_135_683_200  # CORE time of the Unix epoch, in seconds
TURN_FLOOR = {
    CORE_DAY_SOURCE: f"""SELECT date(f.core_time / 1000000 - {UNIX_SECONDS}, 'unixepoch') d,
            t.grounding_source g, count(*) n FROM turns t
            LEFT JOIN turn_fields f ON f.turn_key = t.turn_key
            GROUP BY 1, 2 ORDER BY n DESC, 1, 2 LIMIT 50""",
}
TURN_CONTRAST = {
    CORE_DAY: """SELECT core_time / 86400000000 d, count(*) n FROM turn_fields
                 GROUP BY 1 ORDER BY n DESC LIMIT 50""",
}


def day_ranges(raw: sqlite3.Connection) -> Callable[[], Any]:
    """The histogram's floor: one range count a day, in one statement, on sqlite3."""
    low, high = raw.execute("SELECT min(core_time), max(core_time) FROM turn_fields").fetchone()
    days = list(range(low // DAY_US, high // DAY_US + 1))
    statement = ("WITH buckets(low, high) AS (VALUES " + ", ".join(["(?, ?)"] * len(days))
                 + ") SELECT low, (SELECT count(*) FROM turn_fields WHERE core_time >= low "
                 "AND core_time < high) FROM buckets")
    arguments = [bound for day in days for bound in (day * DAY_US, (day + 1) * DAY_US)]

    def run() -> Any:
        raw.execute("SELECT min(core_time) FROM turn_fields").fetchone()  # as the query layer
        raw.execute("SELECT max(core_time) FROM turn_fields").fetchone()  # finds the range
        counted = raw.execute(statement, arguments).fetchall()
        raw.execute("SELECT count(*) FROM turns").fetchone()
        return sorted(counted, key=lambda row: -row[1])[:50]
    return run


def timed(call: Callable[[], Any]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    call()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="a store path holding residuals")
    parser.add_argument("--turns-db", help="a store path holding turns (bench/journal.py "
                                           "builds one)")
    parser.add_argument("--rounds", type=int, default=30, help="timed calls of each")
    args = parser.parse_args()
    if args.db is None and args.turns_db is None:
        parser.error("give --db, --turns-db or both")
    if args.db is not None:
        residuals(args.db, args.rounds)
    if args.turns_db is not None:
        turns(args.turns_db, args.rounds)


def compared(title: str, ways: dict[str, Callable[[], Any]], floor_name: str,
             rounds: int) -> None:
    """Each way timed `rounds` times, rounds interleaved after a warm call, beside the floor."""
    for call in ways.values():  # warm: page cache, statement caches
        call()
    walls: dict[str, list[float]] = {name: [] for name in ways}
    cpus: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, call in ways.items():
            wall, cpu = timed(call)
            walls[name].append(wall)
            cpus[name].append(cpu)
    floor = statistics.median(walls[floor_name])
    print(f"\n{title} (p50 of {rounds}, rounds interleaved)")
    for name in ways:
        wall = statistics.median(walls[name])
        print(f"  {name:44} wall {wall:8.2f} ms  cpu {statistics.median(cpus[name]):8.2f}"
              f" ms  {wall / floor:7.1f}x floor")


def opened(db: str) -> tuple[Path, sqlite3.Connection, AuditStore]:
    """The store's file, a plain read-only sqlite3 connection to it (the floors') and the
    store itself (read-only, a time limit no figure reaches)."""
    path = sqlite_path(resolve_url(db))
    assert path is not None, "a SQLite store path"
    raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    return path, raw, AuditStore.open(db, read_only=True, time_limit=600)


def turns(db: str, rounds: int) -> None:
    path, raw, store = opened(db)
    count, days = raw.execute(
        "SELECT (SELECT count(*) FROM turns), (SELECT (max(core_time) - min(core_time)) / "
        f"{DAY_US} + 1 FROM turn_fields)").fetchone()
    print(f"store {path}: {count:,} turns over {days} CORE days")
    floor = "floor: range counts (sqlite3)"
    compared("turns by CORE_DAY", {
        "GraphQL turnGroups": lambda: asyncio.run(execute_operation(
            store, TURN_DOCUMENT, {"by": list(CORE_DAY)}, None)),
        "query layer": lambda: store.execute(turn_groups, list(CORE_DAY), None, 50),
        floor: day_ranges(raw),
        "contrast: GROUP BY core_time / day (sqlite3)": lambda: raw.execute(
            TURN_CONTRAST[CORE_DAY]).fetchall(),
    }, floor, rounds)
    floor = "floor: the same GROUP BY (sqlite3)"
    compared("turns by CORE_DAY, GROUNDING_SOURCE", {
        "GraphQL turnGroups": lambda: asyncio.run(execute_operation(
            store, TURN_DOCUMENT, {"by": list(CORE_DAY_SOURCE)}, None)),
        "query layer": lambda: store.execute(turn_groups, list(CORE_DAY_SOURCE), None, 50),
        floor: lambda: raw.execute(TURN_FLOOR[CORE_DAY_SOURCE]).fetchall(),
    }, floor, rounds)
    store.close()


def residuals(db: str, rounds: int) -> None:
    path, raw, store = opened(db)
    leaves, batches = raw.execute(
        "SELECT (SELECT max(tree_size) FROM tree_heads), (SELECT count(*) FROM ingest_batches)"
    ).fetchone()
    print(f"store {path}: {leaves:,} leaves, {batches} batches")
    for by in (TWO, DAY):
        floor = "floor: tallies GROUP BY (sqlite3)"
        ways: dict[str, Callable[[], Any]] = {
            "GraphQL residualGroups": lambda by=by: asyncio.run(execute_operation(
                store, DOCUMENT, {"by": list(by)}, None)),
            "query layer": lambda by=by: store.execute(residual_groups, list(by), None, 50),
            floor: lambda by=by: raw.execute(FLOOR[by]).fetchall(),
            "contrast: rows GROUP BY (sqlite3)": lambda by=by: raw.execute(
                FROM_ROWS[by]).fetchall(),
        }
        compared(f"by {', '.join(by)}", ways, floor, rounds)
    store.close()


if __name__ == "__main__":
    main()
