"""Verify benchmark: the full `core-audit verify` in one process and on every core, beside
SQLite's `integrity_check` alone (the floor: one of its checks, reading every page; and again
with the file mapped into memory, as verify's workers read it), and the incremental verify
after a small new batch; and each of verify's heavy checks alone, timed in
one process, to show where its time goes (the rest, in the main process, is the schema and
the small tables).

    .venv/bin/python bench/verify.py [--db /tmp/gen1m.db] [--work /tmp/verify-bench.db]
                                     [--new-frames 1000] [--rounds 1]

`--db` is copied to `--work` (never written; build one with ../shared/bench/gen_frames.py
--frames 400000 --seed 20261202 and `core-audit ingest`). Each figure is a child process's
wall time and CPU (user + sys of it and the processes it waited for: the figure a busy machine
changes least); the rounds interleave floor, one process and all cores so load from elsewhere
falls on each alike, and the load average is printed beside them. Then the full verify
writes a record (--record), a batch of --new-frames generated frames is ingested into the
copy, and `verify --checkpoint RECORD --record-key` checks only what came after. Prints
figures only; it asserts nothing about time. The copy is deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORE_AUDIT = [sys.executable, "-c", "from store.cli import main; main()"]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import GENERATOR  # noqa: E402  (../shared/bench/gen_frames.py, found as ingest finds it)

from store.db.schema.engine import SCAN_MMAP_BYTES  # noqa: E402

# Each heavy check alone, in one process, one after the other: where verify's time goes.
_PHASES = """
import sys, time
from store.db.schema.engine import create_store_engine
from store.db.verify.store_checks import HEAVY_CHECKS, Scope, VerifyReport, heavy_check_names
engine = create_store_engine(f"sqlite:///{sys.argv[1]}", read_only=True, pooled=False,
                             scan=True)  # as verify's workers open it
with engine.connect() as connection:
    for name in heavy_check_names({}):
        wall, cpu = time.perf_counter(), time.process_time()
        found = sum(1 for _ in HEAVY_CHECKS[name](connection, Scope(), VerifyReport()))
        print(f"{name}\t{time.perf_counter() - wall:.2f}\t{time.process_time() - cpu:.2f}"
              f"\t{found}", flush=True)
"""

_FLOOR = """
import sqlite3, sys
connection = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for pragma in sys.argv[2:]:
    connection.execute(pragma).fetchall()
assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
"""
# integrity_check again on a connection set up as verify's workers set theirs up (the file
# mapped into memory): how much of verify's lead on the floor is that setting alone.
_MAPPED = f"PRAGMA mmap_size={SCAN_MMAP_BYTES}"


CPU: list[float] = []  # each _timed child's CPU (user + sys, its processes with it)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(command: list[str]) -> tuple[float, str]:
    started, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    CPU.append(_children_cpu() - cpu)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr}")
    return elapsed, done.stdout.strip()


def _load() -> str:
    return " ".join(f"{figure:.2f}" for figure in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="/tmp/gen1m.db",
                        help="a built store to copy and verify (e.g. one bench/ingest.py made"
                             " from gen_frames.py)")
    parser.add_argument("--work", default=None, help="the copy verified (default: a temp file)")
    parser.add_argument("--new-frames", type=int, default=1000,
                        help="frames of the small batch the incremental verify checks")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of each verify")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        help="worker processes of the parallel verify (default: one per core)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="verify-bench-") as scratch:
        work = Path(args.work or Path(scratch) / "store.db")
        shutil.copyfile(args.db, work)
        try:
            _run(args, work, Path(scratch))
        finally:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{work}{suffix}").unlink(missing_ok=True)


def _run(args: argparse.Namespace, work: Path, scratch: Path) -> None:
    key = scratch / "auditor"
    _timed([*CORE_AUDIT, "keygen", "bench.example", "--out", str(key)])
    verify = [*CORE_AUDIT, "verify", "--db", str(work)]
    figures: dict[str, list[float]] = {"floor": [], "mapped": [], "one": [], "all": []}
    cpu: dict[str, list[float]] = {"floor": [], "mapped": [], "one": []}
    print(f"store {args.db} (copied to {work}); load before: {_load()}", flush=True)
    said = ""
    for _ in range(args.rounds):
        figures["floor"].append(_timed([sys.executable, "-c", _FLOOR, str(work)])[0])
        cpu["floor"].append(CPU[-1])
        figures["mapped"].append(_timed([sys.executable, "-c", _FLOOR, str(work), _MAPPED])[0])
        cpu["mapped"].append(CPU[-1])
        figures["one"].append(_timed([*verify, "--jobs", "1"])[0])
        cpu["one"].append(CPU[-1])
        seconds, said = _timed([*verify, "--jobs", str(args.jobs), "--record",
                                str(scratch / "record.txt"), "--record-key", f"{key}.key"])
        figures["all"].append(seconds)
        print(f"  round: floor {figures['floor'][-1]:.2f} s (CPU {cpu['floor'][-1]:.2f}), "
              f"mapped {figures['mapped'][-1]:.2f} s (CPU {cpu['mapped'][-1]:.2f}), "
              f"one process {figures['one'][-1]:.2f} s (CPU {cpu['one'][-1]:.2f}), "
              f"{args.jobs} jobs {seconds:.2f} s; "
              f"load {_load()}", flush=True)
    print(said.split(";")[0])
    _, phases = _timed([sys.executable, "-c", _PHASES, str(work)])
    print(f"where the time goes (each heavy check alone, one process; load {_load()}):")
    print(f"  {'check':32} {'wall s':>7} {'x floor':>8} {'CPU s':>7} {'x floor':>8}")
    for line in phases.splitlines():
        name, wall, used, found = line.split("\t")
        print(f"  {name:32} {float(wall):7.2f} "
              f"{float(wall) / statistics.median(figures['floor']):7.2f}x {float(used):7.2f} "
              f"{float(used) / statistics.median(cpu['floor']):7.2f}x"
              + (f"  ({found} problems)" if found != "0" else ""))
    frames = scratch / "new.jsonl"
    with frames.open("w") as out:
        subprocess.run([sys.executable, str(GENERATOR), "--frames", str(args.new_frames),
                        "--seed", "20261205"], stdout=out, check=True)
    _timed([*CORE_AUDIT, "ingest", "--db", str(work), str(frames)])
    incremental, said = _timed([*verify, "--checkpoint", str(scratch / "record.txt"),
                                "--record-key", f"{key}.pub"])
    incremental_cpu = CPU[-1]
    floor, floor_cpu = statistics.median(figures["floor"]), statistics.median(cpu["floor"])
    print(f"{'figure':44} {'median s':>9} {'x floor':>8} {'CPU s':>7} {'x floor':>8}")
    rows = [("integrity_check alone (the floor)", floor, floor_cpu),
            ("integrity_check, file mapped (as verify's)", statistics.median(figures["mapped"]),
             statistics.median(cpu["mapped"])),
            ("full verify, 1 process (--jobs 1)", statistics.median(figures["one"]),
             statistics.median(cpu["one"])),
            (f"full verify, {args.jobs} processes (--jobs {args.jobs})",
             statistics.median(figures["all"]), None),
            (f"incremental after {args.new_frames} new frames", incremental, incremental_cpu)]
    for name, seconds, used in rows:
        print(f"{name:44} {seconds:9.2f} {seconds / floor:7.2f}x "
              + (f"{used:7.2f} {used / floor_cpu:7.2f}x" if used is not None else
                 "      -        -  (its workers' CPU is not counted here)"))
    print(said.split(";")[1].strip())
    print(f"load after: {_load()}")


if __name__ == "__main__":
    main()
