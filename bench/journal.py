"""Journal benchmark: a turn by CORE's identity and a 50-turn timeline page, beside the SQL floor.

    .venv/bin/python bench/journal.py [--turns 100000] [--journals 4] [--repeat 300]
                                      [--db PATH] [--frames N]

Builds (or reuses, with --db) a SQLite store of `--journals` Workbench journals holding
`--turns` turns between them (lines shaped as core-interop.md §5 writes them, one CORE time a
second apart, offsets varied), optionally after N frames from bench/frames.py (residual
occurrences beside the turns), and times, in-process through the server's schema (built once,
with its limits and executor, as `serve` does): the server's time without HTTP:

  turn       turn(journal, turnId) with every typed journal field and pipelineRecord, at
             random (journal, turnId)
  timeline   turns(order: TIME_DESC, first: 50) with what the Workbench's timeline row shows,
             at a random point of the list (its `after` cursor taken from a first pass)
  journal    journal(id) { turns(first: 50, after: ...) } at a random place

The floor, measured in the same run, on one plain read-only sqlite3 connection (`mode=ro`):
the statement that finds the same rows by the same indexes (turn_fields' (journal_id,
turn_id) and (core_time, turn_seq)), joined to turns, fetched, and `json.dumps`'d. Prints
p50/p95 of each and the ratio. It asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from store.api.context import RequestContext
from store.api.schema import build_schema
from store.db.audit_store import AuditStore

START = datetime(2026, 7, 30, 18, 0, tzinfo=UTC)
OFFSETS = [timedelta(0), timedelta(hours=2), timedelta(hours=-5, minutes=-30)]
TURN = """query($j: ID!, $t: Int!) { turn(journal: $j, turnId: $t) {
    turnKey turnId timestamp traceHash prompt articulationSurface walkSurface groundingSource
    epistemicState normativeClearance verdicts { identity identityDetail safety safetyDetail
    ethics ethicsDetail } refusalEmitted hedgeInjected proposalCandidates { candidateId
    sourceKind } turnCostMs checkpointEmitted traceIntegrity journalDigest pipelineRecord } }"""
TIMELINE = """query($after: String) { turns(order: TIME_DESC, first: 50, after: $after) {
    pageInfo { endCursor } nodes { turnId journalId timestamp prompt traceHash
    traceIntegrity surface { surface } } } }"""
JOURNAL = """query($j: ID!, $after: String) { journal(id: $j) { turns(first: 50, after: $after) {
    pageInfo { endCursor } nodes { turnId timestamp prompt traceHash traceIntegrity } } } }"""

FLOOR_TURN = """SELECT t.*, f.* FROM turn_fields f JOIN turns t ON t.turn_key = f.turn_key
    WHERE f.journal_id = ? AND f.turn_id = ?"""
FLOOR_TIMELINE = """SELECT t.turn_id, f.journal_id, t.timestamp, t.prompt, t.trace_hash,
    t.trace_integrity, f.core_time, f.turn_seq FROM turn_fields f
    JOIN turns t ON t.turn_key = f.turn_key
    WHERE f.core_time < ?
    ORDER BY f.core_time DESC, f.turn_seq DESC LIMIT 51"""
FLOOR_JOURNAL = """SELECT t.turn_id, t.timestamp, t.prompt, t.trace_hash, t.trace_integrity
    FROM turn_fields f JOIN turns t ON t.turn_key = f.turn_key
    WHERE f.journal_id = ? AND f.turn_id > ? ORDER BY f.turn_id LIMIT 51"""


def journal_lines(journal: int, turns: int) -> Iterator[bytes]:
    for turn_id in range(1, turns + 1):
        offset = OFFSETS[turn_id % len(OFFSETS)]
        moment = (START + timedelta(seconds=turn_id * 7 + journal)).astimezone(
            __import__("datetime").timezone(offset))
        entry = {
            "turn_id": turn_id, "timestamp": moment.isoformat(timespec="microseconds"),
            "trace_hash": f"{journal:08x}{turn_id:056x}", "prompt": f"j{journal} prompt {turn_id}",
            "surface": f"surface {turn_id % 97}", "articulation_surface": None,
            "walk_surface": "I don't know.", "grounding_source": "none",
            "epistemic_state": "undetermined", "normative_clearance": "cleared",
            "verdicts": {"identity": None, "safety": {"outcome": "cleared", "runtime_detail": ""},
                         "ethics": {"outcome": "cleared", "runtime_detail": ""}},
            "refusal_emitted": False, "hedge_injected": False, "checkpoint_emitted": False,
            "proposal_candidates": [], "turn_cost_ms": turn_id % 40,
            "pipeline_record": {"schema_version": "cognitive_pipeline_record_v1",
                                "status": "recorded", "stages": [], "edges": []},
            "trace_integrity": "pipeline_trace"}
        yield json.dumps(entry, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def build(path: Path, turns: int, journals: int, frames: int) -> None:
    with AuditStore.open(str(path)) as store:
        if frames:
            from frames import write_frames

            frames_path = path.with_suffix(".frames.jsonl")
            write_frames(frames_path, frames, 0)
            with frames_path.open("rb") as stream:
                store.ingest(stream, source="frames")
        for journal in range(journals):
            store.ingest(list(journal_lines(journal, turns // journals)),
                         source=f"journal-{journal}.jsonl")


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.95) - 1]


def timed(repeat: int, call: Callable[[int], Any]) -> tuple[float, float]:
    samples = []
    for i in range(repeat):
        begun = time.perf_counter()
        call(i)
        samples.append((time.perf_counter() - begun) * 1000)
    return percentiles(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=100_000, help="journal turns in all")
    parser.add_argument("--journals", type=int, default=4, help="journals they are split into")
    parser.add_argument("--repeat", type=int, default=300, help="timed calls of each operation")
    parser.add_argument("--frames", type=int, default=0, help="generator frames ingested too")
    parser.add_argument("--db", type=Path, help="store path (default: a temp file)")
    arguments = parser.parse_args()
    path = arguments.db or Path(tempfile.mkdtemp()) / "journal-bench.db"
    if not path.exists():
        begun = time.perf_counter()
        build(path, arguments.turns, arguments.journals, arguments.frames)
        print(f"built {path} in {time.perf_counter() - begun:.1f} s")
    raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    (turns,) = raw.execute("SELECT count(*) FROM turns").fetchone()
    (occurrences,) = raw.execute("SELECT count(*) FROM residual_occurrences").fetchone()
    journals = [row[0] for row in raw.execute(
        "SELECT journal_id FROM turn_fields WHERE turn_id = 1 ORDER BY turn_seq")]
    sizes = dict(raw.execute("SELECT journal_id, max(turn_id) FROM turn_fields "
                             "WHERE journal_id IS NOT NULL GROUP BY journal_id"))
    print(f"store: {turns} turns in {len(journals)} journals, {occurrences} residual "
          f"occurrences; {arguments.repeat} calls each; ms")
    rng = random.Random(0)
    picks = [(j, rng.randint(1, sizes[j])) for j in (rng.choice(journals)
                                                      for _ in range(arguments.repeat))]
    times = [row for row in raw.execute(
        "SELECT core_time, turn_seq FROM turn_fields WHERE core_time IS NOT NULL "
        "ORDER BY core_time DESC, turn_seq DESC")]
    points = [times[rng.randrange(len(times) - 60)] for _ in range(arguments.repeat)]
    db = AuditStore.open(str(path), read_only=True)
    loop = asyncio.new_event_loop()
    schema = build_schema()  # once, as the server does

    def graphql(document: str, **variables: Any) -> dict[str, Any]:
        result = loop.run_until_complete(schema.execute(
            document, variable_values=variables, context_value=RequestContext(db)))
        assert not result.errors, result.errors
        data: dict[str, Any] = result.data or {}
        return data

    def cursor(key: tuple[int, int]) -> str:
        import base64
        return base64.urlsafe_b64encode(f"timedesc:{key[0]}:{key[1]}".encode()).decode()

    def journal_cursor(journal: str, turn_id: int) -> str | None:
        import base64
        (seq,) = raw.execute("SELECT turn_seq FROM turn_fields WHERE journal_id = ? AND "
                             "turn_id = ?", (journal, turn_id)).fetchone()
        return base64.urlsafe_b64encode(f"seq:{seq}".encode()).decode()

    journal_points = [(j, max(1, t - 60)) for j, t in picks]
    journal_cursors = [journal_cursor(j, t) for j, t in journal_points]
    rows: list[tuple[str, tuple[float, float], tuple[float, float]]] = []
    rows.append(("turn(journal, turnId)",
                 timed(arguments.repeat, lambda i: graphql(TURN, j=picks[i][0], t=picks[i][1])),
                 timed(arguments.repeat, lambda i: json.dumps(
                     raw.execute(FLOOR_TURN, picks[i]).fetchall()))))
    rows.append(("timeline page (50, TIME_DESC)",
                 timed(arguments.repeat, lambda i: graphql(TIMELINE, after=cursor(points[i]))),
                 timed(arguments.repeat, lambda i: json.dumps(raw.execute(
                     FLOOR_TIMELINE, (points[i][0],)).fetchall()))))
    rows.append(("journal(id).turns (50)",
                 timed(arguments.repeat, lambda i: graphql(
                     JOURNAL, j=journal_points[i][0], after=journal_cursors[i])),
                 timed(arguments.repeat, lambda i: json.dumps(
                     raw.execute(FLOOR_JOURNAL, journal_points[i]).fetchall()))))
    print(f"{'operation':32} {'p50':>8} {'p95':>8} {'floor p50':>10} {'floor p95':>10} "
          f"{'x floor':>8}")
    for label, (p50, p95), (f50, f95) in rows:
        print(f"{label:32} {p50:8.3f} {p95:8.3f} {f50:10.3f} {f95:10.3f} {p50 / f50:8.1f}")
    db.close()


if __name__ == "__main__":
    main()
