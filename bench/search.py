"""Search benchmark: a two-word full-text search over a large store's residuals (the list with
its totalCount and snippets, the RANK order, the facets, the console page), beside the SQL
floor and, when installed, datasette on the same store, measured in the same run.

    .venv/bin/python bench/search.py --db /tmp/bench-search/store.db [--rounds 20]
        [--search "tom apples"] [--migration] [--datasette]

Uses a store that already holds residuals, e.g. `python gen_frames.py --frames 400000 --seed
20261202 > frames.jsonl` (≈1M occurrences, 513k residuals) then `core-audit ingest
frames.jsonl --db /tmp/bench-search/store.db` (≈1.2 GB; the ingest takes minutes). Timed,
rounds interleaved, p50 wall in ms and the ratio to the floor:

- GraphQL: each operation through one schema built once (`schema.execute`, the server's
  limits and resolvers, JSON-ready result): `residuals(search:, first: 50)` with totalCount
  and snippets, the same in RANK order, `residualFacets(search:)`;
- the console page `/residuals?search=...` through the console's routes in-process
  (Starlette's TestClient: routing, the page's reads, the template), no page cache;
- the floors, each beside the figures it bounds: the bare FTS5 queries on a plain read-only
  sqlite3 connection: the matches counted (`SELECT count(*) ... MATCH`: the list's
  totalCount) and the best 50 by rank (`ORDER BY rank LIMIT 50`: the RANK page), and for
  the facets and the console page the facet statement itself, as the query layer sends it
  (revision 0015: a sum over the matches' residual_record_tallies rows);
- `--datasette`: datasette's own search (`?_search=`) of the same documents, in-process,
  on a copy of the store's `residual_texts` made searchable by `sqlite-utils enable-fts`
  (the copy is written beside the store and removed afterwards; needs `pip install
  datasette sqlite-utils`).

`--migration` also times revisions 0013 and 0014 (the text tables and indexes) and 0015 (the
residual record tallies) building their derived data: the store is taken down to 0012 and up
again, one revision group at a time (derived tables only: no leaf changes; it writes: use a
copy). Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor_reads import floor_connection

from store.api.context import RequestContext
from store.api.schema import build_schema
from store.console.pages import Console
from store.db.audit_store import AuditStore
from store.db.queries.search_syntax import parse_search
from store.db.schema.engine import resolve_url, sqlite_path
from store.db.schema.schema_version import downgrade, upgrade

LIST = """query($search: String) { residuals(search: $search, first: 50) { totalCount
  edges { snippet node { residualId residualKind residualCode occurrenceCount } } } }"""
RANKED = """query($search: String) { residuals(search: $search, order: RANK, first: 50) {
  edges { snippet node { residualId residualKind residualCode occurrenceCount } } } }"""
FACETS = """query($search: String) { residualFacets(search: $search) { total occurrences
  byKind { value count } byAxis { value count } byOrgan { value count }
  byFamily { value count } byCode { value count } } }"""


def timed(call: Callable[[], Any]) -> float:
    wall = time.perf_counter()
    call()
    return (time.perf_counter() - wall) * 1000


def _graphql(schema: Any, store: AuditStore, document: str, search: str) -> Callable[[], Any]:
    def run() -> Any:
        result = asyncio.run(schema.execute(document, variable_values={"search": search},
                                            context_value=RequestContext(store)))
        assert not result.errors, result.errors
        return result.data
    return run


def _facet_floor(store: AuditStore, search: str) -> tuple[str, list[Any]]:
    """The facets' own statement (as the query layer sends it) and its parameters."""
    from sqlalchemy import event

    from store.db.queries.listing_declarations import RESIDUALS
    from store.db.queries.search import searched
    from store.db.schema.tables import contract_residuals

    sent: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        store.execute(RESIDUALS.facet_counts, searched(None, search, contract_residuals), None)
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    statement, parameters = next(s for s in sent if "residual_texts_fts" in s[0])
    return statement, list(parameters)


def _datasette(path: Path, rounds: int, search: str) -> dict[str, Callable[[], Any]]:
    try:
        from datasette.app import Datasette
    except ImportError:
        print("datasette: not installed (pip install datasette sqlite-utils): skipped")
        return {}
    copy = path.with_name(path.stem + "-datasette.db")
    copy.unlink(missing_ok=True)
    started = time.perf_counter()
    with sqlite3.connect(copy) as target:
        target.execute(f"ATTACH '{path}' AS store")
        target.execute("CREATE TABLE residual_texts AS SELECT record_seq, problem_text, "
                       "explanation FROM store.residual_texts")
    subprocess.run([sys.executable, "-m", "sqlite_utils", "enable-fts", str(copy),
                    "residual_texts", "problem_text", "explanation", "--fts5"], check=True)
    print(f"datasette copy: residual_texts with sqlite-utils enable-fts in "
          f"{time.perf_counter() - started:.1f} s ({copy})")
    datasette = Datasette([str(copy)], settings={"num_sql_threads": 1})
    url = f"/{copy.stem}/residual_texts.json?_search={search.replace(' ', '+')}&_size=50"

    async def fetch() -> Any:
        response = await datasette.client.get(url)
        assert response.status_code == 200, response.text[:300]
        return response.json()

    def run() -> Any:
        return asyncio.run(fetch())

    return {"datasette ?_search= (same documents)": run, "_copy": lambda: copy}


def _migration(db: str) -> None:
    url = resolve_url(db)
    steps = {}
    for name, call in (("down to 0014", lambda: downgrade(url, "0014")),
                       ("down to 0012", lambda: downgrade(url, "0012")),
                       ("up to 0014 (text tables derived, FTS5 indexes built)",
                        lambda: upgrade(url, "0014")),
                       ("up to 0015 (residual record tallies derived)",
                        lambda: upgrade(url, "0015"))):
        started = time.perf_counter()
        call()
        steps[name] = time.perf_counter() - started
    print("\nrevisions 0013-0015 on this store: " + ", ".join(
        f"{name} {seconds:.1f} s" for name, seconds in steps.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="a SQLite store path holding residuals")
    parser.add_argument("--rounds", type=int, default=20, help="timed calls of each")
    parser.add_argument("--search", default="tom apples", help="the two-word search timed")
    parser.add_argument("--migration", action="store_true",
                        help="also time revision 0013 building the indexes (down and up)")
    parser.add_argument("--datasette", action="store_true",
                        help="also time datasette's search on an FTS-enabled copy")
    args = parser.parse_args()
    path = sqlite_path(resolve_url(args.db))
    assert path is not None, "a SQLite store path"
    if args.migration:
        _migration(args.db)
    raw = floor_connection(path)
    match = parse_search(args.search).fts5()
    leaves, residuals = raw.execute(
        "SELECT (SELECT max(tree_size) FROM tree_heads), (SELECT count(*) FROM "
        "contract_residuals)").fetchone()
    store = AuditStore.open(args.db, read_only=True, time_limit=600)
    schema = build_schema()
    # The console's routes with no page cache: every request reads and renders its page.
    app = Starlette(routes=Console(store, cache_pages=0).routes())
    client = TestClient(app, base_url="http://127.0.0.1")
    page = f"/residuals?search={args.search.replace(' ', '+')}"
    facet_sql, facet_parameters = _facet_floor(store, args.search)
    count = raw.execute("SELECT count(*) FROM residual_texts_fts WHERE residual_texts_fts "
                        "MATCH ?", (match,)).fetchone()[0]
    print(f"store {path}: {leaves:,} leaves, {residuals:,} residuals; search "
          f"{args.search!r} ({match}) matches {count:,}")

    def console() -> Any:
        response = client.get(page)
        assert response.status_code == 200, response.text[:300]

    ways: dict[str, Callable[[], Any]] = {
        "floor: FTS5 MATCH count(*) (sqlite3)": lambda: raw.execute(
            "SELECT count(*) FROM residual_texts_fts WHERE residual_texts_fts MATCH ?",
            (match,)).fetchall(),
        "floor: FTS5 MATCH best 50 by rank": lambda: raw.execute(
            "SELECT rowid, rank FROM residual_texts_fts WHERE residual_texts_fts MATCH ? "
            "ORDER BY rank LIMIT 50", (match,)).fetchall(),
        "GraphQL residuals(search:) + totalCount": _graphql(schema, store, LIST, args.search),
        "GraphQL residuals(search:, order: RANK)": _graphql(schema, store, RANKED,
                                                            args.search),
        "floor: the facets' statement (sqlite3)": lambda: raw.execute(
            facet_sql, facet_parameters).fetchall(),
        "GraphQL residualFacets(search:)": _graphql(schema, store, FACETS, args.search),
        "console /residuals?search=": console,
    }
    extra = _datasette(path, args.rounds, args.search) if args.datasette else {}
    copy = extra.pop("_copy", None)
    ways.update(extra)
    for call in ways.values():  # warm: page cache, statement caches
        call()
    walls: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.rounds):
        for name, call in ways.items():
            walls[name].append(timed(call))
    # Each figure beside the floor measured in the same run that bounds it.
    floors = {"GraphQL residuals(search:) + totalCount":
              "floor: FTS5 MATCH count(*) (sqlite3)",
              "GraphQL residuals(search:, order: RANK)": "floor: FTS5 MATCH best 50 by rank",
              "GraphQL residualFacets(search:)": "floor: the facets' statement (sqlite3)",
              "console /residuals?search=": "floor: the facets' statement (sqlite3)"}
    p50 = {name: statistics.median(wall) for name, wall in walls.items()}
    print(f"\np50 of {args.rounds} rounds, interleaved; each figure beside its same-run floor")
    for name in ways:
        floor = floors.get(name)
        beside = "" if floor is None else (
            f"  floor {p50[floor]:8.2f} ms ({p50[name] / p50[floor]:4.1f}x)")
        print(f"  {name:44} {p50[name]:8.2f} ms{beside}")
    client.close()
    store.close()
    if copy is not None:
        copy().unlink(missing_ok=True)
        shutil.rmtree(copy().with_suffix(".db-wal"), ignore_errors=True)


if __name__ == "__main__":
    main()
