"""Groups: `residualGroups`, `surfaceGroups`, `turnGroups` count records per combination of up
to three dimensions, largest first, capped — the auditor's "how often was each kind seen, per
organ, per day" in one query. Expected counts are the ADR-0225 examples', worked out by hand
below from what each example frame refuses (tests/spec_values.py lists the codes)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from spec_values import FACETS_ALL
from sqlalchemy import literal, select

from store.api.execution import execute_operation
from store.db.audit_store import AuditStore
from store.db.queries.groups import TimeBucket, bucketed


def run(url: str, document: str, **variables: Any) -> dict[str, Any]:
    with AuditStore.open(url, read_only=True) as store:
        return asyncio.run(execute_operation(store, document, variables or None, None))


def data(url: str, document: str, **variables: Any) -> dict[str, Any]:
    result = run(url, document, **variables)
    assert result.get("errors") is None, result
    return result["data"]


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
    group(["missing_role", "unary_delta_transition"], 4, 5),
    group(["missing_role", "fraction_decrease"], 2, 2),
    group(["contract_gap_unclassified", "temporal_tariff"], 1, 1),
    group(["missing_role", "percent_partition"], 1, 1),
    group(["missing_role", "quantity_entity_binding"], 1, 1),
    group(["unit_object_conflict", "unary_delta_transition"], 1, 1),
    group(["unsupported_topology", "percent_partition"], 1, 1),
    group(["unsupported_topology", "unary_delta_transition"], 1, 1),
]

GROUPS = """query($by: [ResidualDimension!]!, $filter: ResidualFilter, $first: Int, $asOf: Int) {
  residualGroups(by: $by, filter: $filter, first: $first, asOf: $asOf) {
    by total occurrences groupCount hasMore groups { values count occurrences } } }"""


def test_residuals_per_kind_and_organ(example_store_url: str) -> None:
    found = data(example_store_url, GROUPS, by=["KIND", "ORGAN"])["residualGroups"]
    assert found == {"by": ["KIND", "ORGAN"], "total": 12, "occurrences": 13, "groupCount": 8,
                     "hasMore": False, "groups": KIND_BY_ORGAN}


def test_one_dimension_is_the_facet(example_store_url: str) -> None:
    found = data(example_store_url, GROUPS, by=["KIND"])["residualGroups"]["groups"]
    assert found == [group([f["value"]], f["count"], f["occurrences"])
                     for f in FACETS_ALL["byKind"]]  # type: ignore[index]


def test_first_caps_the_groups_and_says_there_are_more(example_store_url: str) -> None:
    found = data(example_store_url, GROUPS, by=["KIND", "ORGAN"], first=2)["residualGroups"]
    assert found["groups"] == KIND_BY_ORGAN[:2]
    assert (found["groupCount"], found["hasMore"], found["total"]) == (8, True, 12)


def test_a_filter_narrows_the_groups(example_store_url: str) -> None:
    found = data(example_store_url, GROUPS, by=["ORGAN"],
                 filter={"kind": ["UNSUPPORTED_TOPOLOGY"]})["residualGroups"]["groups"]
    assert found == [group(["percent_partition"], 1, 1), group(["unary_delta_transition"], 1, 1)]


def test_as_of_the_first_batch(example_store_url: str) -> None:
    # Batch 1 is adr_0225_frames.jsonl: 5 assessments + 6 residuals + 6 occurrences + its
    # batch row = 18 leaves ("Sam gained pears.", the second sighting, is batch 2's).
    found = data(example_store_url, GROUPS, by=["FAMILY"], asOf=18)["residualGroups"]
    assert (found["total"], found["occurrences"]) == (6, 6)


def test_a_day_histogram_by_ingest_time(example_store_url: str) -> None:
    days = data(example_store_url, """{ batches(first: 10) { nodes { ingestedAt } } }""")
    day = days["batches"]["nodes"][0]["ingestedAt"][:10]
    if any(n["ingestedAt"][:10] != day for n in days["batches"]["nodes"]):
        pytest.skip("the example batches were ingested across midnight")
    found = data(example_store_url, GROUPS, by=["INGEST_DAY", "KIND"])["residualGroups"]
    assert [g["values"][0] for g in found["groups"]] == [day] * 4
    assert [g["values"][1] for g in found["groups"]] == [
        "missing_role", "unsupported_topology", "contract_gap_unclassified",
        "unit_object_conflict"]


@pytest.mark.parametrize(("by", "message"), [
    ([], "by: between 1 and 3 dimensions, got 0"),
    (["KIND", "AXIS", "ORGAN", "CODE"], "by: between 1 and 3 dimensions, got 4"),
    (["KIND", "KIND"], "by: a dimension given twice: KIND, KIND"),
])
def test_bad_dimensions_are_named(example_store_url: str, by: list[str], message: str) -> None:
    result = run(example_store_url, GROUPS, by=by)
    assert [e["message"] for e in result["errors"]] == [message]


def test_first_past_the_cap_is_refused(example_store_url: str) -> None:
    result = run(example_store_url, GROUPS, by=["KIND"], first=501)
    assert [e["message"] for e in result["errors"]] == [
        "first: must be between 0 and 500, got 501"]


def test_surfaces_group_too(example_store_url: str) -> None:
    # adr_0052_surfaces.jsonl: twelve surfaces, sixteen sightings.
    surfaces = data(example_store_url, """{ surfaceGroups(by: [GROUNDING_SOURCE]) {
        total occurrences groups { values count occurrences } } }""")["surfaceGroups"]
    assert (surfaces["total"], surfaces["occurrences"]) == (12, 16)


def test_turns_group_too(journal_db: AuditStore) -> None:
    # Batch 4, the Workbench journal: six turns, each of kind workbench_journal.
    result = asyncio.run(execute_operation(journal_db, """{ turnGroups(by: [KIND]) {
        total groups { values count } } }""", None, None))
    assert result == {"data": {"turnGroups": {"total": 6, "groups": [
        {"values": ["workbench_journal"], "count": 6}]}}}


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
