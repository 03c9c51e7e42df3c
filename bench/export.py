"""Export benchmark: `core-audit export` rows/s and peak RSS, against a floor in the same run.

    .venv/bin/python bench/export.py [--db /tmp/core-audit-bench-1m.db] [--occurrences 1000000]
                                     [--seed 0] [--kinds occurrences,residuals,assessments]

Uses the store `--db` names if it holds residuals (the 1M store of bench/query.py can be
shared: build it once); otherwise generates frames (bench/frames.py) and ingests them.

For each kind and format it runs `core-audit export KIND --format F --out FILE` in a child
process, which reports its own peak RSS (VmHWM, read at exit: wait4's ru_maxrss would
include the memory this parent had when it forked). The floor, in the same run and
also in a child: the same rows read with a plain `sqlite3` cursor (`mode=ro`) and written
with the standard `csv` module or `orjson`, with nothing else imported. The same command on
an empty store gives its RSS with no rows (a `--filter` adds strawberry's, hence the
selective filter's line): memory is flat when the full exports peak about the same. Prints
figures only; it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from query import build_store, stored_residuals

from store.db.audit_store import AuditStore
from store.db.queries.exports import EXPORT_KINDS
from store.db.schema.engine import resolve_url, sqlite_path

ROOT = Path(__file__).resolve().parent.parent
# Run first in each child: at exit, write its own peak RSS (kB) where the bench reads it.
_REPORT_PEAK = """
import atexit, os
def _report_peak():
    with open("/proc/self/status") as status:
        peak = next(line for line in status if line.startswith("VmHWM:")).split()[1]
    with open(os.environ["BENCH_PEAK_FILE"], "w") as out:
        out.write(peak)
atexit.register(_report_peak)
"""
CORE_AUDIT = [sys.executable, "-c", _REPORT_PEAK + "from store.cli import main; main()"]

# The floor: stdlib only, one cursor, rows written as they come.
_FLOOR = """
import csv, sqlite3, sys
import orjson
path, table, columns, fmt, out = sys.argv[1:]
columns = columns.split(",")
connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
rows = connection.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY seq")
with open(out, "w" if fmt == "csv" else "wb", **({"newline": ""} if fmt == "csv" else {})) as f:
    if fmt == "csv":
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerows(rows)
    else:
        for row in rows:
            f.write(orjson.dumps(dict(zip(columns, row))) + b"\\n")
"""


@dataclass
class Run:
    seconds: float
    peak_rss_mib: float
    lines: int
    cpu: float = 0.0  # user+sys: less sensitive than wall time to what else the machine runs


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_child(argv: list[str], out: Path) -> Run:
    """Wall time and the child's own peak RSS, and the lines it wrote to `out`."""
    peak_file = out.with_name("peak")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCH_PEAK_FILE": str(peak_file)}
    cpu, started = _children_cpu(), time.perf_counter()
    child = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu
    if child.returncode != 0:
        raise SystemExit(f"{argv}: exit {child.returncode}: {child.stderr.decode()}")
    with out.open("rb") as f:
        lines = sum(1 for _ in f)
    return Run(seconds, int(peak_file.read_text()) / 1024, lines, cpu)


def sqlite_cli(path: Path, table: str, columns: list[str], fmt: str, out: Path) -> Run | None:
    """The sqlite3 command-line shell's own -csv or -json output of the same rows (None when
    it is not installed): the floor the export goal is set against."""
    binary = shutil.which("sqlite3")
    if binary is None:
        return None
    mode = ["-csv", "-header"] if fmt == "csv" else ["-json"]
    cpu, started = _children_cpu(), time.perf_counter()
    with out.open("wb") as stream:
        subprocess.run([binary, "-readonly", *mode, str(path),
                        f"SELECT {', '.join(columns)} FROM {table} ORDER BY seq"],
                       stdout=stream, check=True)
    seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu
    with out.open("rb") as f:
        lines = sum(1 for _ in f)
    return Run(seconds, 0.0, lines, cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default=None, help="store path (SQLite; default: a temp file)")
    parser.add_argument("--occurrences", type=int, default=1_000_000,
                        help="residual occurrences to generate if the store must be built")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated frames")
    parser.add_argument("--kinds", default="occurrences,residuals,assessments",
                        help="comma-separated record kinds to export")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="core-audit-ebench-") as tmp:
        directory = Path(tmp)
        db = args.db or str(directory / "bench.db")
        path = sqlite_path(resolve_url(db))
        if path is None:
            parser.error("the floor reads SQLite: --db must be a SQLite file")
        if not stored_residuals(db):
            build_store(db, args.occurrences, args.seed)
        print(f"store: {path} ({path.stat().st_size / 2**30:.2f} GiB)")
        print(f"{'kind':<12} {'format':<6} {'what':<28} {'rows':>9} {'s':>7} {'rows/s':>9}"
              f" {'CPU s':>6} {'peak RSS MiB':>12} {'x floor':>8}")
        out = directory / "out"
        empty = directory / "empty.db"
        AuditStore.open(str(empty)).close()
        selective = ("--filter", '{"organ": ["temporal_tariff"], '
                                 '"code": ["tariff_period_unbound"]}')
        for label, store, options in (("empty store", empty, ()),
                                      ("selective --filter", path, selective)):
            small = timed_child([*CORE_AUDIT, "export", "residuals", "--db", str(store),
                                 "--format", "csv", *options, "--out", str(out)], out)
            print(f"{'residuals':<12} {'csv':<6} {label:<28} {small.lines - 1:>9,}"
                  f" {small.seconds:>7.2f} {'':>9} {small.cpu:>6.2f} {small.peak_rss_mib:>12.0f}")
        for kind in args.kinds.split(","):
            spec = EXPORT_KINDS[kind]
            for fmt in ("csv", "jsonl"):
                header = 1 if fmt == "csv" else 0
                floor = timed_child([sys.executable, "-c", _REPORT_PEAK + _FLOOR, str(path),
                                     spec.table.name, ",".join(spec.columns), fmt, str(out)],
                                    out)
                run = timed_child([*CORE_AUDIT, "export", kind, "--db", str(path), "--format",
                                   fmt, "--out", str(out)], out)
                shell = sqlite_cli(path, spec.table.name, spec.columns, fmt, out)
                rows = run.lines - header
                shown = [("core-audit export", run), ("floor (sqlite3 + stdlib)", floor)]
                if shell is not None:
                    shown.append((f"sqlite3 CLI {'-csv' if fmt == 'csv' else '-json'}", shell))
                for what, r in shown:
                    ratio = (f"{r.seconds / floor.seconds:.2f}x" if r is run else "")
                    if r is run and shell is not None:
                        ratio += (f" {r.seconds / shell.seconds:.2f}x CLI"
                                  f" (CPU {r.cpu / shell.cpu:.2f}x)")
                    print(f"{kind:<12} {fmt:<6} {what:<28} {rows:>9,}"
                          f" {r.seconds:>7.2f} {rows / r.seconds:>9,.0f} {r.cpu:>6.2f}"
                          f" {r.peak_rss_mib:>12.0f} {ratio:>8}")
        print("goal: core-audit export <= 1.5x the sqlite3 CLI (wall); load average "
              + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
