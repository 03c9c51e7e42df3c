"""`core-audit follow`: from a journal line's write to its being readable in the store, p50 and
p95 over N lines, beside a floor measured in the same run: one in-process `ingest` of a
one-line journal into the same store (the writer's own cost of a batch, no file watching).

    .venv/bin/python bench/follow.py [--lines 200] [--interval 0.1] [--floors 20] [--prefill N]

A `core-audit follow` process tails a fresh journal; this process appends CORE-shaped journal
lines one at a time (append and flush, as CORE's file sink does), and times each from its
write to the moment a read-only SQLite connection sees its turn. The next line is written once
the last is readable, so each latency is one line's own. Every `--lines / --floors` lines,
with the follower idle, one floor: a one-line journal of its own ingested in this process.
`--prefill N`: the journal holds N turns before the follower starts (its first batch stores
them): each later batch still reads and checks every earlier line.
Goal (issue 30): p95 <= 1 s. Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from store.db.audit_store import AuditStore

CORE_AUDIT = str(Path(sys.executable).parent / "core-audit")
GOAL_P95 = 1.0
DISCLOSURE = "I don't know — insufficient grounding for that yet."


def journal_line(turn_id: int, prompt: str) -> bytes:
    """A Workbench journal line as CORE's TurnJournal.append writes it (core-interop.md §5)."""
    entry = {
        "turn_id": turn_id, "timestamp": f"2026-12-06T08:00:{turn_id % 60:02d}.000000+00:00",
        "trace_hash": hashlib.sha256(prompt.encode()).hexdigest(), "prompt": prompt,
        "surface": DISCLOSURE, "articulation_surface": DISCLOSURE, "walk_surface": DISCLOSURE,
        "grounding_source": "none", "epistemic_state": "undetermined",
        "normative_clearance": "suppressed",
        "verdicts": {"identity": None, "safety": {"outcome": "cleared", "runtime_detail": ""},
                     "ethics": {"outcome": "violated",
                                "runtime_detail": "acknowledge_uncertainty"}},
        "refusal_emitted": True, "hedge_injected": False, "checkpoint_emitted": False,
        "proposal_candidates": [], "turn_cost_ms": 12, "leeway_evidence": None,
        "pipeline_record": None, "field_evidence": None, "construction_evidence": None,
        "meta_rh_evidence": None, "practice_evidence": None, "trace_integrity": "pipeline_trace",
    }

    def canonical(value: object) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    digest = "sha256:" + hashlib.sha256(canonical(entry).encode()).hexdigest()
    return (canonical({**entry, "journal_digest": digest}) + "\n").encode()


def stored(connection: sqlite3.Connection, prompt: str) -> bool:
    """Whether the turn asking `prompt` is readable: among the newest rows (by seq, indexed),
    so the poll itself costs the same at any store size."""
    rows = connection.execute("SELECT prompt FROM turns ORDER BY seq DESC LIMIT 16")
    return any(row[0] == prompt for row in rows)


def wait_for(connection: sqlite3.Connection, prompt: str,
             follower: subprocess.Popen[bytes]) -> float:
    while not stored(connection, prompt):
        if follower.poll() is not None:
            raise SystemExit(f"follow exited with {follower.returncode}")
        time.sleep(0.002)
    return time.perf_counter()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=200, help="lines appended, one at a time")
    parser.add_argument("--interval", type=float, default=0.1, help="follow's --interval")
    parser.add_argument("--floors", type=int, default=20, help="one-line ingests (the floor)")
    parser.add_argument("--prefill", type=int, default=1, help="journal lines before the run")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-follow-"))
    db, journal = folder / "audit.db", folder / "turn_journal.jsonl"
    prefix = "followed turn"
    journal.write_bytes(b"".join(journal_line(n, f"{prefix} {n}")
                                 for n in range(1, args.prefill + 1)))
    follower = subprocess.Popen(
        [CORE_AUDIT, "follow", str(journal), "--db", str(db), "--interval",
         str(args.interval)],
        env={k: v for k, v in os.environ.items() if not k.startswith("CORE_AUDIT_")},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    latencies: list[float] = []
    floors: list[float] = []
    try:
        while not db.exists():
            time.sleep(0.05)
        time.sleep(0.5)
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
        while True:
            try:
                if stored(connection, f"{prefix} {args.prefill}"):
                    break
            except sqlite3.OperationalError:  # the store's tables not committed yet
                pass
            time.sleep(0.05)
        every = max(1, args.lines // max(1, args.floors))
        with AuditStore.open(str(db)) as store:
            for turn_id in range(args.prefill + 1, args.prefill + args.lines + 1):
                line = journal_line(turn_id, f"{prefix} {turn_id}")
                with journal.open("ab") as sink:
                    sink.write(line)
                    sink.flush()
                    written = time.perf_counter()
                latencies.append(wait_for(connection, f"{prefix} {turn_id}", follower) - written)
                if turn_id % every == 0 and len(floors) < args.floors:
                    floor_line = journal_line(1, f"floor journal {turn_id}")
                    start = time.perf_counter()
                    store.ingest([floor_line], source="floor.jsonl")
                    floors.append(time.perf_counter() - start)
    finally:
        follower.terminate()
        follower.wait(timeout=60)
    first, last = latencies[: len(latencies) // 4], latencies[-(len(latencies) // 4):]
    print(f"follow --interval {args.interval}: {len(latencies)} lines appended to a journal of "
          f"{args.prefill}, write -> readable")
    print(f"  p50 {statistics.median(latencies) * 1000:7.1f} ms   p95 "
          f"{percentile(latencies, 0.95) * 1000:7.1f} ms   max {max(latencies) * 1000:7.1f} ms"
          f"   (goal p95 <= {GOAL_P95 * 1000:.0f} ms: "
          f"{'met' if percentile(latencies, 0.95) <= GOAL_P95 else 'NOT met'})")
    print(f"  first quarter p50 {statistics.median(first) * 1000:.1f} ms, last quarter p50 "
          f"{statistics.median(last) * 1000:.1f} ms (each batch checks every earlier line)")
    print(f"floor, same run: one in-process ingest of a one-line journal, {len(floors)} times")
    print(f"  p50 {statistics.median(floors) * 1000:7.1f} ms   p95 "
          f"{percentile(floors, 0.95) * 1000:7.1f} ms")
    print(f"  expected: floor + about half the interval ({args.interval * 500:.0f} ms) + "
          "checking the earlier lines")


if __name__ == "__main__":
    main()
