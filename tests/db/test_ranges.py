"""Batch and ingest-time ranges on every record filter: inclusive at both ends, on the batch
that first stored a record. The `journal_db` store: batches 1-2 hold residuals, 3 surfaces,
4 the Workbench journal.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from spec_values import CODES_IN_APPEND_ORDER, CODES_OF_BATCH_1

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import AssessmentFilter, ResidualFilter, SurfaceFilter, TurnFilter

BATCH_2_CODES = CODES_IN_APPEND_ORDER[6:]
BATCH_2_REFS = ["families:unary-delta-repeat", "families:quantity-entity",
                "families:fraction-decrease", "families:percent-partition",
                "families:familyless-organ"]


def codes(db: AuditStore, where: ResidualFilter) -> list[str]:
    page = db.execute(queries.list_residuals, where, 500)
    assert db.execute(queries.count_residuals, where) == len(page.items)
    return [r.residual.residual_code for r in page.items]


@pytest.mark.parametrize(("low", "high", "expected"), [
    (1, 1, CODES_OF_BATCH_1),
    (2, 2, BATCH_2_CODES),
    (1, 2, CODES_IN_APPEND_ORDER),
    (2, None, BATCH_2_CODES),
    (None, 1, CODES_OF_BATCH_1),
    (3, 4, []),  # batches 3 and 4 store no residual ("Sam gained pears." is not a new one)
    (2, 1, []),
    (0, 2**63 - 1, CODES_IN_APPEND_ORDER),
])
def test_residuals_by_batch_range(journal_db: AuditStore, low: int | None, high: int | None,
                                  expected: list[str]) -> None:
    assert codes(journal_db, ResidualFilter(batch_id_from=low, batch_id_to=high)) == expected


def test_every_filter_takes_the_range(journal_db: AuditStore) -> None:
    def count(query: object, where: object) -> int:
        return len(journal_db.execute(query, where, 500).items)  # type: ignore[arg-type]

    assert count(queries.list_surfaces, SurfaceFilter(batch_id_from=3, batch_id_to=3)) == 12
    assert count(queries.list_surfaces, SurfaceFilter(batch_id_from=4)) == 4  # the new ones
    assert count(queries.list_turns, TurnFilter(batch_id_from=4, batch_id_to=4)) == 6
    assert count(queries.list_turns, TurnFilter(batch_id_to=3)) == 0
    page = journal_db.execute(queries.list_assessments,
                           AssessmentFilter(batch_id_from=2, batch_id_to=2))
    assert [a.source_ref for a in page.items] == BATCH_2_REFS
    assert journal_db.execute(queries.count_surfaces, SurfaceFilter(batch_id_to=3)) == 12
    assert journal_db.execute(queries.count_turns, TurnFilter(batch_id_from=4)) == 6
    assert journal_db.execute(queries.count_assessments, AssessmentFilter(batch_id_to=1)) == 5


def test_residual_facets_over_a_batch_range_count_its_sightings(journal_db: AuditStore) -> None:
    """Residuals first stored by batch 2, and the sightings batch 2 recorded: one of them is
    of "Tom gained apples." (batch 1), seen again in "Sam gained pears."."""
    facets = journal_db.execute(queries.residual_facets,
                             ResidualFilter(batch_id_from=2, batch_id_to=2))
    assert (facets.total, facets.occurrences) == (6, 7)
    by_code = {f.value: (f.count, f.occurrences) for f in facets.by_code}
    assert by_code["delta_quantity_unbound"] == (0, 1)
    assert by_code["entity_unbound"] == (1, 1)
    assert [(f.value, f.count, f.occurrences) for f in facets.by_organ] == [
        ("fraction_decrease", 2, 2), ("percent_partition", 2, 2),
        ("quantity_entity_binding", 1, 1), ("temporal_tariff", 1, 1),
        ("unary_delta_transition", 0, 1)]


def ingested(db: AuditStore) -> dict[int, str]:
    return {b.batch_id: b.ingested_at for b in db.execute(queries.list_batches).items}


def test_ingest_time_range_is_inclusive_at_both_ends(journal_db: AuditStore) -> None:
    at = ingested(journal_db)
    second = datetime.fromisoformat(at[2])
    assert at[2] == second.strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # how the writer stores it
    exactly = ResidualFilter(ingested_from=second, ingested_to=second)
    assert codes(journal_db, exactly) == BATCH_2_CODES
    # The same instant, written with an offset or without a zone (taken as UTC).
    plus_two = second.astimezone(timezone(timedelta(hours=2)))
    assert codes(journal_db, ResidualFilter(ingested_from=plus_two, ingested_to=plus_two)) == (
        BATCH_2_CODES)
    naive = second.replace(tzinfo=None)
    assert codes(journal_db, ResidualFilter(ingested_from=naive, ingested_to=naive)) == (
        BATCH_2_CODES)
    later = second + timedelta(microseconds=1)
    assert codes(journal_db, ResidualFilter(ingested_from=later)) == []
    assert codes(journal_db, ResidualFilter(ingested_to=later)) == CODES_IN_APPEND_ORDER
    earlier = second - timedelta(microseconds=1)
    assert codes(journal_db, ResidualFilter(ingested_to=earlier)) == CODES_OF_BATCH_1
    facets = journal_db.execute(queries.residual_facets, exactly)
    assert (facets.total, facets.occurrences) == (6, 7)
    surfaces = SurfaceFilter(ingested_from=datetime.fromisoformat(at[3]))
    assert journal_db.execute(queries.count_surfaces, surfaces) == 16
    turns = TurnFilter(ingested_to=datetime.fromisoformat(at[3]))
    assert journal_db.execute(queries.count_turns, turns) == 0


def test_ranges_and_as_of_together(journal_db: AuditStore) -> None:
    at = ingested(journal_db)
    where = ResidualFilter(batch_id_from=1, ingested_to=datetime.fromisoformat(at[2]))
    assert codes(journal_db, where) == CODES_IN_APPEND_ORDER
    page = journal_db.execute(queries.list_residuals, where, as_of=18)
    assert [r.residual.residual_code for r in page.items] == CODES_OF_BATCH_1


@pytest.mark.parametrize(("where", "message"), [
    (ResidualFilter(batch_id_from=-1), "batchIdFrom: must be between 0 and 9223372036854775807"
                                       ", got -1"),
    (ResidualFilter(batch_id_to=2**63), "batchIdTo: must be between 0 and 9223372036854775807"
                                        f", got {2**63}"),
])
def test_bad_bounds_are_named(journal_db: AuditStore, where: ResidualFilter, message: str) -> None:
    with pytest.raises(queries.QueryError) as raised:
        journal_db.execute(queries.list_residuals, where)
    assert str(raised.value) == message


def test_times_beyond_the_calendar_in_utc_are_its_ends(journal_db: AuditStore) -> None:
    """Year 1 at +05:00 is before any UTC time this store can hold; 9999 at -05:00 after."""
    first_moment = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5)))
    last_moment = datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-5)))
    assert codes(journal_db, ResidualFilter(ingested_from=first_moment,
                                            ingested_to=last_moment)) == CODES_IN_APPEND_ORDER
    assert codes(journal_db, ResidualFilter(ingested_from=last_moment)) == []
    assert codes(journal_db, ResidualFilter(ingested_to=first_moment)) == []


def test_timestamps_typed_by_a_user() -> None:
    assert queries.parse_ingest_time("2026-05-01T12:30:00Z", "--ingested-from") == (
        datetime(2026, 5, 1, 12, 30, tzinfo=UTC))
    assert queries.parse_ingest_time("2026-05-01", "--ingested-to") == datetime(2026, 5, 1)
    with pytest.raises(queries.QueryError) as raised:
        queries.parse_ingest_time("yesterday", "--ingested-from")
    assert str(raised.value) == ("--ingested-from: not an ISO 8601 timestamp: 'yesterday' "
                                 "(e.g. 2026-05-01T12:00:00Z or 2026-05-01)")
