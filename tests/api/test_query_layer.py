"""The query layer: filters, keyset pages, counts against direct SQL, facets, limits."""

from __future__ import annotations

import base64

import pytest
from backends import raw_query
from spec_values import (
    CODES_IN_APPEND_ORDER,
    DELTA_QUANTITY_ID,
    FACETS_ALL,
    MISSING_ROLE_CODES,
    TOTAL_ASSESSMENTS,
    TOTAL_BATCHES,
    TOTAL_OCCURRENCES,
    TOTAL_RESIDUALS,
)
from sqlalchemy import text
from sqlalchemy.exc import InternalError, OperationalError

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import AssessmentFilter, ResidualFilter
from store.db.schema.record_kinds import LEDGERED_KEYS
from store.model import taxonomy as taxonomy_model
from store.model.taxonomy import ResidualKind, ResidualSourceAxis


def codes(page: queries.Page[queries.StoredResidual]) -> list[str]:
    return [item.residual.residual_code for item in page.items]


def test_unfiltered_residuals_come_in_append_order(example_db: AuditStore) -> None:
    page = example_db.execute(queries.list_residuals)
    assert codes(page) == CODES_IN_APPEND_ORDER
    assert not page.has_next_page


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (ResidualFilter(kind=[ResidualKind.MISSING_ROLE]), MISSING_ROLE_CODES),
        (ResidualFilter(axis=[ResidualSourceAxis.TOPOLOGY]),
         ["passive_voice_unsupported", "inverse_topology_unlicensed"]),
        (ResidualFilter(organ=["fraction_decrease"]),
         ["base_quantity_unbound", "state_entity_unbound"]),
        (ResidualFilter(family_id=["partition.percent_partition"]),
         ["original_whole_unbound", "inverse_topology_unlicensed"]),
        (ResidualFilter(code=["unbound_base_quantity"]), ["unbound_base_quantity"]),
        (ResidualFilter(kind=[ResidualKind.CONTRACT_GAP_UNCLASSIFIED]),
         ["unbound_base_quantity"]),
        # Any-of within a field.
        (ResidualFilter(kind=[ResidualKind.UNIT_OBJECT_CONFLICT,
                              ResidualKind.CONTRACT_GAP_UNCLASSIFIED]),
         ["unit_object_conflict", "unbound_base_quantity"]),
        # ANDed across fields.
        (ResidualFilter(kind=[ResidualKind.MISSING_ROLE], organ=["unary_delta_transition"]),
         ["action_cue_unbound", "direction_unbound", "changed_object_unbound",
          "delta_quantity_unbound"]),
        (ResidualFilter(axis=[ResidualSourceAxis.TOPOLOGY], family_id=["state_change.unary_delta"],
                        code=["passive_voice_unsupported", "entity_unbound"]),
         ["passive_voice_unsupported"]),
        (ResidualFilter(kind=[ResidualKind.HAZARD_BLOCKED]), []),
        (ResidualFilter(kind=[], organ=[]), CODES_IN_APPEND_ORDER),  # [] = no constraint
    ],
)
def test_residual_filters(example_db: AuditStore, where: ResidualFilter,
                          expected: list[str]) -> None:
    assert codes(example_db.execute(queries.list_residuals, where)) == expected
    assert example_db.execute(queries.count_residuals, where) == len(expected)


@pytest.mark.parametrize("first", [1, 2, 5, 11, 12, 13])
def test_paging_returns_every_residual_exactly_once(example_db: AuditStore, first: int) -> None:
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        page = example_db.execute(queries.list_residuals, None, first, after)
        pages += 1
        seen.extend(codes(page))
        assert len(page.items) <= first
        if not page.has_next_page:
            break
        after = page.end_cursor
    assert seen == CODES_IN_APPEND_ORDER
    assert pages == max(1, -(-TOTAL_RESIDUALS // first))


def test_paging_assessments_batches_and_occurrences(example_db: AuditStore) -> None:
    def walk(query, *args):  # type: ignore[no-untyped-def]
        items, after = [], None
        while True:
            page = example_db.execute(query, *args, 1, after)
            items.extend(page.items)
            if not page.has_next_page:
                return items
            after = page.end_cursor

    assessments = walk(queries.list_assessments, None)
    assert len(assessments) == TOTAL_ASSESSMENTS
    assert len({a.assessment_id for a in assessments}) == TOTAL_ASSESSMENTS
    assert [b.batch_id for b in walk(queries.list_batches)] == [1, 2, 3]
    occurrences = walk(queries.list_occurrences, DELTA_QUANTITY_ID)
    assert [o.assessment.problem_text for o in occurrences] == [
        "Tom gained apples.", "Sam gained pears."]
    assert [o.assessment.source_ref for o in occurrences] == [
        "adr-0225:example-b", "families:unary-delta-repeat"]
    assert [o.assessment.batch.source for o in occurrences] == [
        "adr_0225_frames.jsonl", "core_frames_families.jsonl"]
    assert occurrences[0].assessment.assessment.explanation == (
        "diagnostic candidate is not runnable: delta_quantity_unbound")


def _direct(url: str, sql: str, *params: object) -> int:
    return raw_query(url, sql, *params)[0][0]  # type: ignore[return-value]


def test_counts_equal_direct_sql(example_db: AuditStore, example_store_url: str) -> None:
    url = example_store_url
    assert example_db.execute(queries.count_residuals) == _direct(
        url, "SELECT count(*) FROM contract_residuals") == TOTAL_RESIDUALS
    assert example_db.execute(
        queries.count_residuals, ResidualFilter(kind=[ResidualKind.MISSING_ROLE],
                                                organ=["unary_delta_transition"])
    ) == _direct(url, "SELECT count(*) FROM contract_residuals WHERE residual_kind = ?"
                      " AND candidate_organ = ?", "missing_role", "unary_delta_transition")
    assert example_db.execute(queries.count_assessments) == _direct(
        url, "SELECT count(*) FROM contract_assessments") == TOTAL_ASSESSMENTS
    assert example_db.execute(queries.count_assessments, AssessmentFilter(runnable=True)) == (
        _direct(url, "SELECT count(*) FROM contract_assessments WHERE runnable")) == 1
    assert example_db.execute(queries.count_batches) == _direct(
        url, "SELECT count(*) FROM ingest_batches") == TOTAL_BATCHES
    facets = example_db.execute(queries.residual_facets)
    assert facets.occurrences == _direct(
        url, "SELECT count(*) FROM residual_occurrences") == TOTAL_OCCURRENCES
    for kind in ResidualKind:
        expected = _direct(url, "SELECT count(*) FROM contract_residuals WHERE residual_kind = ?",
                           kind.value)
        found = {f.value: f.count for f in facets.by_kind}.get(kind.value, 0)
        assert found == expected
    status = example_db.execute(queries.ledger_status)
    assert status.tree_size == _direct(url, "SELECT max(tree_size) FROM tree_heads")
    assert status.tree_size == sum(_direct(url, f"SELECT count(*) FROM {t}")
                                   for t in LEDGERED_KEYS)  # one leaf a row


def test_residuals_carry_their_occurrence_counts(example_db: AuditStore) -> None:
    stored = example_db.execute(queries.residual_by_id, DELTA_QUANTITY_ID)
    assert stored is not None and stored.occurrence_count == 2
    page = example_db.execute(queries.list_residuals)
    assert sum(item.occurrence_count for item in page.items) == TOTAL_OCCURRENCES
    assert {item.residual.residual_id: item.occurrence_count for item in page.items}[
        DELTA_QUANTITY_ID] == 2


def test_facets_over_everything(example_db: AuditStore) -> None:
    facets = example_db.execute(queries.residual_facets)

    def rows(items: list[queries.FacetCount]) -> list[dict[str, object]]:
        return [{"value": f.value, "count": f.count, "occurrences": f.occurrences}
                for f in items]

    assert facets.total == FACETS_ALL["total"]
    assert facets.occurrences == FACETS_ALL["occurrences"]
    assert rows(facets.by_kind) == FACETS_ALL["byKind"]
    assert rows(facets.by_axis) == FACETS_ALL["byAxis"]
    assert rows(facets.by_organ) == FACETS_ALL["byOrgan"]
    assert rows(facets.by_family) == FACETS_ALL["byFamily"]
    assert rows(facets.by_code) == FACETS_ALL["byCode"]


def test_facets_honour_the_filter(example_db: AuditStore) -> None:
    facets = example_db.execute(
        queries.residual_facets, ResidualFilter(organ=["unary_delta_transition"]))
    assert (facets.total, facets.occurrences) == (6, 7)
    assert [(f.value, f.count, f.occurrences) for f in facets.by_kind] == [
        ("missing_role", 4, 5), ("unit_object_conflict", 1, 1), ("unsupported_topology", 1, 1)]
    empty = example_db.execute(
        queries.residual_facets, ResidualFilter(kind=[ResidualKind.HAZARD_BLOCKED]))
    assert (empty.total, empty.occurrences, empty.by_kind) == (0, 0, [])


def test_assessment_filters(example_db: AuditStore) -> None:
    def refs(where: AssessmentFilter) -> list[str | None]:
        return [a.source_ref for a in example_db.execute(queries.list_assessments, where).items]

    assert refs(AssessmentFilter(runnable=True)) == ["runnable-example"]
    assert refs(AssessmentFilter(family_id=["binding.quantity_entity"])) == [
        "families:quantity-entity"]
    assert refs(AssessmentFilter(organ=["unary_delta_transition"], batch_id=[2])) == [
        "families:unary-delta-repeat"]
    assert refs(AssessmentFilter(source_ref=["adr-0225:example-c"], runnable=False)) == [
        "adr-0225:example-c"]


@pytest.mark.parametrize(
    "cursor",
    ["", "not base64!", "zzz", base64.b64encode(b"seq:").decode(),
     base64.b64encode(b"seq:-1").decode(), base64.b64encode(b"id:12").decode(),
     base64.b64encode(b"\xff\xfe").decode(), "c2VxOjE=\x00"],
)
def test_malformed_cursor_is_a_cursor_error(example_db: AuditStore, cursor: str) -> None:
    with pytest.raises(queries.CursorError, match="malformed cursor"):
        example_db.execute(queries.list_residuals, None, 5, cursor)
    assert issubclass(queries.CursorError, ValueError)


@pytest.mark.parametrize("text", ["seq:2147483648", "newest:99999", "seen:1:9223372036854775807"])
def test_a_cursor_past_the_newest_row_is_an_error_not_an_empty_page(
        example_db: AuditStore, text: str) -> None:
    cursor = base64.urlsafe_b64encode(text.encode()).decode()
    order = {"seq": None, "newest": queries.Order.NEWEST_FIRST,
             "seen": queries.Order.MOST_SEEN}[text.split(":")[0]]
    seq = text.rsplit(":", 1)[1]
    with pytest.raises(queries.CursorError, match=(
            f"after: the cursor points at seq {seq}, past the log's newest row")):
        if order is None:
            example_db.execute(queries.list_residuals, None, 5, cursor)
        else:
            example_db.execute(queries.list_residuals, None, 5, cursor, order=order)


@pytest.mark.parametrize("first", [-1, 501, 10_000])
def test_page_size_out_of_range(example_db: AuditStore, first: int) -> None:
    with pytest.raises(queries.PageSizeError, match="between 0 and 500"):
        example_db.execute(queries.list_residuals, None, first)


def test_page_size_bounds_are_accepted(example_db: AuditStore) -> None:
    assert example_db.execute(queries.list_residuals, None, 0).items == []
    assert example_db.execute(queries.list_residuals, None, 0).has_next_page
    assert len(example_db.execute(queries.list_residuals, None, 500).items) == TOTAL_RESIDUALS


def test_cursor_round_trip() -> None:
    assert queries.decode_cursor(queries.encode_cursor(123)) == 123
    assert base64.b64decode(queries.encode_cursor(123)) == b"seq:123"


def test_taxonomy_is_the_closed_set() -> None:
    taxonomy = taxonomy_model.taxonomy()
    assert len(taxonomy.kinds) == 12
    assert len(taxonomy.axes) == 10
    assert len(taxonomy.labels) == 46  # the ADR table's 50 rows hold 46 distinct labels


RUNAWAY = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"


def test_time_limit_aborts_a_runaway_query(example_db: AuditStore) -> None:
    example_db.time_limit = 0.2
    with pytest.raises(queries.QueryTimeout, match="time limit"):
        example_db.execute(lambda connection: connection.execute(text(RUNAWAY)).scalar_one())
    # The pooled connection is usable afterwards: the handler was removed.
    example_db.time_limit = 30
    assert example_db.execute(queries.count_residuals) == TOTAL_RESIDUALS


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO ingest_batches VALUES (99, 999, 's', 'h', 't', 0, 0, 0, 0, 'now', 'v')",
        "UPDATE contract_residuals SET explanation = 'x'",
        "DELETE FROM tree_heads",
        "CREATE TABLE intruder (x integer)",
        "CREATE INDEX ix_intruder ON tree_heads (root_hash)",
    ],
)
def test_database_cannot_write(example_db: AuditStore, example_store_url: str,
                               statement: str) -> None:
    before = _direct(example_store_url, "SELECT count(*) FROM tree_heads")
    # SQLite: mode=ro (OperationalError); PostgreSQL: a read-only transaction (InternalError).
    with (
        pytest.raises((OperationalError, InternalError), match=r"readonly|read-only"),
        example_db.engine.begin() as connection,
    ):
        connection.exec_driver_sql(statement)
    assert _direct(example_store_url, "SELECT count(*) FROM tree_heads") == before
