"""Scale benchmark: ten times the data. Ingests gen_frames.py's 1M-occurrence input and its
10M-occurrence input in the same run and prints every figure of the larger store beside the
smaller one's, and each beside its floor where one exists.

    .venv/bin/python bench/scale.py [--frames 4000000] [--base-frames 400000]
        [--dir /tmp/scale] [--rounds 15] [--search "tom apples"] [--keep] [--no-floor]
        [--batches 1] [--ingest-only]

Builds two SQLite stores in `--dir` (default /tmp/scale; created if missing, and each store
must not exist there yet): base.db from `gen_frames.py --frames 400000 --seed 20261202`
(about 1M residual occurrences, about 1.3 GB) and large.db from `--frames 4000000` (about 10M
occurrences, about 13 GB, and as much again of WAL while the one batch is written: have 30 GB
free). At full size the run takes 30-60 minutes on a 2-core machine. Both stores are deleted
at the end unless `--keep`. Nothing is written elsewhere.

- ingest: the generator's output is streamed through a pipe into the command a user runs,
  `core-audit ingest --db STORE -` (stdin: one batch, one transaction), under `/usr/bin/time
  -v` in its own process: wall time, occurrences/s, peak RSS (the larger of the writer and
  the reader it forks) and CPU (user + sys) per occurrence. The generator runs beside it in
  the same way for both sizes; its CPU is not counted. Goals: the 10M rate >= 0.8x the 1M
  rate, peak RSS <= 250 MiB.
- size: bytes per occurrence, the store file's size after `PRAGMA wal_checkpoint(TRUNCATE)`
  / residual occurrences.
- queries, through the app a user serves (`create_app` with the console's routes, page cache
  off, in-process over Starlette's test client, the store opened read-only with a
  `--time-limit` of 60 s so a slow answer is timed rather than refused), p50 wall of
  `--rounds` rounds, the two stores interleaved in each round: a 100-row GraphQL page
  (ResidualsByTaxonomy, the most common kind, totalCount), a MOST_SEEN page of 100, a
  two-word full-text search (first 50, totalCount, snippets), the facets (FacetOverview, no
  filter), a console record page with its inclusion proof (`/residuals/ID`, a different
  record each round, spread over the log) and a full level-0 tile (`/log/tile/0/N`, 256
  leaves hashed, a random full tile each round). Floors, the same rounds: for each GraphQL
  operation the SQL statements it sent (captured in-process) run on a plain read-only
  sqlite3 connection plus `json.dumps` of the rows (bench/query.py's floor); for the record
  page, its row read by id; for the tile, its 256 rows read and hashed without HTTP. Goal:
  each 10M p50 <= 1.5x its 1M p50.
- verify: `core-audit verify --db STORE` with its default options, one child process each,
  wall and CPU (of the process and the children it reaped: verify's worker processes
  may not be counted); floor: `PRAGMA integrity_check` (`--no-floor` skips it: at 10M it reads the
  whole 12 GB again). Goal: 10M <= 11x 1M.

Figures are printed as each phase ends (flushed), with the load average: a run stopped early
has printed what it measured. It asserts nothing about time; it is not a CI test.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from floor_reads import floor_connection
from ingest import CORE_AUDIT, GENERATOR
from query import Operation, capture, floor_call
from starlette.testclient import TestClient

from store.api.app import create_app
from store.console.pages import Console
from store.db.audit_store import AuditStore
from store.db.log.stored_log import leaf_rows, log_entry
from store.db.queries.search_syntax import parse_search
from store.model.taxonomy import ResidualKind
from store.model.tiles.layout import Tile

ROOT = Path(__file__).resolve().parent.parent
WORKBENCH = ROOT / "graphql" / "workbench"
SIZES = ("1M", "10M")
MOST_SEEN = ("{ residuals(order: MOST_SEEN, first: 100) { totalCount nodes { residualId "
             "residualKind residualCode occurrenceCount } } }")
SEARCH = """query($search: String) { residuals(search: $search, first: 50) { totalCount
  edges { snippet node { residualId residualKind residualCode occurrenceCount } } } }"""
GOAL_RATIO = 1.5  # each query's 10M p50 over its 1M p50
GOAL_VERIFY = 11.0
GOAL_RATE = 0.8
GOAL_RSS = 250.0


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def say(text: str = "") -> None:
    print(text, flush=True)


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


# --- ingest -------------------------------------------------------------------------------


def _time_v(stderr: str, label: str) -> float:
    return float(re.search(rf"{re.escape(label)}: ([0-9.]+)", stderr).group(1))  # type: ignore[union-attr]


def ingest(generator: Path, frames: int, seed: int, db: Path) -> dict[str, float]:
    """gen_frames.py | /usr/bin/time -v core-audit ingest --db DB -; then a WAL checkpoint."""
    produce = subprocess.Popen([sys.executable, str(generator), "--frames", str(frames),
                                "--seed", str(seed)], stdout=subprocess.PIPE)
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", CORE_AUDIT, "ingest", "--db", str(db), "-"],
                          stdin=produce.stdout, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    assert produce.stdout is not None
    produce.stdout.close()
    if produce.wait() != 0 or done.returncode != 0:
        sys.exit(f"ingest of {frames} frames failed (generator {produce.returncode}, ingest "
                 f"{done.returncode}):\n{done.stdout}\n{done.stderr[-2000:]}")
    cpu, peak = _usage(done.stderr)
    return _stored(db, {"wall": wall, "cpu": cpu, "peak": peak, "frames": frames})


def _usage(stderr: str) -> tuple[float, float]:
    """(CPU seconds, peak RSS MiB) of one `/usr/bin/time -v` run."""
    return (_time_v(stderr, "User time (seconds)") + _time_v(stderr, "System time (seconds)"),
            _time_v(stderr, "Maximum resident set size (kbytes)") / 1024)


def _stored(db: Path, run: dict[str, float]) -> dict[str, float]:
    """`run` with the store's occurrences, leaves and bytes (after a WAL checkpoint)."""
    with sqlite3.connect(db) as connection:
        occurrences = connection.execute(
            "SELECT count(*) FROM residual_occurrences").fetchone()[0]
        leaves = connection.execute("SELECT max(tree_size) FROM tree_heads").fetchone()[0]
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db.stat().st_size + sum(p.stat().st_size for p in db.parent.glob(db.name + "-wal"))
    return {**run, "occurrences": occurrences, "leaves": leaves, "bytes": size}


def ingest_batches(generator: Path, frames: int, seed: int, db: Path,
                   batches: int) -> dict[str, float]:
    """The generator's output cut into `batches` batches of consecutive frames, each piped
    into its own `core-audit ingest --db DB -` (one transaction each, as a store grows from
    batch to batch), timed as `ingest` times one: wall and CPU summed, the largest peak RSS.
    A single batch's WAL holds every page it writes until COMMIT, and SQLite looks a page up
    in the WAL's hash tables newest first (sqlite3WalFindFrame): at 10M occurrences in one
    batch that lookup took a third of the writer's CPU (perf, docs/benchmarks.md)."""
    if batches <= 1:
        return ingest(generator, frames, seed, db)
    produce = subprocess.Popen([sys.executable, str(generator), "--frames", str(frames),
                                "--seed", str(seed)], stdout=subprocess.PIPE)
    assert produce.stdout is not None
    stream = produce.stdout
    wall = cpu = peak = 0.0
    for number in range(batches):
        lines = frames // batches + (1 if number < frames % batches else 0)
        started = time.perf_counter()
        writer = subprocess.Popen(
            ["/usr/bin/time", "-v", CORE_AUDIT, "ingest", "--db", str(db), "-"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=False)
        assert writer.stdin is not None
        for _ in range(lines):
            writer.stdin.write(stream.readline())
        out, err = writer.communicate()  # closes its stdin: the batch's end
        wall += time.perf_counter() - started
        if writer.returncode != 0:
            sys.exit(f"batch {number + 1} of {batches} failed:\n{out.decode()}\n"
                     f"{err.decode()[-2000:]}")
        used, most = _usage(err.decode())
        cpu, peak = cpu + used, max(peak, most)
        with sqlite3.connect(db) as connection:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # as a server's would
        say(f"  batch {number + 1}/{batches}: {lines:,} frames, {wall:.1f} s so far, "
            f"its CPU {used:.1f} s, its peak RSS {most:.0f} MiB (load {load()})")
    if stream.read(1) or produce.wait() != 0:
        sys.exit("the generator wrote more frames than asked for, or failed")
    return _stored(db, {"wall": wall, "cpu": cpu, "peak": peak, "frames": frames})


def report_ingest(runs: dict[str, dict[str, float]]) -> None:
    say(f"\ningest: generator | core-audit ingest --db STORE -   (load {load()})")
    say(f"{'store':5} {'frames':>9} {'occurrences':>12} {'leaves':>12} {'wall s':>8} "
        f"{'occ/s':>8} {'CPU us/occ':>10} {'peak MiB':>9} {'GiB':>6} {'bytes/occ':>9}")
    for name, run in runs.items():
        say(f"{name:5} {run['frames']:9,.0f} {run['occurrences']:12,.0f} {run['leaves']:12,.0f} "
            f"{run['wall']:8.1f} {run['occurrences'] / run['wall']:8,.0f} "
            f"{1e6 * run['cpu'] / run['occurrences']:10.1f} {run['peak']:9.0f} "
            f"{run['bytes'] / 2**30:6.2f} {run['bytes'] / run['occurrences']:9,.0f}")
    if len(runs) == 2:
        base, large = runs["1M"], runs["10M"]
        rate = (large["occurrences"] / large["wall"]) / (base["occurrences"] / base["wall"])
        per_occ = (large["bytes"] / large["occurrences"]) / (base["bytes"] / base["occurrences"])
        say(f"10M/1M: rate {rate:.2f}x (goal >= {GOAL_RATE}x: {met(rate >= GOAL_RATE)}); "
            f"peak RSS {large['peak']:.0f} MiB (goal <= {GOAL_RSS:.0f}: "
            f"{met(large['peak'] <= GOAL_RSS)}); bytes per occurrence {per_occ:.2f}x")


# --- queries ------------------------------------------------------------------------------


class Subject:
    """One store as a user reaches it: the app, its calls, their floors."""

    def __init__(self, name: str, db: Path, time_limit: float, search: str,
                 chooser: random.Random) -> None:
        self.name = name
        self.store = AuditStore.open(str(db), read_only=True, time_limit=time_limit)
        app = create_app(self.store, close_db_on_shutdown=False, console=False)
        app.router.routes.extend(Console(self.store, cache_pages=0).routes())
        self.client = TestClient(app, base_url="http://127.0.0.1")
        self.raw = floor_connection(db, check_same_thread=False)
        self.rows = self.store.engine.connect()
        self.chooser = chooser
        self.refused: dict[str, int] = {}
        kind = self.raw.execute("SELECT residual_kind FROM contract_residuals GROUP BY 1 "
                                "ORDER BY count(*) DESC, 1 LIMIT 1").fetchone()[0]
        self.kind = ResidualKind(kind).name
        self.leaves = self.store.tree_head().size
        self.residuals = self.raw.execute("SELECT max(rowid) FROM contract_residuals"
                                          ).fetchone()[0]
        self.operations = {
            "100-row page": Operation(
                "page", f"ResidualsByTaxonomy, kind {self.kind}, first 100",
                (WORKBENCH / "ResidualsByTaxonomy.graphql").read_text(),
                {"kind": [self.kind], "first": 100}),
            "MOST_SEEN page": Operation("most_seen", "residuals(order: MOST_SEEN, first: 100)",
                                        MOST_SEEN, {}),
            "search": Operation("search", f"residuals(search: {search!r}, first: 50)", SEARCH,
                                {"search": search}),
            "facets": Operation("facets", "FacetOverview, no filter",
                                (WORKBENCH / "FacetOverview.graphql").read_text(), {}),
        }
        self.floors: dict[str, Callable[[], object]] = {}
        for label, operation in self.operations.items():
            capture(self.store, operation)
            self.floors[label] = floor_call(f"sqlite:///{db}", operation)

    def graphql(self, label: str) -> Callable[[], object]:
        operation = self.operations[label]

        def call() -> object:
            answer = self.client.post("/graphql", json={"query": operation.document,
                                                        "variables": operation.variables})
            if answer.status_code != 200 or "errors" in answer.json():
                self.refused[label] = self.refused.get(label, 0) + 1
            return answer
        return call

    def get(self, label: str, url: str) -> object:
        answer = self.client.get(url)
        if answer.status_code != 200:
            self.refused[label] = self.refused.get(label, 0) + 1
        return answer

    def record(self) -> tuple[Callable[[], object], Callable[[], object]]:
        """A record page (with its proof) of a record picked at random, and its floor."""
        key = self.raw.execute("SELECT residual_id FROM contract_residuals WHERE rowid >= ? "
                               "LIMIT 1", (self.chooser.randint(1, self.residuals),)
                               ).fetchone()[0]
        return (lambda: self.get("record page + proof", f"/residuals/{key}"),
                lambda: self.raw.execute("SELECT * FROM contract_residuals WHERE "
                                         "residual_id = ?", (key,)).fetchall())

    def tile(self) -> tuple[Callable[[], object], Callable[[], object]]:
        """A full level-0 tile at random, and its floor: its 256 rows read and hashed."""
        index = self.chooser.randrange(self.leaves // 256)

        def floor() -> object:
            return [hashlib.sha256(b"\x00" + log_entry(table, row)).digest()
                    for _, table, row in leaf_rows(self.rows, index * 256, index * 256 + 256)]
        return (lambda: self.get("level-0 tile", "/log/" + Tile(0, index).path()), floor)

    def close(self) -> None:
        self.client.close()
        self.rows.close()
        self.raw.close()
        self.store.close()


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def queries(paths: dict[str, Path], rounds: int, time_limit: float, search: str,
            seed: int) -> None:
    chooser = random.Random(seed)
    subjects = {name: Subject(name, path, time_limit, search, chooser)
                for name, path in paths.items()}
    labels = [*subjects["1M"].operations, "record page + proof", "level-0 tile"]
    for subject in subjects.values():
        say(f"{subject.name}: {subject.leaves:,} leaves, {subject.residuals:,} residuals; "
            f"page kind {subject.kind}; search {search!r} -> {parse_search(search).fts5()}")
        for label, operation in subject.operations.items():
            say(f"  {label:16} {operation.what}: {len(operation.statements)} SQL statements")
    walls: dict[tuple[str, str, str], list[float]] = {}

    def add(key: tuple[str, str, str], call: Callable[[], object]) -> None:
        walls.setdefault(key, []).append(timed(call))

    for subject in subjects.values():  # warm: imports, templates, connections, statements
        for label in subject.operations:
            subject.graphql(label)()
            subject.floors[label]()
        for pair in (subject.record(), subject.tile()):
            pair[0]()
        subject.refused.clear()
    say(f"timing {rounds} rounds, the stores interleaved   (load {load()})")
    for _ in range(rounds):
        for label in subjects["1M"].operations:
            for name, subject in subjects.items():
                add((label, name, "app"), subject.graphql(label))
                add((label, name, "floor"), subject.floors[label])
        for label, make in (("record page + proof", Subject.record),
                            ("level-0 tile", Subject.tile)):
            for name, subject in subjects.items():
                call, floor = make(subject)
                add((label, name, "app"), call)
                add((label, name, "floor"), floor)
    say(f"\nqueries: p50 wall ms of {rounds} rounds   (load {load()})")
    say(f"{'':22} {'1M':>9} {'floor':>8} {'10M':>9} {'floor':>8} {'10M/1M':>7}  "
        f"goal <= {GOAL_RATIO}x")
    for label in labels:
        p50 = {key[1:]: statistics.median(v) for key, v in walls.items() if key[0] == label}
        ratio = p50["10M", "app"] / p50["1M", "app"]
        say(f"{label:22} {p50['1M', 'app']:9.2f} {p50['1M', 'floor']:8.2f} "
            f"{p50['10M', 'app']:9.2f} {p50['10M', 'floor']:8.2f} {ratio:6.2f}x  "
            f"{met(ratio <= GOAL_RATIO)}")
    say("(floor: the GraphQL operation's own SQL on a plain read-only sqlite3 connection + "
        "json.dumps; for the record page its row by id; for the tile its 256 rows read and "
        "hashed, no HTTP)")
    for subject in subjects.values():
        for label, count in subject.refused.items():
            say(f"  {subject.name} {label}: {count} answers were errors (time limit "
                f"{time_limit:g} s?)")
        subject.close()


# --- verify -------------------------------------------------------------------------------


_FLOOR = """
import sqlite3, sys
connection = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
"""


def child(command: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + sys, its children with it) of one child process."""
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = os.times()
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return wall, cpu


def verify(paths: dict[str, Path], floor: bool) -> None:
    figures: dict[tuple[str, str], tuple[float, float]] = {}
    for name, path in paths.items():
        figures[name, "verify"] = child([CORE_AUDIT, "verify", "--db", str(path)])
        say(f"  verify {name}: {figures[name, 'verify'][0]:.1f} s (load {load()})")
        if floor:
            figures[name, "floor"] = child([sys.executable, "-c", _FLOOR, str(path)])
            say(f"  integrity_check {name}: {figures[name, 'floor'][0]:.1f} s (load {load()})")
    say(f"\nverify: core-audit verify --db STORE (default options)   (load {load()})")
    for name in paths:
        wall, cpu = figures[name, "verify"]
        line = f"{name:5} verify {wall:8.1f} s  CPU {cpu:8.1f} s"
        if floor:
            floor_wall, floor_cpu = figures[name, "floor"]
            line += (f"   integrity_check {floor_wall:7.1f} s  CPU {floor_cpu:7.1f} s   "
                     f"{wall / floor_wall:5.2f}x")
        say(line)
    ratio = figures["10M", "verify"][0] / figures["1M", "verify"][0]
    say(f"10M/1M: {ratio:.2f}x (goal <= {GOAL_VERIFY:g}x: {met(ratio <= GOAL_VERIFY)})")


# --- main ---------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--generator", type=Path, default=GENERATOR,
                        help="gen_frames.py, the independent generator (default: %(default)s)")
    parser.add_argument("--frames", type=int, default=4_000_000,
                        help="generator frames of the large store (default: %(default)s, "
                             "about 10M occurrences)")
    parser.add_argument("--base-frames", type=int, default=400_000,
                        help="generator frames of the base store (default: %(default)s, "
                             "about 1M occurrences)")
    parser.add_argument("--seed", type=int, default=20261202, help="the generator's --seed")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/scale"),
                        help="where the two stores are written (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=15,
                        help="timed rounds of each query (the p50 is printed)")
    parser.add_argument("--search", default="tom apples", help="the two-word search timed")
    parser.add_argument("--time-limit", type=float, default=60.0,
                        help="the stores' per-request time limit in seconds while timed")
    parser.add_argument("--no-floor", action="store_true",
                        help="skip verify's floor (PRAGMA integrity_check on each store)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the two stores (default: deleted at the end)")
    parser.add_argument("--batches", type=int, default=1,
                        help="ingest the large store's frames as this many consecutive "
                             "batches, each its own transaction (default: one batch)")
    parser.add_argument("--ingest-only", action="store_true",
                        help="stop after the ingest figures (no queries, no verify)")
    args = parser.parse_args()
    if not args.generator.is_file():
        parser.error(f"no generator at {args.generator}")
    args.dir.mkdir(parents=True, exist_ok=True)
    paths = {"1M": args.dir / "base.db", "10M": args.dir / "large.db"}
    for path in paths.values():
        if path.exists():
            parser.error(f"{path} exists; the benchmark builds fresh stores (delete it)")
    say(f"scale benchmark, {os.cpu_count()} CPUs, load {load()}; stores in {args.dir}")
    try:
        runs: dict[str, dict[str, float]] = {}
        for name, frames in (("1M", args.base_frames), ("10M", args.frames)):
            batches = args.batches if name == "10M" else 1
            say(f"ingesting {frames:,} frames into {paths[name]}"
                f"{f' as {batches} batches' if batches > 1 else ''} ...")
            runs[name] = ingest_batches(args.generator, frames, args.seed, paths[name],
                                        batches)
            report_ingest({name: runs[name]})
        report_ingest(runs)
        if not args.ingest_only:
            queries(paths, args.rounds, args.time_limit, args.search, args.seed)
            verify(paths, not args.no_floor)
    finally:
        if not args.keep:
            for path in paths.values():
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
    say(f"load at the end: {load()}")


if __name__ == "__main__":
    main()
