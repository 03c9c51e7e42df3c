"""Groups: `residualGroups`, `surfaceGroups`, `turnGroups` count records per combination of up
to three dimensions, largest first, capped — the auditor's "how often was each kind seen, per
organ, per day" in one query. Expected counts are the ADR-0225 examples', worked out by hand
below from what each example frame refuses (tests/spec_values.py lists the codes)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from graphql_requests import data_on_store as data
from graphql_requests import run_on_store as run
from spec_values import FACETS_ALL, graphql_facets
from sqlalchemy import BigInteger, literal, select

from store.api.execution import execute_operation
from store.db.audit_store import AuditStore
from store.db.queries.groups import TimeBucket
from store.db.queries.time_buckets import bucketed, core_bucketed
from store.model.turn_fields import core_time

JOURNAL_LINES = (Path(__file__).resolve().parents[2] / "examples" /
                 "workbench_turn_journal.jsonl").read_bytes().splitlines(keepends=True)




def group(values: list[str | None], count: int, occurrences: int) -> dict[str, Any]:
    return {"values": values, "count": count, "occurrences": occurrences}


# Per (kind, organ), from the examples: "Tom gained 3." leaves three roles of the
# unary-delta organ unbound (missing_role x3) and "Tom gained apples."/"Sam gained pears." a
# fourth, seen twice; the same organ refuses a passive voice (unsupported_topology) and a unit
# conflict. "The price fell to a third." misses two roles of fraction_decrease, "40% of the
# students walk." one of percent_partition plus an unlicensed inverse topology, "Mia has 5."
# one of quantity_entity_binding; the tariff's unmapped label falls to
# contract_gap_unclassified. Largest first, then by sightings, then values ascending.
KIND_BY_ORGAN = [
    group(["MISSING_ROLE", "unary_delta_transition"], 4, 5),
    group(["MISSING_ROLE", "fraction_decrease"], 2, 2),
    group(["CONTRACT_GAP_UNCLASSIFIED", "temporal_tariff"], 1, 1),
    group(["MISSING_ROLE", "percent_partition"], 1, 1),
    group(["MISSING_ROLE", "quantity_entity_binding"], 1, 1),
    group(["UNIT_OBJECT_CONFLICT", "unary_delta_transition"], 1, 1),
    group(["UNSUPPORTED_TOPOLOGY", "percent_partition"], 1, 1),
    group(["UNSUPPORTED_TOPOLOGY", "unary_delta_transition"], 1, 1),
]

GROUPS = """query($by: [ResidualDimension!]!, $filter: ResidualFilter, $first: Int,
               $asOf: LogIndex) {
  residualGroups(by: $by, filter: $filter, first: $first, asOf: $asOf) {
    by total occurrences groupCount hasMore groups { values count occurrences } } }"""


def test_residuals_per_kind_and_organ(example_url: str) -> None:
    found = data(example_url, GROUPS, by=["KIND", "ORGAN"])["residualGroups"]
    assert found == {"by": ["KIND", "ORGAN"], "total": 12, "occurrences": 13, "groupCount": 8,
                     "hasMore": False, "groups": KIND_BY_ORGAN}


def test_one_dimension_is_the_facet(example_url: str) -> None:
    found = data(example_url, GROUPS, by=["KIND"])["residualGroups"]["groups"]
    assert found == [group([f["value"]], f["count"], f["occurrences"])
                     for f in graphql_facets(FACETS_ALL)["byKind"]]  # type: ignore[index]


def test_first_caps_the_groups_and_says_there_are_more(example_url: str) -> None:
    found = data(example_url, GROUPS, by=["KIND", "ORGAN"], first=2)["residualGroups"]
    assert found["groups"] == KIND_BY_ORGAN[:2]
    assert (found["groupCount"], found["hasMore"], found["total"]) == (8, True, 12)


def test_first_zero_gives_the_totals_alone(example_url: str) -> None:
    found = data(example_url, GROUPS, by=["KIND", "ORGAN"], first=0)["residualGroups"]
    assert found == {"by": ["KIND", "ORGAN"], "total": 12, "occurrences": 13, "groupCount": 8,
                     "hasMore": True, "groups": []}


def test_a_filter_narrows_the_groups(example_url: str) -> None:
    found = data(example_url, GROUPS, by=["ORGAN"],
                 filter={"kind": ["UNSUPPORTED_TOPOLOGY"]})["residualGroups"]["groups"]
    assert found == [group(["percent_partition"], 1, 1), group(["unary_delta_transition"], 1, 1)]


def test_as_of_the_first_batch(example_url: str) -> None:
    # Batch 1 is adr_0225_frames.jsonl: 5 assessments + 6 residuals + 6 occurrences + its
    # batch row = 18 leaves ("Sam gained pears.", the second sighting, is batch 2's).
    found = data(example_url, GROUPS, by=["FAMILY"], asOf=18)["residualGroups"]
    assert (found["total"], found["occurrences"]) == (6, 6)


def test_a_day_histogram_by_ingest_time(example_url: str) -> None:
    days = data(example_url, """{ batches(first: 10) { nodes { ingestedAt } } }""")
    day = days["batches"]["nodes"][0]["ingestedAt"][:10]
    if any(n["ingestedAt"][:10] != day for n in days["batches"]["nodes"]):
        pytest.skip("the example batches were ingested across midnight")
    found = data(example_url, GROUPS, by=["INGEST_DAY", "KIND"])["residualGroups"]
    assert [g["values"][0] for g in found["groups"]] == [day] * 4
    assert [g["values"][1] for g in found["groups"]] == [
        "MISSING_ROLE", "UNSUPPORTED_TOPOLOGY", "CONTRACT_GAP_UNCLASSIFIED",
        "UNIT_OBJECT_CONFLICT"]


@pytest.mark.parametrize(("by", "message"), [
    ([], "by: between 1 and 3 dimensions, got 0"),
    (["KIND", "AXIS", "ORGAN", "CODE"], "by: between 1 and 3 dimensions, got 4"),
    (["KIND", "KIND"], "by: a dimension given twice: KIND, KIND"),
])
def test_bad_dimensions_are_named(example_url: str, by: list[str], message: str) -> None:
    result = run(example_url, GROUPS, by=by)
    assert [e["message"] for e in result["errors"]] == [message]


def test_first_past_the_cap_is_refused(example_url: str) -> None:
    result = run(example_url, GROUPS, by=["KIND"], first=501)
    assert [e["message"] for e in result["errors"]] == [
        "first: must be between 0 and 500, got 501"]


def test_surfaces_group_too(example_url: str) -> None:
    # adr_0052_surfaces.jsonl: twelve surfaces, sixteen sightings.
    surfaces = data(example_url, """{ surfaceGroups(by: [GROUNDING_SOURCE]) {
        total occurrences groups { values count occurrences } } }""")["surfaceGroups"]
    assert (surfaces["total"], surfaces["occurrences"]) == (12, 16)


def test_turns_group_too(journal_db: AuditStore) -> None:
    # Batch 4, the Workbench journal: six turns, each of kind workbench_journal.
    result = asyncio.run(execute_operation(journal_db, """{ turnGroups(by: [KIND]) {
        total groups { values count } } }""", None, None))
    assert result == {"data": {"turnGroups": {"total": 6, "groups": [
        {"values": ["WORKBENCH_JOURNAL"], "count": 6}]}}}


@pytest.mark.parametrize(("at", "bucket", "expected"), [
    ("2026-12-06T07:07:09.702915Z", TimeBucket.HOUR, "2026-12-06T07"),
    ("2026-12-06T07:07:09.702915Z", TimeBucket.DAY, "2026-12-06"),
    ("2026-12-06T07:07:09.702915Z", TimeBucket.MONTH, "2026-12"),
    # ISO 8601 weeks start on Monday: Sunday 6 December 2026 is in the week of Monday the 30th.
    ("2026-12-06T07:07:09.702915Z", TimeBucket.WEEK, "2026-11-30"),
    ("2026-11-30T00:00:00.000000Z", TimeBucket.WEEK, "2026-11-30"),
    # Friday 1 January 2027: the week of Monday 28 December 2026, across the year.
    ("2027-01-01T23:59:59.999999Z", TimeBucket.WEEK, "2026-12-28"),
])
def test_time_buckets_on_both_backends(backend_url: str, at: str, bucket: TimeBucket,
                                       expected: str) -> None:
    with AuditStore.open(backend_url) as store, store.engine.connect() as connection:
        value = connection.execute(select(bucketed(literal(at), bucket,
                                                   connection.dialect.name))).scalar_one()
    assert str(value) == expected


# --- CORE's own time, prompts, sightings -----------------------------------------------------

TURN_GROUPS = """query($by: [TurnDimension!]!, $filter: TurnFilter) {
  turnGroups(by: $by, filter: $filter) { total groupCount groups { values count } } }"""
SURFACE_GROUPS = """query($by: [SurfaceDimension!]!, $filter: SurfaceFilter, $first: Int) {
  surfaceGroups(by: $by, filter: $filter, first: $first) {
    total occurrences groupCount groups { values count occurrences } } }"""


def turns_grouped(db: AuditStore, by: list[str], **filter: Any) -> dict[str, Any]:
    result = asyncio.run(execute_operation(db, TURN_GROUPS, {"by": by, "filter": filter}, None))
    assert result.get("errors") is None, result
    found: dict[str, Any] = result["data"]["turnGroups"]
    return found


def surfaces_grouped(db: AuditStore, by: list[str], first: int | None = None
                     ) -> dict[str, Any]:
    result = asyncio.run(execute_operation(db, SURFACE_GROUPS, {"by": by, "first": first},
                                           None))
    assert result.get("errors") is None, result
    found: dict[str, Any] = result["data"]["surfaceGroups"]
    return found


def counted(values: list[str | None], count: int) -> dict[str, Any]:
    return {"values": values, "count": count}


# The journal's six turns, CORE times 2026-07-30T18:01 to 18:06 UTC (a Thursday): turns 1, 2,
# 3 and 6 grounded by teaching, 4 by the pack, 5 by nothing; clearance violated for 1, 2, 4
# and 6, cleared for 3, suppressed for 5.
@pytest.mark.parametrize(("bucket", "value"), [
    ("CORE_HOUR", "2026-07-30T18"), ("CORE_DAY", "2026-07-30"),
    ("CORE_WEEK", "2026-07-27"), ("CORE_MONTH", "2026-07")])
def test_turns_per_core_time_bucket(journal_db: AuditStore, bucket: str, value: str) -> None:
    assert turns_grouped(journal_db, [bucket, "GROUNDING_SOURCE"]) == {
        "total": 6, "groupCount": 3, "groups": [
            counted([value, "TEACHING"], 4), counted([value, "NONE"], 1),
            counted([value, "PACK"], 1)]}


def test_core_time_is_the_turns_own_not_the_ingest(journal_db: AuditStore) -> None:
    # The journal was ingested today; CORE wrote its turns on 30 July 2026, and a window of
    # CORE time holds them: 18:02 to 18:04 is turns 2, 3 and 4.
    found = turns_grouped(journal_db, ["CORE_DAY", "CLEARANCE"],
                          timeFrom="2026-07-30T20:02:00+02:00",
                          timeTo="2026-07-30T18:04:00+00:00")
    assert found == {"total": 3, "groupCount": 2, "groups": [
        counted(["2026-07-30", "VIOLATED"], 2), counted(["2026-07-30", "CLEARED"], 1)]}


def test_teaching_chains_and_the_surfaces_they_grounded(journal_db: AuditStore) -> None:
    # Turns 1, 2 and 3 emitted surfaces that re-derive from a chain (light's cause chain, the
    # knowledge chain behind the Workbench's "not geometrically certified" prefix, memory's
    # verification chain); turn 6's prose is teaching without a chain.
    found = turns_grouped(journal_db, ["CHAIN", "PROMPT"], groundingSource=["TEACHING"])
    assert found == {"total": 4, "groupCount": 4, "groups": [
        counted(["cause_knowledge_requires_evidence", "Why does knowledge require evidence?"],
                1),
        counted(["cause_light_reveals_truth", "Why does light exist?"], 1),
        counted(["verification_memory_requires_recall", "Does memory require recall?"], 1),
        counted([None, "Why does light exist, and why does it matter?"], 1)]}


def test_teaching_turns_with_a_violated_or_suppressed_clearance(journal_db: AuditStore
                                                                ) -> None:
    found = turns_grouped(journal_db, ["GROUNDING_SOURCE", "CLEARANCE"],
                          groundingSource=["TEACHING"],
                          normativeClearance=["VIOLATED", "SUPPRESSED"])
    assert found == {"total": 3, "groupCount": 1, "groups": [
        counted(["TEACHING", "VIOLATED"], 3)]}


def test_surfaces_per_prompt_count_distinct_surfaces(journal_db: AuditStore) -> None:
    # adr_0052_surfaces.jsonl: "Why does knowledge require evidence?" got a surface without a
    # chain (line 2) and one with (lines 7 and 15), and the journal's turn 2 a third (the
    # Workbench's prefix): 3 surfaces, 4 sightings. "What is knowledge?": the pack surface of
    # lines 5 and 14, and the journal's turn 4 a new record: 2 surfaces, 3 sightings. "Why
    # does light exist?": one surface, seen by lines 1 and 9 (line 16 repeats line 1's
    # sighting) and the journal's turn 1.
    found = surfaces_grouped(journal_db, ["PROMPT"], first=3)
    assert found == {"total": 16, "occurrences": 22, "groupCount": 13, "groups": [
        group(["Why does knowledge require evidence?"], 3, 4),
        group(["What is knowledge?"], 2, 3),
        group(["Why does light exist?"], 1, 3)]}


def test_a_surface_in_two_groups_is_one_surface_in_the_total(journal_db: AuditStore) -> None:
    # The journal's six sightings (six surfaces: light and memory seen again, four new) have
    # its turns' CORE time; the file's sixteen sightings of twelve surfaces have none. The
    # light and memory surfaces are in both groups: 18 in the groups, 16 surfaces in all.
    found = surfaces_grouped(journal_db, ["CORE_DAY"])
    assert found == {"total": 16, "occurrences": 22, "groupCount": 2, "groups": [
        group([None], 12, 16), group(["2026-07-30"], 6, 6)]}


@pytest.mark.parametrize(("at", "bucket", "expected"), [
    # An offset east of UTC: 01:30+02:00 on the 7th is 23:30 UTC on Sunday the 6th.
    ("2026-12-07T01:30:00+02:00", TimeBucket.HOUR, "2026-12-06T23"),
    ("2026-12-07T01:30:00+02:00", TimeBucket.DAY, "2026-12-06"),
    ("2026-12-07T01:30:00+02:00", TimeBucket.WEEK, "2026-11-30"),
    ("2026-12-07T01:30:00+02:00", TimeBucket.MONTH, "2026-12"),
    # Friday 1 January 2027, late, west of UTC: Saturday the 2nd in UTC, week of 28 December.
    ("2027-01-01T22:00:00-05:00", TimeBucket.DAY, "2027-01-02"),
    ("2027-01-01T22:00:00-05:00", TimeBucket.WEEK, "2026-12-28"),
    # Before the Unix epoch.
    ("1969-12-31T23:59:59.999999+00:00", TimeBucket.HOUR, "1969-12-31T23"),
])
def test_core_time_buckets_on_both_backends(backend_url: str, at: str, bucket: TimeBucket,
                                            expected: str) -> None:
    micros = core_time(at)
    with AuditStore.open(backend_url) as store, store.engine.connect() as connection:
        value = connection.execute(select(core_bucketed(
            literal(micros, BigInteger), bucket, connection.dialect.name))).scalar_one()
    assert str(value) == expected


# --- a CORE-time histogram, counted range by range --------------------------------------------

HISTOGRAM = """query($by: [TurnDimension!]!, $filter: TurnFilter, $asOf: LogIndex) {
  turnGroups(by: $by, filter: $filter, asOf: $asOf) {
    total occurrences groupCount hasMore groups { values count occurrences } } }"""


def histogram(db: AuditStore, bucket: str, **arguments: Any) -> dict[str, Any]:
    result = asyncio.run(execute_operation(db, HISTOGRAM, {"by": [bucket], **arguments},
                                           None))
    assert result.get("errors") is None, result
    found: dict[str, Any] = result["data"]["turnGroups"]
    return found


def test_a_histogram_of_chat_turns_without_a_time_and_journal_turns(
        example_store_url: str) -> None:
    # Two ChatRuntime outputs (no timestamp: no CORE time) and the journal's six turns, all
    # in the hour 18 UTC of 30 July 2026; a third output at 23:30-02:00, i.e. 01:30 UTC on
    # Friday 31 July.
    outputs = [json.dumps({"prompt": prompt, "surface": "I don't know.",
                           "grounding_source": "none", "epistemic_state": "undetermined",
                           **extra}).encode() + b"\n"
               for prompt, extra in (("one", {}), ("two", {}),
                                     ("three", {"timestamp": "2026-07-30T23:30:00-02:00"}))]
    with AuditStore.open(example_store_url) as store:
        store.ingest(JOURNAL_LINES, source="workbench_turn_journal.jsonl")
        store.ingest(outputs, source="chat.jsonl")
    with AuditStore.open(example_store_url, read_only=True) as db:
        day = histogram(db, "CORE_DAY")
        hour = histogram(db, "CORE_HOUR")
        # The general grouping (a filter that keeps every turn) counts the same.
        general = histogram(db, "CORE_DAY", filter={"batchIdFrom": 1})
        # As of the journal's batch (head 83), before the chat outputs.
        before = histogram(db, "CORE_WEEK", asOf=83)
    assert day == {"total": 9, "occurrences": 9, "groupCount": 3, "hasMore": False, "groups": [
        group(["2026-07-30"], 6, 6), group([None], 2, 2), group(["2026-07-31"], 1, 1)]}
    assert general == day
    assert hour["groups"] == [group(["2026-07-30T18"], 6, 6), group([None], 2, 2),
                              group(["2026-07-31T01"], 1, 1)]
    assert before == {"total": 6, "occurrences": 6, "groupCount": 1, "hasMore": False,
                      "groups": [group(["2026-07-27"], 6, 6)]}
