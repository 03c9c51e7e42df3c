"""Ingest benchmark: residual occurrences per second, peak RSS, and the ratio to raw SQLite.

    .venv/bin/python bench/ingest.py [--occurrences 1000000] [--seed 0] [--db URL]
        [--generator ../shared/bench/gen_frames.py --frames 400000 [--compare DIR] [--rounds 1]]
        [--input FILE] [--no-storage-floor] [--only generator|frames]

Two inputs, one after the other (`--only` picks one). First, when the independent generator
of CORE-shaped frames is found (`--generator`; the ingest goals are judged on it), its output
(`--frames N --seed 20261202`) is ingested by the command a user runs, `core-audit ingest --db
FRESH FILE`, in a child process: wall time, occurrences/s, peak RSS of the larger process and
CPU (user+sys of both processes) per occurrence; `--compare DIR` runs the same command from
another source tree (PYTHONPATH=DIR, e.g. `git archive` of an earlier commit) in the same
rounds, interleaved, for a before/after, and the floor is `cat FILE > /dev/null` plus the
generator's file parsed by orjson alone (the least any ingest must do). Each round also
measures the storage floor of the store this tree wrote (bench/storage_floor.py: its rows
re-inserted by executemany into an empty copy of its schema without triggers, with the
writer's pragmas, in one transaction, plus one sha256 per leaf) and prints every ingest's
wall and CPU time as a multiple of it. `--postgres URL` runs the same command into a fresh
schema of that server in each round and, when the server runs on this machine, prints its
own processes' CPU over the run beside core-audit's: the two share the machine's cores.
`--input FILE` ingests that file instead of the generator's output. Then:

Generates frames (bench/frames.py) into a temporary JSONL file, ingests it (read and hashed
in a second process, as every file of 4 MiB or more is) into a fresh
store through the AuditStore API (one file = one batch = one transaction), then — in the
same run — inserts the same residual occurrence rows with a raw sqlite3 `executemany` in
one transaction into a plain table with the same columns, and prints both rates. It also
times the writer's per-line Python work alone (parse, project, content ids, row hashes and
the chain; no SQL): the rate the store could reach if the database cost nothing. Prints
figures only; it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import pstats
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson
from frames import write_frames
from storage_floor import storage_floor

from store.db.audit_store import AuditStore
from store.db.log.stored_log import log_entry
from store.db.schema.engine import resolve_url, sqlite_path
from store.db.write.row_builders import RecordReader
from store.model.jsonl import iter_json_lines
from store.model.merkle import CompactRange, leaf_hash
from store.model.teaching_surface import default_registry


def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux: KiB


def io_counts() -> dict[str, int]:
    """This process's read/write syscalls and bytes so far (Linux /proc; empty elsewhere):
    how much of the page cache spilled and was read back, whatever the machine's speed."""
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        return {}
    return {name: int(value) for name, value in
            (line.split(": ") for line in text.splitlines())}


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def raw_executemany(rows: list[tuple], directory: Path) -> float:
    """Seconds to insert `rows` into a plain table, one transaction, same durability."""
    path = directory / "raw.db"
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute(
        "CREATE TABLE residual_occurrences (assessment_id VARCHAR(64), ordinal INTEGER,"
        " residual_id VARCHAR(64), seq INTEGER, batch_id INTEGER)")
    started = time.perf_counter()
    connection.execute("BEGIN")
    connection.executemany("INSERT INTO residual_occurrences VALUES (?, ?, ?, ?, ?)", rows)
    connection.execute("COMMIT")
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed


def python_only(source: Path) -> float:
    """Seconds for the writer's per-line work without a database: parse, project, ids, leaves."""
    tree = CompactRange()
    reader = RecordReader(default_registry)
    started = time.perf_counter()
    with source.open("rb") as stream:
        for line in iter_json_lines(stream):
            _, rows = reader.rows(line)
            for pending in rows:
                tree.append(leaf_hash(log_entry(pending.table, pending.row)))
    return time.perf_counter() - started


# ../shared/bench/gen_frames.py beside the checkout (or beside the folder of worktrees)
GENERATOR = next((p for p in (Path(__file__).resolve().parents[n] / "shared/bench/gen_frames.py"
                              for n in (2, 3)) if p.is_file()),
                 Path(__file__).resolve().parents[2] / "shared/bench/gen_frames.py")
CORE_AUDIT = str(Path(sys.executable).parent / "core-audit")


def _child_usage() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _ingest_command(source: Path, db: Path, pythonpath: str | None,
                    url: str | None = None) -> dict[str, float]:
    """`core-audit ingest` in a fresh child (its forked reader is reaped inside it, so the
    child's CPU includes both processes); peak RSS is the larger process's (VmHWM)."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    argv = [sys.executable, "-c", _REPORT_PEAK + "from store.cli import main; main()",
            "ingest", "--db", url or str(db), str(source)]
    peaks = db.with_suffix(".peaks")
    env["BENCH_PEAK_FILE"] = str(peaks)
    cpu_before, _ = _child_usage()
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    cpu = _child_usage()[0] - cpu_before
    peak = max(int(v) for v in peaks.read_text().split()) / 1024
    if url is None:
        with sqlite3.connect(db) as connection:
            occurrences = connection.execute(
                "SELECT count(*) FROM residual_occurrences").fetchone()[0]
    else:
        with AuditStore.open(url, read_only=True) as store, store.engine.connect() as connection:
            occurrences = connection.exec_driver_sql(
                "SELECT count(*) FROM residual_occurrences").scalar_one()
    return {"wall": wall, "cpu": cpu, "peak": peak, "occurrences": occurrences}


# Run first in the child: at exit, each process (the writer and its forked reader) appends its
# own peak RSS (kB) to the file the bench reads.
_REPORT_PEAK = """
import atexit, os
def _report_peak():
    with open("/proc/self/status") as status:
        peak = next(line for line in status if line.startswith("VmHWM:")).split()[1]
    with open(os.environ["BENCH_PEAK_FILE"], "a") as out:
        out.write(peak + " ")
atexit.register(_report_peak)
import multiprocessing.process, os as _os
_run = multiprocessing.process.BaseProcess._bootstrap
def _bootstrap(self, *args, **kwargs):  # a forked reader leaves by os._exit: report first
    try:
        return _run(self, *args, **kwargs)
    finally:
        _report_peak()
multiprocessing.process.BaseProcess._bootstrap = _bootstrap
"""


def _stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat's fields from the third on (state, ppid, ...: utime is [11], cutime
    [13]). Field 2, the command, may hold spaces: split after its closing parenthesis."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def _server_cpu(postmaster: int | None) -> float | None:
    """CPU seconds (user + system) of a local PostgreSQL server: the postmaster's own, its
    exited backends' (reaped by it) and its live processes'. None where /proc does not show
    them (a server on another machine, or another PID namespace)."""
    if postmaster is None:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        own = _stat_fields(postmaster)
        total = sum(int(v) for v in own[11:15])
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != postmaster:
                with contextlib.suppress(OSError, IndexError):
                    child = _stat_fields(int(entry.name))
                    if int(child[1]) == postmaster:
                        total += int(child[11]) + int(child[12])
    except OSError:
        return None
    return total / ticks


def _postgres_run(source: Path, directory: Path, server: str) -> dict[str, float]:
    """The same command into a fresh schema of the server (dropped afterwards), with the
    server's CPU over it when the server runs on this machine."""
    from sqlalchemy import create_engine, make_url, text

    schema = f"bench_ingest_{os.getpid()}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        backend = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
    postmaster = None
    with contextlib.suppress(OSError, IndexError, ValueError):
        postmaster = int(_stat_fields(backend)[1])
    try:
        url = make_url(server).update_query_dict({"options": f"-csearch_path={schema}"})
        before = _server_cpu(postmaster)
        run = _ingest_command(source, directory / "pg.db", None,
                              url.render_as_string(hide_password=False))
        after = _server_cpu(postmaster)
        if before is not None and after is not None:
            run["server_cpu"] = after - before
        return run
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def generator_runs(args: argparse.Namespace) -> None:
    """The ingest goals' input, through the user's command, beside a floor, A/B interleaved."""
    with tempfile.TemporaryDirectory(prefix="core-audit-bench-") as tmp:
        directory = Path(tmp)
        source = args.input or directory / "frames.jsonl"
        if args.input is None:
            with source.open("wb") as out:
                subprocess.run([sys.executable, str(args.generator), "--frames",
                                str(args.frames), "--seed", str(args.generator_seed)],
                               stdout=out, check=True)
        size = source.stat().st_size / 2**20
        trees = {"this tree": None}
        if args.compare:
            trees["compare"] = str(args.compare.resolve())
        results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        if args.postgres:
            results["PostgreSQL"] = []
        floors, storage = [], []
        for round_ in range(args.rounds):
            started = time.perf_counter()
            with source.open("rb") as stream:
                for line in stream:
                    orjson.loads(line)
            floors.append(time.perf_counter() - started)
            for name, pythonpath in trees.items():
                db = directory / f"store-{round_}-{name.replace(' ', '-')}.db"
                results[name].append(_ingest_command(source, db, pythonpath))
                if name == "this tree" and not args.no_storage_floor:
                    storage.append(storage_floor(db, directory))
                for leftover in [*directory.glob(db.name + "*"), *directory.glob("floor.db*")]:
                    leftover.unlink()
            if args.postgres:
                results["PostgreSQL"].append(_postgres_run(source, directory, args.postgres))
        occurrences = results["this tree"][0]["occurrences"]
        print(f"generator input: {args.input or f'{args.frames} frames'}"
              f" (seed {args.generator_seed}), "
              f"{occurrences:,} residual occurrences, {size:.0f} MiB; load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"command: core-audit ingest --db FRESH.db FILE   ({args.rounds} round(s), "
              "interleaved)")
        # The storage floor of each round, measured just after that round's ingest.
        wall_floor = min((f.seconds for f in storage), default=0.0)
        cpu_floor = min((f.cpu_seconds for f in storage), default=0.0)
        print(f"{'tree':10} {'wall s':>8} {'occ/s':>9} {'CPU s':>7} {'CPU us/occ':>10} "
              f"{'peak RSS MiB':>12}" + ("  x floor (wall, CPU)" if storage else ""))
        for name, runs in results.items():
            for run in runs:
                print(f"{name:10} {run['wall']:8.1f} {run['occurrences'] / run['wall']:9,.0f} "
                      f"{run['cpu']:7.1f} {1e6 * run['cpu'] / run['occurrences']:10.1f} "
                      f"{run['peak']:12.0f}" + (f"  {run['wall'] / wall_floor:5.2f}x"
                                                f" {run['cpu'] / cpu_floor:5.2f}x"
                                                if storage else ""))
        for run in results.get("PostgreSQL", []):
            if "server_cpu" in run:
                both = run["cpu"] + run["server_cpu"]
                print(f"{'':10} PostgreSQL's own processes: {run['server_cpu']:.1f} s CPU; with"
                      f" core-audit's, {both:.1f} s: on {os.cpu_count()} cores no less than"
                      f" {both / (os.cpu_count() or 1):.1f} s wall")
        for f in storage:
            print(f"{'storage':10} {f.seconds:8.1f} {occurrences / f.seconds:9,.0f} "
                  f"{f.cpu_seconds:7.1f}   (the store's {f.rows:,} rows re-inserted by"
                  f" executemany into an empty copy of its schema, no triggers, one transaction:"
                  f" {f.insert_seconds:.1f} s; one sha256 per leaf, {f.leaves:,}:"
                  f" {f.hash_seconds:.1f} s; bench/storage_floor.py)")
        floor = min(floors)
        print(f"{'floor':10} {floor:8.1f} {occurrences / floor:9,.0f}   (every line parsed by "
              "orjson, nothing else)")
        print("goals at 1M: >= 15,000 occ/s, <= 200 MiB, <= 70 us CPU per occurrence")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--generator", type=Path, default=GENERATOR,
                        help="gen_frames.py, the independent generator (default: %(default)s)")
    parser.add_argument("--frames", type=int, default=400_000, help="generator frames")
    parser.add_argument("--input", type=Path,
                        help="ingest this JSONL file instead of the generator's output")
    parser.add_argument("--no-storage-floor", action="store_true",
                        help="skip the storage floor (bench/storage_floor.py) of each round")
    parser.add_argument("--generator-seed", type=int, default=20261202,
                        help="the generator's --seed")
    parser.add_argument("--compare", type=Path, help="another source tree, timed beside this one")
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds (each ingests every input once, into a fresh store)")
    parser.add_argument("--only", choices=("generator", "frames"),
                        help="ingest only the generator's output or only bench/frames.py's")
    parser.add_argument("--postgres", metavar="URL",
                        help="also ingest the generator's frames into a fresh schema of this "
                             "PostgreSQL server, in the same rounds")
    parser.add_argument("--occurrences", type=int, default=1_000_000,
                        help="residual occurrences of bench/frames.py's input")
    parser.add_argument("--seed", type=int, default=0, help="seed of bench/frames.py's input")
    parser.add_argument("--db", help="store URL or path (default: a fresh file in a temp dir)")
    parser.add_argument("--profile", type=int, metavar="N", default=0,
                        help="also print the N hottest functions of the ingest (cProfile)")
    args = parser.parse_args()
    if args.only != "frames":
        if args.input is not None or args.generator.is_file():
            generator_runs(args)
        else:
            print(f"no generator at {args.generator}: its runs skipped")
    if args.only == "generator":
        return

    with tempfile.TemporaryDirectory(prefix="core-audit-bench-") as tmp:
        directory = Path(tmp)
        db = args.db or str(directory / "bench.db")
        existing = sqlite_path(resolve_url(db))
        if existing is not None and existing.exists():
            parser.error(f"{existing} exists; the benchmark needs a fresh store")
        source = directory / "frames.jsonl"
        frames, occurrences = write_frames(source, args.occurrences, args.seed)
        print(f"input: {frames} frames, {occurrences} residual occurrences, "
              f"{source.stat().st_size / 2**20:.1f} MiB (seed {args.seed})")

        with AuditStore.open(db) as store:
            profiler = cProfile.Profile() if args.profile else None
            cpu_before = cpu_seconds(resource.RUSAGE_SELF), cpu_seconds(resource.RUSAGE_CHILDREN)
            io_before = io_counts()
            started = time.perf_counter()
            with source.open("rb") as stream:
                if profiler:
                    profiler.enable()
                summary = store.ingest(stream, source=source.name)
                if profiler:
                    profiler.disable()
            ingest_seconds = time.perf_counter() - started
            io_after = io_counts()
            writer_cpu = cpu_seconds(resource.RUSAGE_SELF) - cpu_before[0]
            reader_cpu = cpu_seconds(resource.RUSAGE_CHILDREN) - cpu_before[1]
            ingest_rss = peak_rss_mib()  # before the baseline's rows are loaded
            reader_rss = peak_rss_mib(resource.RUSAGE_CHILDREN)
            with store.engine.connect() as connection:
                rows = [tuple(r) for r in connection.exec_driver_sql(
                    "SELECT assessment_id, ordinal, residual_id, seq, batch_id"
                    " FROM residual_occurrences ORDER BY seq")]
        raw_seconds = raw_executemany(rows, directory)
        python_seconds = python_only(source)

        tables = summary.tables
        store_rate = occurrences / ingest_seconds
        raw_rate = len(rows) / raw_seconds
        print("rows: " + ", ".join(f"{t} {c.new} new/{c.present} present"
                                    for t, c in tables.items()))
        print(f"store ingest: {ingest_seconds:.2f} s, {store_rate:,.0f} residual occurrences/s"
              f" ({tables['residual_occurrences'].new / ingest_seconds:,.0f} new rows/s)")
        print(f"raw sqlite3 executemany of the {len(rows)} occurrence rows: {raw_seconds:.2f} s,"
              f" {raw_rate:,.0f} rows/s")
        print(f"ratio store/raw: {store_rate / raw_rate:.4f}"
              f" (raw is {raw_rate / store_rate:,.1f}x faster)")
        python_rate = occurrences / python_seconds
        print(f"the writer's Python work alone (no SQL): {python_seconds:.2f} s,"
              f" {python_rate:,.0f} residual occurrences/s = ratio {python_rate / raw_rate:.4f}"
              f" to raw: the ceiling for any database")
        print(f"CPU: writer process {writer_cpu:.1f} s, input-reading process {reader_cpu:.1f} s"
              f" (wall {ingest_seconds:.1f} s; on a busy machine wall > the larger CPU figure)")
        print(f"peak RSS during the ingest: writer process {ingest_rss:.0f} MiB, input-reading"
              f" process {reader_rss:.0f} MiB (forked: pages they share count in both)")
        if io_after:
            io = {name: io_after[name] - io_before[name] for name in io_after}
            print(f"writer I/O during the ingest: {io['syscr']:,} reads"
                  f" ({io['rchar'] / 2**20:,.0f} MiB, the input's pipe included),"
                  f" {io['syscw']:,} writes ({io['wchar'] / 2**20:,.0f} MiB)")
        if profiler:
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
