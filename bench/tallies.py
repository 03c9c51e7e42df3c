"""Tally benchmark: how facets and filtered counts grow with the number of batches.

    .venv/bin/python bench/tallies.py [--batches 100000] [--combos 20] [--seed 0] [--no-index]

Facets and filtered `totalCount` sum `residual_tallies`, one row per batch and taxonomy
combination, so their cost follows batches x combinations, not residuals. Ingesting that
many batches through the writer would take hours, so this builds a scratch store (one real
batch of the ADR-0225 examples), then appends `--batches` x `--combos` synthetic tally rows
straight into a scratch copy's table (its triggers dropped: the copy is thrown away), and
times the query layer's `residual_facets` and `count_residuals` over them. Prints figures
only; it asserts nothing about time. `--no-index` drops the covering index on the tallies
first, to show what it is for.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from store.db import queries
from store.db.audit_store import AuditStore
from store.model.taxonomy import FAMILY_BY_ORGAN, LABEL_MAP

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "adr_0225_frames.jsonl"


def append_tallies(path: Path, batches: int, combos: int, seed: int, *, index: bool) -> None:
    rng = random.Random(seed)
    # As CORE's rows combine: a mapped label fixes kind and axis, an organ fixes its family.
    labels = [(code, kind.value, axis.value) for code, (kind, axis) in sorted(LABEL_MAP.items())]
    organs = [*sorted(FAMILY_BY_ORGAN.items()), *((f"organ_{i}", None) for i in range(26))]
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger'"
                " AND tbl_name = 'residual_tallies'").fetchall():
            connection.execute(f"DROP TRIGGER {name}")
        if not index:
            connection.execute("DROP INDEX ix_residual_tallies_combo")
        connection.execute("BEGIN")
        first = connection.execute("SELECT max(batch_id) FROM ingest_batches").fetchone()[0] + 1
        for batch in range(first, first + batches):
            connection.executemany(
                "INSERT INTO residual_tallies VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(batch, ordinal, kind, axis, organ, family, code, rng.randint(1, 5),
                  rng.randint(1, 20))
                 for ordinal, ((code, kind, axis), (organ, family)) in enumerate(
                     zip(rng.choices(labels, k=combos), rng.choices(organs, k=combos),
                         strict=True), start=1)])
        connection.execute("COMMIT")
    finally:
        connection.close()


def timed(database: AuditStore, call: object, *args: object, repeat: int = 5) -> float:
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        database.execute(call, *args)  # type: ignore[arg-type]
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=100_000,
                        help="synthetic batches of tally rows")
    parser.add_argument("--combos", type=int, default=20, help="tally rows per batch")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic tallies")
    parser.add_argument("--no-index", action="store_true",
                        help="drop the covering index on the tallies first")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="core-audit-tallies-") as tmp:
        path = Path(tmp) / "tallies.db"
        with AuditStore.open(str(path)) as store:
            store.ingest(EXAMPLES.read_bytes().splitlines(keepends=True), source=EXAMPLES.name)
        started = time.perf_counter()
        append_tallies(path, args.batches, args.combos, args.seed, index=not args.no_index)
        print(f"{args.batches * args.combos:,} tally rows ({args.batches:,} batches x"
              f" {args.combos}) appended in {time.perf_counter() - started:.1f} s"
              f"{'; covering index dropped' if args.no_index else ''}")
        database = AuditStore.open(str(path), read_only=True, time_limit=600)
        try:
            where = queries.ResidualFilter(organ=["organ_1"])  # one of 30 organs
            print(f"residualFacets, no filter:   {timed(database, queries.residual_facets):.3f} s"
                  " (median of 5)")
            print(f"residualFacets, one organ:   "
                  f"{timed(database, queries.residual_facets, where):.3f} s")
            print(f"totalCount, one organ:       "
                  f"{timed(database, queries.count_residuals, where):.3f} s")
        finally:
            database.close()


if __name__ == "__main__":
    main()
