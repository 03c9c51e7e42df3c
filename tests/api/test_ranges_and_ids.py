"""Facets over a range count as residualFacets do, every record filter takes a list of ids
(capped like a page), and a facet's value pasted into a filter selects its records.

Counts are made by hand from examples/workbench_turn_journal.jsonl (batch 4 of `journal_db`):
six turns — 1 light (teaching, violated; its surface stored in batch 3), 2 knowledge
(teaching, violated; new), 3 memory (teaching, cleared; stored in batch 3), 4 knowledge
(pack, violated; new), 5 zorp (none, suppressed; new), 6 light and truth (teaching,
violated; new).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from graphql_requests import graphql_data, post_graphql
from starlette.testclient import TestClient

BATCH_4 = {"batchIdFrom": 4, "batchIdTo": 4}


def test_surface_facets_over_a_batch_count_its_new_surfaces_and_its_sightings(
        journal_client: TestClient) -> None:
    facets = graphql_data(journal_client, """query ($f: SurfaceFilter) {
        surfaceFacets(filter: $f) {
            total occurrences byGroundingSource { value count occurrences } } }""",
                          f=BATCH_4)["surfaceFacets"]
    # Four surfaces first stored (2 teaching, 1 pack, 1 none); six sightings recorded (the
    # light and memory surfaces seen again add sightings to TEACHING, not surfaces).
    assert facets == {"total": 4, "occurrences": 6, "byGroundingSource": [
        {"value": "TEACHING", "count": 2, "occurrences": 4},
        {"value": "NONE", "count": 1, "occurrences": 1},
        {"value": "PACK", "count": 1, "occurrences": 1}]}
    # The list over the range: the four surfaces batch 4 first stored.
    listed = graphql_data(journal_client, "query ($f: SurfaceFilter) { surfaces(filter: $f) "
                                          "{ totalCount } }", f=BATCH_4)
    assert listed["surfaces"]["totalCount"] == 4


def test_an_ingest_time_range_counts_as_its_batch_range(journal_client: TestClient) -> None:
    batches = graphql_data(journal_client, "{ batches(order: NEWEST_FIRST, first: 2) "
                                           "{ nodes { batchId ingestedAt } } }")
    newest, before = batches["batches"]["nodes"]
    assert newest["batchId"] == 4
    if newest["ingestedAt"] == before["ingestedAt"]:
        pytest.skip("batches 3 and 4 were ingested within the same microsecond")
    by_time = {"ingestedFrom": newest["ingestedAt"], "ingestedTo": newest["ingestedAt"]}
    query = """query ($f: SurfaceFilter, $t: TurnFilter) {
        surfaceFacets(filter: $f) { total occurrences }
        turnFacets(filter: $t) { total } }"""
    assert graphql_data(journal_client, query, f=by_time, t=by_time) == {
        "surfaceFacets": {"total": 4, "occurrences": 6}, "turnFacets": {"total": 6}}


def test_turn_facets_over_a_batch_count_its_turns(journal_client: TestClient) -> None:
    facets = graphql_data(journal_client, """query ($f: TurnFilter) { turnFacets(filter: $f) {
        total byGroundingSource { value count } byNormativeClearance { value count }
        byEpistemicState { value count } } }""", f=BATCH_4)["turnFacets"]
    assert facets == {
        "total": 6,
        "byGroundingSource": [{"value": "TEACHING", "count": 4}, {"value": "NONE", "count": 1},
                              {"value": "PACK", "count": 1}],
        "byNormativeClearance": [{"value": "VIOLATED", "count": 4},
                                 {"value": "CLEARED", "count": 1},
                                 {"value": "SUPPRESSED", "count": 1}],
        # epistemicState is a String filter: CORE's own spelling.
        "byEpistemicState": [{"value": "decoded", "count": 5},
                             {"value": "undetermined", "count": 1}]}


FACETS_AND_FILTERS = [
    ("residualFacets", "ResidualFilter", "residuals", {"byKind": "kind", "byAxis": "axis",
                                                        "byOrgan": "organ", "byCode": "code"}),
    ("surfaceFacets", "SurfaceFilter", "surfaces", {
        "byGroundingSource": "groundingSource", "byVerification": "verification",
        "byCorpus": "corpusId"}),
    ("turnFacets", "TurnFilter", "turns", {
        "byGroundingSource": "groundingSource", "byVerification": "verification",
        "byEpistemicState": "epistemicState", "byNormativeClearance": "normativeClearance"}),
]


@pytest.mark.parametrize(("facets", "filter_type", "listing", "fields"), FACETS_AND_FILTERS)
def test_a_facet_value_pasted_into_its_filter_selects_its_records(
        journal_client: TestClient, facets: str, filter_type: str, listing: str,
        fields: dict[str, str]) -> None:
    selection = " ".join(f"{name} {{ value count }}" for name in fields)
    found = graphql_data(journal_client, f"{{ {facets} {{ {selection} }} }}")[facets]
    query = (f"query ($f: {filter_type}) {{ {listing}(filter: $f) {{ totalCount }} }}")
    checked = 0
    for name, field in fields.items():
        for facet in found[name]:
            if facet["value"] is None:
                continue  # a null column: no filter value names it
            selected = graphql_data(journal_client, query, f={field: [facet["value"]]})
            assert selected[listing]["totalCount"] == facet["count"], (name, facet)
            checked += 1
    assert checked >= len(fields)


def ids_of(client: TestClient, listing: str, key: str) -> list[str]:
    page = graphql_data(client, f"{{ {listing}(first: 500) {{ nodes {{ {key} }} }} }}")
    return [node[key] for node in page[listing]["nodes"]]


@pytest.mark.parametrize(("listing", "filter_type", "key", "field"), [
    ("residuals", "ResidualFilter", "residualId", "residualId"),
    ("surfaces", "SurfaceFilter", "surfaceId", "surfaceId"),
    ("turns", "TurnFilter", "turnKey", "turnKey"),
    ("assessments", "AssessmentFilter", "assessmentId", "assessmentId"),
])
def test_every_record_filter_takes_a_list_of_ids(
        journal_client: TestClient, listing: str, filter_type: str, key: str,
        field: str) -> None:
    every = ids_of(journal_client, listing, key)
    wanted = [every[-1], every[0], "0" * 64]  # any order; an unknown id matches nothing
    query = (f"query ($f: {filter_type}) {{ {listing}(filter: $f) "
             f"{{ totalCount nodes {{ {key} }} }} }}")
    found = graphql_data(journal_client, query, f={field: wanted})[listing]
    assert found == {"totalCount": 2, "nodes": [{key: every[0]}, {key: every[-1]}]}
    # One static document serves any number of ids up to a page's worth...
    assert graphql_data(journal_client, query, f={field: every})[listing]["totalCount"] == len(
        every)
    # ...and past it, an error naming the cap.
    body = post_graphql(journal_client, query, f={field: ["0" * 64] * 501})
    assert [(e["extensions"]["code"], e["message"]) for e in body["errors"]] == [
        ("LIMIT_EXCEEDED", f"{field}: at most 500 ids (a page's worth), got 501: ask in pages")]


def test_residual_facets_of_a_few_ids(journal_client: TestClient) -> None:
    residuals = graphql_data(journal_client, """{ residuals(order: MOST_SEEN, first: 2) {
        nodes { residualId residualKind occurrenceCount } } }""")["residuals"]["nodes"]
    wanted: dict[str, Any] = {"residualId": [r["residualId"] for r in residuals]}
    facets = graphql_data(journal_client, """query ($f: ResidualFilter) {
        residualFacets(filter: $f) { total occurrences byKind { value count occurrences } }
        residuals(filter: $f) { totalCount } }""", f=wanted)
    assert facets["residuals"]["totalCount"] == 2
    assert facets["residualFacets"]["total"] == 2
    assert facets["residualFacets"]["occurrences"] == sum(
        r["occurrenceCount"] for r in residuals)
    by_kind: dict[str, list[int]] = {}
    for residual in residuals:
        counts = by_kind.setdefault(residual["residualKind"], [0, 0])
        counts[0] += 1
        counts[1] += residual["occurrenceCount"]
    assert {f["value"]: [f["count"], f["occurrences"]]
            for f in facets["residualFacets"]["byKind"]} == by_kind


@pytest.mark.parametrize(("spelled", "kind"), [
    ({"kind": ["MISSING_ROLE"], "axis": "ROLE"}, "GraphQL's names"),
    ({"kind": ["missing_role"], "axis": "role"}, "CORE's, as export writes them"),
])
def test_a_filter_read_from_json_takes_either_spelling(spelled: dict[str, Any],
                                                       kind: str) -> None:
    from store.api.filter_json import filter_from_json
    from store.db.queries import ResidualFilter
    from store.model.taxonomy import ResidualKind, ResidualSourceAxis

    found = filter_from_json(json.dumps({"kind": spelled["kind"],
                                         "axis": [spelled["axis"]]}), ResidualFilter)
    assert isinstance(found, ResidualFilter), kind
    assert (list(found.kind or []), list(found.axis or [])) == (
        [ResidualKind.MISSING_ROLE], [ResidualSourceAxis.ROLE])


def test_a_spelling_of_neither_is_refused() -> None:
    from store.api.filter_json import FilterInputError, filter_from_json
    from store.db.queries import ResidualFilter

    for wrong in ("Missing_Role", "missing-role", "MISSING_STUFF"):
        with pytest.raises(FilterInputError, match=r"ResidualFilter\.kind"):
            filter_from_json(json.dumps({"kind": [wrong]}), ResidualFilter)


def test_residual_groups_of_a_few_ids_count_as_their_facets(journal_client: TestClient) -> None:
    page = graphql_data(journal_client, "{ residuals(first: 3) { nodes { residualId } } }")
    ids = [r["residualId"] for r in page["residuals"]["nodes"]]
    found = graphql_data(journal_client, """query ($f: ResidualFilter) {
        residualGroups(by: [KIND], filter: $f) {
            total occurrences groups { values count occurrences } }
        residualFacets(filter: $f) { total occurrences byKind { value count occurrences } } }""",
                         f={"residualId": ids, "batchIdFrom": 1})
    facets = found["residualFacets"]
    assert found["residualGroups"]["total"] == facets["total"] == 3
    assert found["residualGroups"]["occurrences"] == facets["occurrences"]
    assert [[g["values"][0], g["count"], g["occurrences"]]
            for g in found["residualGroups"]["groups"]] == [
        [f["value"], f["count"], f["occurrences"]] for f in facets["byKind"]]
