"""Every facet a page at a time (`facet(field, first, after)`), and the null value a facet
gives, pasted into its filter, selecting the records without a value — on both backends.

The `journal_db` store (tests/conftest.py): the example residuals (spec_values.FACETS_ALL:
12 codes, one residual each; temporal_tariff's residual has no family) and surfaces
(spec_surfaces.SURFACES), then the Workbench journal as batch 4 (tree heads in HEADS).
"""

from __future__ import annotations

from typing import Any

from graphql_requests import graphql_data, graphql_errors
from spec_values import FACETS_ALL, HEADS, facet
from starlette.testclient import TestClient

CODE_PAGE = """query($first: Int, $after: String) { residualFacets {
  facet(field: CODE, first: $first, after: $after) {
    field valueCount hasMore endCursor values { value count occurrences } } } }"""

# Every code is one residual: by count (all 1), then by code.
CODES_SORTED = sorted(f["value"] for f in FACETS_ALL["byCode"])  # type: ignore[attr-defined]


def code_page(client: TestClient, **variables: Any) -> dict[str, Any]:
    return graphql_data(client, CODE_PAGE, **variables)["residualFacets"]["facet"]


def test_the_code_facet_pages_through_all_twelve_codes(journal_client: TestClient) -> None:
    first = code_page(journal_client, first=5)
    assert first["field"] == "code"
    assert [v["value"] for v in first["values"]] == CODES_SORTED[:5] == [
        "action_cue_unbound", "base_quantity_unbound", "changed_object_unbound",
        "delta_quantity_unbound", "direction_unbound"]
    assert first["values"][3] == facet("delta_quantity_unbound", 1, 2)
    assert (first["valueCount"], first["hasMore"]) == (12, True)
    second = code_page(journal_client, first=5, after=first["endCursor"])
    assert [v["value"] for v in second["values"]] == CODES_SORTED[5:10]
    last = code_page(journal_client, first=5, after=second["endCursor"])
    assert [v["value"] for v in last["values"]] == [
        "unbound_base_quantity", "unit_object_conflict"]
    assert (last["valueCount"], last["hasMore"], last["endCursor"]) == (12, False, None)


def test_a_facet_by_default_is_fifty_values_and_follows_as_of(
        journal_client: TestClient) -> None:
    found = graphql_data(journal_client, """query($asOf: LogIndex) {
      now: residualFacets { facet(field: CODE) { valueCount hasMore values { value } } }
      then: residualFacets(asOf: $asOf) { facet(field: CODE) { valueCount } } }""",
                         asOf=HEADS[1])
    assert found["now"]["facet"]["valueCount"] == 12
    assert len(found["now"]["facet"]["values"]) == 12
    assert found["now"]["facet"]["hasMore"] is False
    assert found["then"]["facet"]["valueCount"] == 6  # batch 1 stored six codes


def test_the_null_family_is_counted_last_and_selects_the_residual_without_one(
        journal_client: TestClient) -> None:
    page = graphql_data(journal_client, """{ residualFacets {
        facet(field: FAMILY_ID) { values { value count } } } }""")["residualFacets"]["facet"]
    assert page["values"][-1] == {"value": None, "count": 1}
    found = graphql_data(journal_client, """{
      none: residuals(filter: {familyId: [null]}) { totalCount nodes { residualCode } }
      noneOrBinding: residualFacets(filter: {familyId: [null, "binding.quantity_entity"]}) {
        total byOrgan { value count } } }""")
    assert found["none"] == {"totalCount": 1, "nodes": [{"residualCode": "unbound_base_quantity"}]}
    assert found["noneOrBinding"]["total"] == 2
    assert found["noneOrBinding"]["byOrgan"] == [
        {"value": "quantity_entity_binding", "count": 1}, {"value": "temporal_tariff", "count": 1}]


def test_surface_subjects_page_and_a_null_corpus_selects_the_untaught(
        journal_client: TestClient) -> None:
    query = """query($after: String) { surfaceFacets(filter: {batchIdTo: 3}) {
        facet(field: SUBJECT, first: 2, after: $after) {
          valueCount hasMore endCursor values { value count occurrences } } } }"""
    first = graphql_data(journal_client, query)["surfaceFacets"]["facet"]
    # spec_surfaces.SURFACES: knowledge 4 surfaces (2+2+1+1 turns), memory 3 (1+1+1).
    assert first["values"] == [facet("knowledge", 4, 6), facet("memory", 3, 3)]
    assert (first["valueCount"], first["hasMore"]) == (6, True)
    second = graphql_data(journal_client, query, after=first["endCursor"])["surfaceFacets"]
    assert second["facet"]["values"] == [facet("light", 2, 3), facet("correction", 1, 2)]
    untaught = graphql_data(journal_client, """{
      surfaces(filter: {corpusId: [null], batchIdTo: 3}) { totalCount }
      surfaceFacets(filter: {batchIdTo: 3}) {
        facet(field: CORPUS_ID) { values { value count occurrences } } } }""")
    # spec_surfaces.SURFACE_FACETS_ALL["byCorpus"]: every source but teaching has none.
    assert untaught["surfaces"]["totalCount"] == 7
    assert untaught["surfaceFacets"]["facet"]["values"][0] == facet(None, 7, 9)


def test_an_enum_facet_page_gives_graphql_names(journal_client: TestClient) -> None:
    page = graphql_data(journal_client, """{ surfaceFacets(filter: {batchIdTo: 3}) {
        facet(field: VERIFICATION) { field values { value count } } } }""")["surfaceFacets"]
    assert page["facet"]["field"] == "verification"
    assert page["facet"]["values"] == [
        {"value": "NOT_CHECKED", "count": 7}, {"value": "VERIFIED", "count": 3},
        {"value": "MISMATCH", "count": 1}, {"value": "UNRESOLVABLE", "count": 1}]


def test_turn_facets_by_journal_and_kind(journal_client: TestClient) -> None:
    found = graphql_data(journal_client, """{ turnFacets {
        total byKind { value count } byTraceIntegrity { value count }
        facet(field: JOURNAL) { valueCount values { value count } } } }""")["turnFacets"]
    # The store's turns are the journal's six lines (the surfaces file records sightings).
    assert found["byKind"] == [{"value": "WORKBENCH_JOURNAL", "count": 6}]
    assert sum(v["count"] for v in found["byTraceIntegrity"]) == 6
    assert found["facet"]["valueCount"] == 1
    (journal,) = found["facet"]["values"]
    assert journal["count"] == 6
    selected = graphql_data(journal_client, """query($j: ID) {
        inJournal: turns(filter: {journal: [$j]}) { totalCount }
        outside: turns(filter: {journal: [null]}) { totalCount } }""", j=journal["value"])
    assert (selected["inJournal"]["totalCount"], selected["outside"]["totalCount"]) == (6, 0)


def test_a_malformed_facet_cursor_is_refused(journal_client: TestClient) -> None:
    assert graphql_errors(journal_client, """{ residualFacets {
        facet(field: CODE, after: "c2VxOjE=") { valueCount } } }""") == [
        "after: malformed facet cursor (use a facet's endCursor)"]


def test_a_facet_page_alone_reads_the_same_as_beside_the_lists(
        journal_client: TestClient) -> None:
    alone = graphql_data(journal_client, """{ residualFacets(filter: {axis: [ROLE]}) {
        facet(field: ORGAN) { valueCount values { value count occurrences } } } }""")
    beside = graphql_data(journal_client, """{ residualFacets(filter: {axis: [ROLE]}) {
        total facet(field: ORGAN) { valueCount values { value count occurrences } } } }""")
    assert alone["residualFacets"]["facet"] == beside["residualFacets"]["facet"]
    # The eight role residuals (spec_values.MISSING_ROLE_CODES): four of "Tom gained 3." and
    # "Tom gained apples." (seen again), two of the price, one each of the students and Mia.
    assert alone["residualFacets"]["facet"]["values"] == [
        facet("unary_delta_transition", 4, 5), facet("fraction_decrease", 2, 2),
        facet("percent_partition", 1, 1), facet("quantity_entity_binding", 1, 1)]
    assert graphql_errors(journal_client, """{ residualFacets(asOf: 19) {
        facet(field: ORGAN) { valueCount } } }""")[0].startswith("asOf: ")


def test_a_facet_page_over_a_range_counts_as_the_facet_lists_do(
        journal_client: TestClient) -> None:
    """Over a batch range, the records the range's batches first stored and the sightings
    they recorded (docs/graphql.md, "Orders, backwards pages, ranges")."""
    found = graphql_data(journal_client, """{
      residualFacets(filter: {batchIdFrom: 2, batchIdTo: 2}) {
        byCode { value count occurrences }
        facet(field: CODE, first: 500) { values { value count occurrences } } }
      surfaceFacets(filter: {batchIdFrom: 4, batchIdTo: 4}) {
        total occurrences byCorpus { value count occurrences }
        facet(field: CORPUS_ID) { values { value count occurrences } } } }""")
    residual = found["residualFacets"]
    assert residual["facet"]["values"] == residual["byCode"]
    # Batch 2 saw "Tom gained apples." again ("Sam gained pears."): a sighting, no record.
    assert facet("delta_quantity_unbound", 0, 1) in residual["facet"]["values"]
    surface = found["surfaceFacets"]
    assert (surface["total"], surface["occurrences"]) == (4, 6)
    assert surface["facet"]["values"] == surface["byCorpus"]


def test_the_journal_facet_follows_the_filter_the_range_and_as_of(
        journal_client: TestClient) -> None:
    found = graphql_data(journal_client, """query($asOf: LogIndex) {
      inBatch4: turnFacets(filter: {batchIdFrom: 4}) { facet(field: JOURNAL) { valueCount
        values { count } } }
      beforeIt: turnFacets(filter: {batchIdTo: 3}) { facet(field: JOURNAL) { valueCount } }
      then: turnFacets(asOf: $asOf) { facet(field: JOURNAL) { valueCount } }
      teaching: turnFacets(filter: {groundingSource: [TEACHING]}) {
        total facet(field: JOURNAL) { values { count } } }
      late: turnFacets(filter: {timeFrom: "2100-01-01T00:00:00+00:00"}) {
        facet(field: JOURNAL) { valueCount } } }""", asOf=HEADS[3])
    # The journal is batch 4: six turns, four of them grounded by teaching (1, 2, 3, 6).
    assert found["inBatch4"]["facet"] == {"valueCount": 1, "values": [{"count": 6}]}
    assert found["beforeIt"]["facet"]["valueCount"] == 0
    assert found["then"]["facet"]["valueCount"] == 0
    assert found["teaching"]["total"] == 4
    assert found["teaching"]["facet"]["values"] == [{"count": 4}]
    assert found["late"]["facet"]["valueCount"] == 0


def test_surfaces_by_the_pack_they_were_checked_against(journal_client: TestClient) -> None:
    found = graphql_data(journal_client, """{
      surfaceFacets(filter: {batchIdTo: 3}) {
        facet(field: PACK_ID) { field values { value count } } }
      unchecked: surfaces(filter: {batchIdTo: 3, packId: [null]}) { totalCount }
      sample: surfaces(filter: {batchIdTo: 3, packVersion: ["1.0.0-sample"]}) {
        nodes { corpusId } } }""")
    # The examples' cognition_chains_v1 surfaces (spec_surfaces.SURFACE_FACETS_ALL: four)
    # were checked against the repository's sample pack; the other eight against none.
    assert found["surfaceFacets"]["facet"] == {"field": "packId", "values": [
        {"value": None, "count": 8}, {"value": "sample_en_cognition_v1", "count": 4}]}
    assert found["unchecked"]["totalCount"] == 8
    assert [n["corpusId"] for n in found["sample"]["nodes"]] == ["cognition_chains_v1"] * 4
