"""Turn groups from the batches' turn tallies answer exactly what the turns' rows answer:
every grouping of tallied dimensions (kind, grounding source, epistemic state, clearance,
trace integrity, CORE-time and ingest-time buckets), unfiltered and with the filters the
tallies serve, as of any batch, on generated stores (journals of four batches whose CORE
times cross hours, days, an ISO week and a month in several offsets, and the bundled
chat turns, without a CORE time), on SQLite and PostgreSQL. The tally path is
checked to be the one taken (the SQL reads turn_tallies, not turns), and the groupings the
tallies cannot answer to read the rows."""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from backends import BACKENDS, EXAMPLE_FILES, pg_schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.db.audit_store import AuditStore
from store.db.queries import groups
from store.db.queries.filters import TurnFilter
from store.db.queries.groups import Groups

TALLIED = ["KIND", "GROUNDING_SOURCE", "EPISTEMIC_STATE", "CLEARANCE", "TRACE_INTEGRITY",
           *(f"{when}_{bucket}" for when in ("CORE", "INGEST")
             for bucket in ("HOUR", "DAY", "WEEK", "MONTH"))]
SOURCES = ["none", "vault", "pack", "partial"]
STATES = ["decoded", "undetermined"]
CLEARANCES = ["cleared", "violated", "suppressed"]
INTEGRITIES = ["pipeline_trace", "legacy_unhashed"]
OFFSETS = [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-7))]
READS_TURNS = re.compile(r"\b(FROM|JOIN) turns\b")
# Sunday 2026-08-30 22:00 UTC: the turns run past midnight, into Monday's new ISO week and,
# a day later, into September.
START = datetime(2026, 8, 30, 22, 0, tzinfo=UTC)


def _journal(seed: int, turns: int) -> list[bytes]:
    rng = random.Random(seed)
    lines = []
    for turn_id in range(1, turns + 1):
        moment = START + timedelta(minutes=rng.randrange(0, 60 * 30))
        timestamp = moment.astimezone(rng.choice(OFFSETS)).isoformat(timespec="microseconds")
        entry = journal_entry(turn_id, f"j{seed} prompt {turn_id}", DISCLOSURE,
                              rng.choice(SOURCES), timestamp=timestamp,
                              trace_hash=f"{seed:08x}{turn_id:056x}",
                              epistemic_state=rng.choice(STATES),
                              normative_clearance=rng.choice(CLEARANCES),
                              trace_integrity=rng.choice(INTEGRITIES))
        lines.append(journal_line(entry).encode() + b"\n")
    return lines


def _chat() -> list[bytes]:
    """Five ChatRuntime outputs (the last two TurnEvents: they carry `turn`), no CORE time;
    an output needs an epistemic state or a clearance to be a turn."""
    outputs = []
    for i in range(1, 6):
        output: dict[str, Any] = {"prompt": f"chat {i}", "surface": DISCLOSURE,
                                  "grounding_source": "none"}
        if i % 2:
            output["epistemic_state"] = "decoded"
        if i % 3:
            output["normative_clearance"] = "cleared"
        if i >= 4:
            output.update(turn=i, trace_hash="")
        outputs.append(json.dumps(output).encode() + b"\n")
    return outputs


@pytest.fixture(scope="module", params=BACKENDS)
def generated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[AuditStore]:
    """The bundled examples (residuals and surfaces, no turns), five chat turns, then four
    journals of 40 turns, one batch each."""
    with (pg_schema() if request.param == "postgresql" else _sqlite_url(tmp_path_factory)
          ) as url:
        with AuditStore.open(url) as store:
            for path in EXAMPLE_FILES:
                store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
            store.ingest(_chat(), source="chat.jsonl")
            for seed in range(4):
                store.ingest(_journal(seed, 40), source=f"journal-{seed}.jsonl")
        # The groups' tests, not the time limit's: in CI, once, a grouping of this small
        # store ran past the 5 s default while the machine stalled.
        db = AuditStore.open(url, read_only=True, time_limit=60)
        try:
            yield db
        finally:
            db.close()


class _sqlite_url:
    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.url = f"sqlite:///{factory.mktemp('tallies') / 'audit.db'}"

    def __enter__(self) -> str:
        return self.url

    def __exit__(self, *_: object) -> None:
        return None


def _grouped(db: AuditStore, by: list[str], where: TurnFilter | None, as_of: int | None,
             tallied: bool) -> tuple[Groups, list[str]]:
    """The groups, and the statements that computed them; with `tallied` False, from the
    rows (the tally path switched off)."""
    statements: list[str] = []

    def seen(_c: Any, _cur: Any, sql: str, *_rest: Any) -> None:
        statements.append(sql)

    event.listen(db.engine, "before_cursor_execute", seen)
    original = groups.tallied_turn_rows
    try:
        if not tallied:
            groups.tallied_turn_rows = lambda *_arguments: None  # type: ignore[assignment]
        found = db.execute(groups.turn_groups, by, where, 500, as_of)
    finally:
        groups.tallied_turn_rows = original  # type: ignore[assignment]
        event.remove(db.engine, "before_cursor_execute", seen)
    return found, [s for s in statements if "GROUP BY" in s]


def _same_both_ways(db: AuditStore, by: list[str], where: TurnFilter | None = None,
                    as_of: int | None = None) -> Groups:
    from_tallies, read = _grouped(db, by, where, as_of, tallied=True)
    from_rows, _ = _grouped(db, by, where, as_of, tallied=False)
    assert from_tallies == from_rows, (by, where, as_of)
    assert read and all("FROM turn_tallies" in s and not READS_TURNS.search(s)
                        for s in read), read
    return from_tallies


def test_the_generated_store_has_what_the_groups_tell_apart(generated: AuditStore) -> None:
    found = _same_both_ways(generated, ["KIND"])
    assert {g.values[0]: g.count for g in found.groups} == {
        "workbench_journal": 160, "chat_runtime": 3, "turn_event": 2}
    days = _same_both_ways(generated, ["CORE_DAY"])
    assert [g.values[0] for g in sorted(days.groups, key=lambda g: str(g.values[0]))] == [
        "2026-08-30", "2026-08-31", "2026-09-01", None]
    weeks = _same_both_ways(generated, ["CORE_WEEK"])
    assert {g.values[0] for g in weeks.groups} >= {"2026-08-24", "2026-08-31"}


@pytest.mark.parametrize("size", [1, 2])
def test_every_grouping_of_tallied_dimensions(generated: AuditStore, size: int) -> None:
    for by in itertools.combinations(TALLIED, size):
        _same_both_ways(generated, list(by))


FILTERS = st.builds(
    TurnFilter,
    grounding_source=st.none() | st.lists(st.sampled_from(SOURCES), max_size=2),
    normative_clearance=st.none() | st.lists(st.sampled_from([*CLEARANCES, None]), max_size=2),
    epistemic_state=st.none() | st.lists(st.sampled_from([*STATES, None]), max_size=2),
    kind=st.none() | st.lists(st.sampled_from(["workbench_journal", "chat_runtime"]),
                              max_size=1),
    trace_integrity=st.none() | st.lists(st.sampled_from(INTEGRITIES), max_size=1),
    batch_id_from=st.none() | st.integers(1, 8),
    batch_id_to=st.none() | st.integers(1, 8),
    # Whole hours: timeFrom at an hour's start, timeTo at the last microsecond of one.
    time_from=st.none() | st.integers(0, 30).map(lambda h: START + timedelta(hours=h)),
    time_to=st.none() | st.integers(0, 30).map(
        lambda h: START + timedelta(hours=h, microseconds=-1)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture])
@given(by=st.lists(st.sampled_from(TALLIED), min_size=1, max_size=3, unique=True),
       where=FILTERS, as_of=st.none() | st.sampled_from([37, 78, 162]))
def test_filtered_groupings_as_of_any_batch(generated: AuditStore, by: list[str],
                                            where: TurnFilter, as_of: int | None) -> None:
    _same_both_ways(generated, by, where, as_of)


@pytest.mark.parametrize(("by", "where"), [
    (["VERIFICATION"], None),  # the emitted surface's: not tallied
    (["PROMPT"], None),
    (["CORE_DAY"], TurnFilter(time_from=START + timedelta(minutes=30))),  # inside an hour
    (["KIND"], TurnFilter(trace_hash=["00000000" + "0" * 55 + "1"])),
    (["CORE_DAY", "CHAIN"], TurnFilter(grounding_source=["none"])),
])
def test_what_the_tallies_cannot_answer_reads_the_rows(generated: AuditStore, by: list[str],
                                                       where: TurnFilter | None) -> None:
    found, read = _grouped(generated, by, where, None, tallied=True)
    assert read and all("turn_tallies" not in s and READS_TURNS.search(s) for s in read), read
    assert found == _grouped(generated, by, where, None, tallied=False)[0]
