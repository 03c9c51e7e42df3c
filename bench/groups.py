"""Groups benchmark: `residualGroups` (two dimensions, and a day histogram) over a large store,
and `turnGroups` (a CORE-day histogram, two dimensions, filtered) over a store of turns,
through GraphQL and the query layer, beside the SQL floor measured in the same run.

    .venv/bin/python bench/groups.py --db /tmp/bench/bench-1m.db [--rounds 30]
    .venv/bin/python bench/groups.py --turns-db /tmp/bench/turns-1m.db [--rounds 30]

A store of turns: `bench/journal.py --turns 1000000 --journals 10 --db PATH` builds one (one
CORE time every 7 s in each journal: about 8 days at 100,000 turns a journal), or any store
holding turns (at revision 0016 or later: `core-audit db upgrade` builds its turn tallies).

Uses a store that already holds residuals (e.g. `gen_frames.py --frames 400000 --seed
20261202`, ≈1M occurrences, split into several files and ingested one batch a file, so the
day histogram has batches to bucket). For each grouping it times, rounds interleaved:

- GraphQL: the operation run in-process through the server's schema (`execute_operation`:
  parse, validate, the object estimate, resolvers, JSON-ready result), as `core-audit query`
  runs it (building the schema each call); for turns, on a schema built once, as `serve`
  runs it;
- the query layer: `queries.groups.residual_groups` on an open store;
- the floor: the grouping statement itself on a plain read-only sqlite3 connection, fetched
  (the tallies summed per combination, ordered, limited);
- for contrast, the same counts from the residual rows themselves (`count(*) ... GROUP BY` on
  `contract_residuals`, what a facet over a table is without tallies).

For turns, groupings the batches' turn tallies answer (store/db/queries/turn_tally_rows.py):
CORE day; CORE day x grounding source; turn kind x clearance; CORE day x clearance filtered
by grounding source. Each beside its floor, the same sums of `turn_tallies` written by hand
on sqlite3; then, once, for contrast, CORE day x grounding source counted from the turns'
rows on sqlite3 (what the grouping read before the tallies).

Prints p50 wall and CPU in ms and the ratio to the floor; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor_reads import floor_connection

from store.api.context import RequestContext
from store.api.execution import execute_operation
from store.api.schema import build_schema
from store.db.audit_store import AuditStore
from store.db.queries.filters import TurnFilter
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


TURN_DOCUMENT = """query($by: [TurnDimension!]!, $filter: TurnFilter) {
  turnGroups(by: $by, filter: $filter, first: 50) {
  total occurrences groupCount hasMore groups { values count occurrences } } }"""
DAY_US = 86_400_000_000
UNIX_SECONDS = 62_135_683_200  # CORE time of the Unix epoch, in seconds
UNIX_HOURS = UNIX_SECONDS // 3600
DAY_OF_HOUR = f"date((core_hour - {UNIX_HOURS}) * 3600, 'unixepoch')"
# The turn groupings timed: (title, by, filter as GraphQL takes it, the query layer's filter
# fields, the floor: the same sums of turn_tallies by hand on sqlite3).
TURN_GROUPINGS: list[tuple[str, list[str], dict[str, Any] | None, dict[str, Any], str]] = [
    ("turns by CORE_DAY", ["CORE_DAY"], None, {},
     f"SELECT {DAY_OF_HOUR} d, sum(turns) n FROM turn_tallies GROUP BY 1 "
     "ORDER BY n DESC, d LIMIT 50"),
    ("turns by CORE_DAY, GROUNDING_SOURCE", ["CORE_DAY", "GROUNDING_SOURCE"], None, {},
     f"SELECT {DAY_OF_HOUR} d, grounding_source g, sum(turns) n FROM turn_tallies "
     "GROUP BY 1, 2 ORDER BY n DESC, d, g LIMIT 50"),
    ("turns by KIND, CLEARANCE", ["KIND", "CLEARANCE"], None, {},
     "SELECT kind, normative_clearance, sum(turns) n FROM turn_tallies GROUP BY 1, 2 "
     "ORDER BY n DESC, 1, 2 LIMIT 50"),
    ("turns by CORE_DAY, CLEARANCE where grounding source none",
     ["CORE_DAY", "CLEARANCE"], {"groundingSource": ["NONE"]},
     {"grounding_source": ["none"]},
     f"SELECT {DAY_OF_HOUR} d, normative_clearance c, sum(turns) n FROM turn_tallies "
     "WHERE grounding_source = 'none' GROUP BY 1, 2 ORDER BY n DESC, d, c LIMIT 50"),
]
# For contrast, once: the same counts from the turns' rows (what a turn group read before
# the tallies, and still reads for what they cannot answer).
ROWS_CONTRAST = f"""SELECT date(f.core_time / 1000000 - {UNIX_SECONDS}, 'unixepoch') d,
    t.grounding_source g, count(*) n FROM turns t
    LEFT JOIN turn_fields f ON f.turn_key = t.turn_key
    GROUP BY 1, 2 ORDER BY n DESC, 1, 2 LIMIT 50"""


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
    raw = floor_connection(path)
    return path, raw, AuditStore.open(db, read_only=True, time_limit=600)


def turns(db: str, rounds: int) -> None:
    path, raw, store = opened(db)
    count, days, tallies = raw.execute(
        "SELECT (SELECT count(*) FROM turns), (SELECT (max(core_time) - min(core_time)) / "
        f"{DAY_US} + 1 FROM turn_fields), (SELECT count(*) FROM turn_tallies)").fetchone()
    print(f"store {path}: {count:,} turns over {days} CORE days, {tallies:,} turn tallies")
    floor = "floor: turn_tallies GROUP BY (sqlite3)"
    schema = build_schema()  # once, as `serve` does (execute_operation builds one a call)

    async def served(variables: dict[str, Any]) -> None:
        result = await schema.execute(TURN_DOCUMENT, variable_values=variables,
                                      context_value=RequestContext(store))
        assert not result.errors, result.errors

    for title, by, graphql_filter, fields, statement in TURN_GROUPINGS:
        where = TurnFilter(**fields) if fields else None
        compared(title, {
            "GraphQL turnGroups (schema built once)": lambda by=by, f=graphql_filter: (
                asyncio.run(served({"by": by, "filter": f}))),
            "query layer": lambda by=by, where=where: store.execute(turn_groups, by, where, 50),
            floor: lambda statement=statement: raw.execute(statement).fetchall(),
        }, floor, rounds)
    wall, cpu = timed(lambda: raw.execute(ROWS_CONTRAST).fetchall())
    print(f"\ncontrast, once: CORE_DAY x GROUNDING_SOURCE from the turns' rows (sqlite3): "
          f"wall {wall:8.0f} ms  cpu {cpu:8.0f} ms")
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
