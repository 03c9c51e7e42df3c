"""Journal benchmark: a turn by CORE's identity and 50-turn timeline pages, beside the SQL floor.

    .venv/bin/python bench/journal.py [--turns 100000] [--journals 4] [--repeat 300]
                                      [--db PATH] [--frames N] [--frames-file PATH]

Builds (or reuses, with --db) a SQLite store of `--journals` Workbench journals holding
`--turns` turns between them (lines shaped as core-interop.md §5 writes them, one CORE time a
second apart, offsets varied), optionally after frames (residual occurrences beside the turns):
N from bench/frames.py, or a file of them (`--frames-file`, e.g. the output of
../shared/bench/gen_frames.py --frames 400000: ~1M occurrences). It times, in-process through
the server's schema (built once, with its limits and executor, as `serve` does), every call
inside one running event loop as the server answers it (a document the prepared documents
answer, store/api/prepared_operations.py, by them, any other by strawberry's execution;
reads first tried on the loop's thread, then in a worker thread, as the server's):

  turn          turn(journal, turnId) with every typed journal field and pipelineRecord, at
                random (journal, turnId)
  journal       journal(id) { turns(first: 50, after: ...) }: a journal's turns in turn order,
                at a random place
  journal order turns(filter: {journal: [id]}, first: 50, after: ...): one journal's turns in
                journal order (OLDEST_FIRST, the Trace route's timeline), at a random place
  journal time  turns(filter: {journal: [id]}, order: TIME_ASC, first: 50, after: ...): one
                journal's turns in CORE time, at a random place
  timeline      turns(order: TIME_DESC, first: 50) with what the Workbench's timeline row shows,
                at a random point of the list
  grounding     RunGroundingDistribution (graphql/workbench/): one journal's turns counted per
                grounding source, epistemic state, clearance, verification and trace
                integrity (turnFacets and turnGroups), a random journal each call
  runs          Runs (graphql/workbench/): the journals, each with its turn count, last time
                and batches
  turns         TurnsByGrounding (graphql/workbench/) with no variable given: the first 20
                turns of the store and their totalCount
  turn view     TurnDetail (graphql/workbench/): one turn with every field, its surface,
                verdicts, payloads and construction, at random (journal, turnId)
  no field      { __typename }: what any request costs the server before a field resolves

Each is timed three ways in the same run: the whole GraphQL request (`request`: the server's
time without HTTP, wall, and `cpu`: this process's CPU time for it, which a shared machine
inflates less); the query layer alone (`query`: the same store.db.queries call on a pooled
connection, records built, no GraphQL); and the floor, on one plain read-only sqlite3
connection (`mode=ro`): the statement that finds the same rows by the same indexes
(turn_fields' (journal_id, turn_id), (journal_id, turn_seq), (journal_id, core_time,
turn_seq) and (core_time, turn_seq)), joined to turns, fetched and `json.dumps`'d; for the
grounding, one statement counting the journal's turns by all five columns at once; for the
runs, one statement counting every journal's turns from the (journal_id, turn_id) index; for
the turns, their count and the first 20 turns joined to their surfaces; for the turn view,
the turn's as for `turn`. Prints p50
and p95 of each and the request's ratio to its floor. It asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from floor_reads import floor_connection

from store.api.context import RequestContext
from store.api.schema import build_schema
from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import journals as journal_queries
from store.db.queries.filters import RecordId
from store.db.queries.groups import TURN_GROUPS

START = datetime(2026, 7, 30, 18, 0, tzinfo=UTC)
OFFSETS = [timedelta(0), timedelta(hours=2), timedelta(hours=-5, minutes=-30)]
TURN = """query($j: ID!, $t: Int!) { turn(journal: $j, turnId: $t) {
    turnKey turnId timestamp traceHash prompt articulationSurface walkSurface groundingSource
    epistemicState normativeClearance verdicts { identity identityDetail safety safetyDetail
    ethics ethicsDetail } refusalEmitted hedgeInjected proposalCandidates { candidateId
    sourceKind } turnCostMs checkpointEmitted traceIntegrity journalDigest pipelineRecord } }"""
JOURNAL = """query($j: ID!, $after: String) { journal(id: $j) { turns(first: 50, after: $after) {
    pageInfo { endCursor } nodes { turnId timestamp prompt traceHash traceIntegrity } } } }"""
JOURNAL_ORDER = """query($j: ID!, $after: String) { turns(filter: {journal: [$j]},
    first: 50, after: $after) {
    pageInfo { endCursor } nodes { turnId timestamp prompt traceHash traceIntegrity } } }"""
JOURNAL_TIME = """query($j: ID!, $after: String) { turns(filter: {journal: [$j]},
    order: TIME_ASC, first: 50, after: $after) {
    pageInfo { endCursor } nodes { turnId timestamp prompt traceHash traceIntegrity } } }"""
TIMELINE = """query($after: String) { turns(order: TIME_DESC, first: 50, after: $after) {
    pageInfo { endCursor } nodes { turnId journalId timestamp prompt traceHash
    traceIntegrity surface { surface } } } }"""
NO_FIELD = "{ __typename }"
WORKBENCH = Path(__file__).resolve().parents[1] / "graphql" / "workbench"
GROUNDING = (WORKBENCH / "RunGroundingDistribution.graphql").read_text(encoding="utf-8")
RUNS = (WORKBENCH / "Runs.graphql").read_text(encoding="utf-8")
TURNS_BY_GROUNDING = (WORKBENCH / "TurnsByGrounding.graphql").read_text(encoding="utf-8")
TURN_DETAIL = (WORKBENCH / "TurnDetail.graphql").read_text(encoding="utf-8")

FLOOR_TURN = """SELECT t.*, f.* FROM turn_fields f JOIN turns t ON t.turn_key = f.turn_key
    WHERE f.journal_id = ? AND f.turn_id = ?"""
FLOOR_JOURNAL = """SELECT t.turn_id, t.timestamp, t.prompt, t.trace_hash, t.trace_integrity,
    f.turn_seq FROM turn_fields f JOIN turns t ON t.turn_key = f.turn_key
    WHERE f.journal_id = ? AND f.turn_seq > ? ORDER BY f.turn_seq LIMIT 51"""
FLOOR_JOURNAL_TIME = """SELECT t.turn_id, t.timestamp, t.prompt, t.trace_hash,
    t.trace_integrity, f.core_time, f.turn_seq FROM turn_fields f
    JOIN turns t ON t.turn_key = f.turn_key
    WHERE f.journal_id = ? AND (f.core_time, f.turn_seq) > (?, ?)
    ORDER BY f.core_time, f.turn_seq LIMIT 51"""
FLOOR_TIMELINE = """SELECT t.turn_id, f.journal_id, t.timestamp, t.prompt, t.trace_hash,
    t.trace_integrity, s.surface, f.core_time, f.turn_seq FROM turn_fields f
    JOIN turns t ON t.turn_key = f.turn_key JOIN surface_records s ON s.surface_id = t.surface_id
    WHERE (f.core_time, f.turn_seq) < (?, ?)
    ORDER BY f.core_time DESC, f.turn_seq DESC LIMIT 51"""
FLOOR_GROUNDING = """SELECT t.grounding_source, t.epistemic_state, t.normative_clearance,
    s.verification, t.trace_integrity, count(*) FROM turn_fields f
    JOIN turns t ON t.seq = f.turn_seq JOIN surface_records s ON s.surface_id = t.surface_id
    WHERE f.journal_id = ? GROUP BY 1, 2, 3, 4, 5"""
FLOOR_RUNS = """SELECT journal_id, count(*), max(turn_id) FROM turn_fields
    WHERE journal_id IS NOT NULL GROUP BY journal_id"""
FLOOR_TURNS = """SELECT t.*, s.* FROM turns t JOIN surface_records s ON s.surface_id = t.surface_id
    ORDER BY t.seq LIMIT 21"""


def journal_lines(journal: int, turns: int) -> Iterator[bytes]:
    for turn_id in range(1, turns + 1):
        offset = OFFSETS[turn_id % len(OFFSETS)]
        moment = (START + timedelta(seconds=turn_id * 7 + journal)).astimezone(timezone(offset))
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


def build(path: Path, turns: int, journals: int, frames: int, frames_file: Path | None) -> None:
    with AuditStore.open(str(path)) as store:
        if frames:
            from frames import write_frames

            frames_path = path.with_suffix(".frames.jsonl")
            write_frames(frames_path, frames, 0)
            frames_file = frames_path
        if frames_file is not None:
            with frames_file.open("rb") as stream:
                store.ingest(stream, source="frames")
        for journal in range(journals):
            store.ingest(list(journal_lines(journal, turns // journals)),
                         source=f"journal-{journal}.jsonl")


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.95) - 1)]


def timed(repeat: int, call: Callable[[int], Any]) -> tuple[float, float]:
    samples = []
    for i in range(repeat):
        begun = time.perf_counter()
        call(i)
        samples.append((time.perf_counter() - begun) * 1000)
    return percentiles(samples)


async def timed_async(repeat: int, call: Callable[[int], Awaitable[Any]]
                      ) -> tuple[float, float, float]:
    """p50 and p95 of the wall time, and p50 of this process's CPU time (all its threads):
    on a shared machine the wall time includes waiting for a core."""
    samples, cpu = [], []
    for i in range(repeat):
        begun, begun_cpu = time.perf_counter(), time.process_time()
        await call(i)
        samples.append((time.perf_counter() - begun) * 1000)
        cpu.append((time.process_time() - begun_cpu) * 1000)
    return (*percentiles(samples), statistics.median(cpu))


def cursor(tag: str, *key: int) -> str:
    return base64.urlsafe_b64encode(":".join([tag, *map(str, key)]).encode()).decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=100_000, help="journal turns in all")
    parser.add_argument("--journals", type=int, default=4, help="journals they are split into")
    parser.add_argument("--repeat", type=int, default=300, help="timed calls of each operation")
    parser.add_argument("--frames", type=int, default=0, help="bench/frames.py frames ingested "
                        "first")
    parser.add_argument("--frames-file", type=Path, help="a file of frames ingested first")
    parser.add_argument("--db", type=Path, help="store path (default: a temp file)")
    arguments = parser.parse_args()
    path = arguments.db or Path(tempfile.mkdtemp()) / "journal-bench.db"
    if not path.exists():
        begun = time.perf_counter()
        build(path, arguments.turns, arguments.journals, arguments.frames, arguments.frames_file)
        print(f"built {path} in {time.perf_counter() - begun:.1f} s")
    raw = floor_connection(path)
    (turns,) = raw.execute("SELECT count(*) FROM turns").fetchone()
    (occurrences,) = raw.execute("SELECT count(*) FROM residual_occurrences").fetchone()
    journals = [row[0] for row in raw.execute(
        "SELECT journal_id FROM turn_fields WHERE turn_id = 1 ORDER BY turn_seq")]
    sizes = dict(raw.execute("SELECT journal_id, max(turn_id) FROM turn_fields "
                             "WHERE journal_id IS NOT NULL GROUP BY journal_id"))
    print(f"store: {turns} turns in {len(journals)} journals, {occurrences} residual "
          f"occurrences; {arguments.repeat} calls each; ms")
    repeat, rng = arguments.repeat, random.Random(0)
    picks = [(j, rng.randint(1, sizes[j])) for j in (rng.choice(journals) for _ in range(repeat))]

    def key_of(journal: str, turn_id: int) -> tuple[int, int]:
        found: tuple[int, int] = raw.execute(
            "SELECT core_time, turn_seq FROM turn_fields WHERE journal_id = ? AND turn_id = ?",
            (journal, turn_id)).fetchone()
        return found

    # A page's place: 60 turns before a random turn of the journal (pages stay full).
    places = [(j, max(1, t - 60)) for j, t in picks]
    seqs = [key_of(j, t)[1] for j, t in places]
    times = [key_of(j, t) for j, t in places]
    timeline = [row for row in raw.execute(
        "SELECT core_time, turn_seq FROM turn_fields WHERE core_time IS NOT NULL "
        "ORDER BY core_time DESC, turn_seq DESC")]
    points = [timeline[rng.randrange(len(timeline) - 60)] for _ in range(repeat)]
    db = AuditStore.open(str(path), read_only=True)
    schema = build_schema()  # once, as the server does
    turns_listing = queries.LISTINGS["turns"]

    prepared = schema.prepared
    assert prepared is not None

    async def graphql(document: str, **variables: Any) -> None:
        context = RequestContext(db)  # as AuditGraphQL.execute_single answers a request
        result = await prepared.answer(document, variables, None, context)
        if result is None:
            result = await schema.execute(document, variable_values=variables,
                                          context_value=context)
        assert not result.errors, result.errors

    operations: list[tuple[str, Callable[[int], Awaitable[Any]], Callable[[int], Any] | None,
                           Callable[[int], Any]]] = [
        ("turn(journal, turnId)",
         lambda i: graphql(TURN, j=picks[i][0], t=picks[i][1]),
         lambda i: db.execute(journal_queries.turn_in_journal, turns_listing, *picks[i]),
         lambda i: json.dumps(raw.execute(FLOOR_TURN, picks[i]).fetchall())),
        ("journal(id).turns (50)",
         lambda i: graphql(JOURNAL, j=places[i][0], after=cursor("seq", seqs[i])),
         lambda i: db.execute(queries.list_turns,
                              queries.TurnFilter(journal=[RecordId(places[i][0])]), 50,
                              cursor("seq", seqs[i])),
         lambda i: json.dumps(raw.execute(FLOOR_JOURNAL, (places[i][0], seqs[i])).fetchall())),
        ("journal turns OLDEST_FIRST (50)",
         lambda i: graphql(JOURNAL_ORDER, j=places[i][0], after=cursor("seq", seqs[i])),
         lambda i: db.execute(queries.list_turns,
                              queries.TurnFilter(journal=[RecordId(places[i][0])]), 50,
                              cursor("seq", seqs[i])),
         lambda i: json.dumps(raw.execute(FLOOR_JOURNAL, (places[i][0], seqs[i])).fetchall())),
        ("journal turns TIME_ASC (50)",
         lambda i: graphql(JOURNAL_TIME, j=places[i][0], after=cursor("time", *times[i])),
         lambda i: db.execute(queries.list_turns,
                              queries.TurnFilter(journal=[RecordId(places[i][0])]), 50,
                              cursor("time", *times[i]), order=queries.Order.TIME_ASC),
         lambda i: json.dumps(raw.execute(FLOOR_JOURNAL_TIME,
                                          (places[i][0], *times[i])).fetchall())),
        ("timeline TIME_DESC (50)",
         lambda i: graphql(TIMELINE, after=cursor("timedesc", *points[i])),
         lambda i: db.execute(queries.list_turns, None, 50, cursor("timedesc", *points[i]),
                              order=queries.Order.TIME_DESC),
         lambda i: json.dumps(raw.execute(FLOOR_TIMELINE, points[i]).fetchall())),
        ("run grounding (journal)",
         lambda i: graphql(GROUNDING, journal=picks[i][0]),
         lambda i: (db.execute(turns_listing.facet_counts,
                               queries.TurnFilter(journal=[RecordId(picks[i][0])])),
                    db.execute(TURN_GROUPS.groups, ["TRACE_INTEGRITY"],
                               queries.TurnFilter(journal=[RecordId(picks[i][0])]))),
         lambda i: json.dumps(raw.execute(FLOOR_GROUNDING, (picks[i][0],)).fetchall())),
        ("runs (Runs)", lambda i: graphql(RUNS),
         lambda i: [db.execute(journal_queries.journal_summary, j.journal_id)
                    for j in db.execute(journal_queries.list_journals).items],
         lambda i: json.dumps(raw.execute(FLOOR_RUNS).fetchall())),
        ("turns (TurnsByGrounding)", lambda i: graphql(TURNS_BY_GROUNDING),
         lambda i: (db.execute(turns_listing.count, queries.TurnFilter()),
                    db.execute(turns_listing.list, queries.TurnFilter(), 20)),
         lambda i: json.dumps([raw.execute("SELECT count(*) FROM turns").fetchall(),
                               raw.execute(FLOOR_TURNS).fetchall()])),
        ("turn view (TurnDetail)",
         lambda i: graphql(TURN_DETAIL, journal=picks[i][0], turnId=picks[i][1]),
         None, lambda i: json.dumps(raw.execute(FLOOR_TURN, picks[i]).fetchall())),
        ("{ __typename }", lambda i: graphql(NO_FIELD), None, lambda i: json.dumps({})),
    ]

    async def run_all() -> list[tuple[str, tuple[float, float, float],
                                      tuple[float, float] | None, tuple[float, float]]]:
        rows = []
        for label, request, query, floor in operations:
            for i in range(min(20, repeat)):  # warm: statements built, caches filled
                await request(i)
            rows.append((label, await timed_async(repeat, request),
                         None if query is None else timed(repeat, query), timed(repeat, floor)))
        return rows

    # One running loop, as the server's: anyio's worker threads are reused across requests.
    rows = asyncio.run(run_all())
    print("load average (1, 5, 15 min) at the end: "
          + ", ".join(f"{load:.1f}" for load in os.getloadavg()))
    print(f"{'operation':30} {'request p50':>11} {'p95':>8} {'cpu p50':>8} {'query p50':>10} "
          f"{'p95':>8} {'floor p50':>10} {'p95':>8} {'x floor':>8}")
    for label, (p50, p95, c50), query_times, (f50, f95) in rows:
        q50, q95 = ("-", "-") if query_times is None else (
            f"{query_times[0]:.3f}", f"{query_times[1]:.3f}")
        ratio = f"{p50 / f50:8.1f}" if f50 >= 0.001 else f"{'-':>8}"
        print(f"{label:30} {p50:11.3f} {p95:8.3f} {c50:8.3f} {q50:>10} {q95:>8} {f50:10.3f} "
              f"{f95:8.3f} {ratio}")
    db.close()


if __name__ == "__main__":
    main()
