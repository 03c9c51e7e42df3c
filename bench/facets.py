"""Facet benchmark: one facet a page at a time (`facet(field:, first, after)`), the null
value selected as a filter, and the console's "show all", sorted and "(none)" pages, over a
large store, each beside its floor measured in the same run.

    .venv/bin/python bench/facets.py --db /tmp/core-audit-bench-1m.db [--repeat 20]

Uses a store that already holds residuals (e.g. the one bench/query.py or bench/console.py
builds: about 1.2 GB at 1M occurrences; with turns, e.g. one of bench/journal.py, the turn
facets are timed too). Times the query layer's facet pages of residuals (code, family: sums
of the batches' tallies; filtered by the most common kind), of surfaces (chain, subject) and
of turns (journal, chain), then the console's pages through the ASGI app in-process (page
cache off): `/residuals?facet=code`, `/residuals?isNull=familyId`, `/residuals?order=
CODE_ASC&first=100` and its next page, `/turns?facet=journal`. Floors: the plain GROUP BY
each facet page is (over the tallies for residuals, the rows for surfaces and turns), and the
list's rows read along their index, on a read-only sqlite3 connection, fetched. Prints p50 of
`--repeat` runs, CPU and wall (wall is inflated by other work on a busy machine: compare each
line with its floor); asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from html import unescape
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from floor_reads import floor_connection
from orders import show, timed
from starlette.testclient import TestClient

from store.api.app import create_app
from store.console.pages import Console
from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import ResidualFilter
from store.db.schema.engine import resolve_url, sqlite_path
from store.model.taxonomy import ResidualKind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="store path, holding residuals")
    parser.add_argument("--repeat", type=int, default=20,
                        help="times each page is read (the median is printed)")
    args = parser.parse_args()
    db = AuditStore.open(args.db, read_only=True, time_limit=3600)
    path = sqlite_path(resolve_url(args.db))
    assert path is not None, "the floor reads a SQLite file"
    raw = floor_connection(path)
    run, repeat = db.execute, args.repeat

    def floor(statement: str, params: tuple[Any, ...] = ()) -> tuple[float, float]:
        return timed(repeat, lambda: raw.execute(statement, params).fetchall())

    def count(table: str) -> int:
        return int(raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    print(f"store: {count('contract_residuals'):,} residuals "
          f"({count('residual_tallies'):,} tally rows), {count('surface_records'):,} "
          f"surfaces, {count('turns'):,} turns; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"p50 of {repeat} runs; floor: the same counts as one plain GROUP BY (or the same "
          "rows), read-only sqlite3\n")
    residuals, surfaces, turns = (queries.LISTINGS[n] for n in ("residuals", "surfaces",
                                                                "turns"))

    def page(listing: Any, field: str, where: Any = None, first: int = 50,
             after: str | None = None) -> Callable[[], Any]:
        return lambda: run(listing.facet_page, field, where, first, after)

    tally = ("SELECT {c}, sum(residuals), sum(occurrences) FROM residual_tallies {w} "
             "GROUP BY {c} ORDER BY 2 DESC, 1 LIMIT 51")
    show("residuals facet(CODE) first 50", timed(repeat, page(residuals, "code")),
         floor(tally.format(c="residual_code", w="")))
    second = run(residuals.facet_page, "code", None, 20).end_cursor
    show("residuals facet(CODE) after 20", timed(repeat, page(residuals, "code", None, 20,
                                                               second)),
         floor(tally.format(c="residual_code", w="")))
    show("residuals facet(FAMILY_ID) (a null value)", timed(repeat, page(residuals,
                                                                         "family_id")),
         floor(tally.format(c="family_id", w="")))
    common = ResidualFilter(kind=[ResidualKind.MISSING_ROLE])
    show("residuals facet(CODE), kind missing_role", timed(repeat, page(residuals, "code",
                                                                         common)),
         floor(tally.format(c="residual_code", w="WHERE residual_kind = 'missing_role'")))
    nulls = ResidualFilter(family_id=[None])
    show("residuals(familyId: [null]) first 100", timed(repeat, lambda: run(
        queries.list_residuals, nulls, 100)), floor(
        "SELECT * FROM contract_residuals WHERE family_id IS NULL ORDER BY seq LIMIT 101"))
    family = raw.execute("SELECT family_id FROM contract_residuals WHERE family_id IS NOT NULL "
                         "LIMIT 1").fetchone()
    if family is not None:
        mixed = ResidualFilter(family_id=[None, family[0]])
        show("residuals(familyId: [null, a family]) first 100", timed(repeat, lambda: run(
            queries.list_residuals, mixed, 100)), floor(
            "SELECT * FROM contract_residuals WHERE family_id IS NULL OR family_id = ? "
            "ORDER BY seq LIMIT 101", (family[0],)))
    show("residuals(familyId: [null]) totalCount", timed(repeat, lambda: run(
        queries.count_residuals, nulls)), floor(
        "SELECT sum(residuals) FROM residual_tallies WHERE family_id IS NULL"))
    rows = "SELECT {c}, count(*) FROM {t} GROUP BY {c} ORDER BY 2 DESC, 1 LIMIT 51"
    if count("surface_records"):
        for field in ("chain_id", "subject"):
            show(f"surfaces facet({field.upper()}) first 50", timed(repeat, page(surfaces,
                                                                                 field)),
                 floor(rows.format(c=field, t="surface_records")))
    if count("turns"):
        show("turns facet(JOURNAL) first 50", timed(repeat, page(turns, "journal")),
             floor(rows.format(c="journal_id", t="turn_fields")))
        show("turns facet(CHAIN_ID) first 50", timed(repeat, page(turns, "chain_id")),
             floor("SELECT s.chain_id, count(*) FROM turns t JOIN surface_records s "
                   "ON s.surface_id = t.surface_id GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 51"))

    print()
    console = Console(db, cache_pages=0)
    app = create_app(db, close_db_on_shutdown=False, console=False)
    app.router.routes.extend(console.routes())
    client = TestClient(app, base_url="http://127.0.0.1")

    def get(url: str) -> Callable[[], Any]:
        def call() -> Any:
            answer = client.get(url)
            assert answer.status_code == 200, (url, answer.status_code)
            return answer
        return call

    get("/")()  # warm: imports, templates, the first connection
    show("console /residuals?facet=code", timed(repeat, get("/residuals?facet=code")),
         floor(tally.format(c="residual_code", w="")))
    show("console /residuals?isNull=familyId", timed(repeat, get(
        "/residuals?isNull=familyId")), floor(
        "SELECT * FROM contract_residuals WHERE family_id IS NULL ORDER BY seq LIMIT 51"))
    sorted_page = get("/residuals?order=CODE_ASC&first=100")
    show("console /residuals?order=CODE_ASC&first=100", timed(repeat, sorted_page), floor(
        "SELECT * FROM contract_residuals ORDER BY residual_code, seq LIMIT 101"))
    following = re.search(r'<a href="([^"]+)" rel="next"', sorted_page().text)
    if following is not None:  # a store of more than 100 residuals
        show("console ... its next page", timed(repeat, get(unescape(following.group(1)))),
             floor("SELECT * FROM contract_residuals ORDER BY residual_code, seq LIMIT 101 "
                   "OFFSET 100"))
    if count("turns"):
        show("console /turns?facet=journal", timed(repeat, get("/turns?facet=journal")),
             floor(rows.format(c="journal_id", t="turn_fields")))
        show("console /turns (every facet)", timed(repeat, get("/turns")), floor(
            "SELECT grounding_source, epistemic_state, normative_clearance, kind, "
            "trace_integrity, count(*) FROM turns GROUP BY 1, 2, 3, 4, 5"))
    db.close()


if __name__ == "__main__":
    main()
