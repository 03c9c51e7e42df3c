"""As-of reads in the query layer: the store exactly as it was at a recorded tree head.

The `journal_db` store (tests/conftest.py) has heads 18, 37, 66 and 83 (spec_values.HEADS). Values
are written out from the example files: batch 1 is adr_0225_frames.jsonl alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from log_leaves import leaf_entries
from rfc9162_reference import leaf, mth
from spec_surfaces import LIGHT_ID, SURFACE_FACETS_ALL
from spec_values import (
    CODES_IN_APPEND_ORDER,
    CODES_MOST_SEEN,
    CODES_OF_BATCH_1,
    DELTA_QUANTITY_ID,
    FACETS_ALL,
    FACETS_BATCH_1,
    HEADS,
    spec_residual_id,
)
from sqlalchemy.engine import make_url

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import Order, ResidualFilter

# "Mia has 5." (core_frames_families.jsonl): first stored by batch 2.
ENTITY_ID = spec_residual_id("quantity_entity_binding", "missing_role", "entity_unbound",
                             [{"text": "5", "start": 8, "end": 9, "sentence_index": None}])
BATCH_1_REFS = ["adr-0225:example-a", "adr-0225:example-b", "adr-0225:example-c",
                "adr-0225:example-d", "runnable-example"]


def facet_rows(facets: list[queries.FacetCount]) -> list[dict[str, object]]:
    return [{"value": f.value, "count": f.count, "occurrences": f.occurrences} for f in facets]


def residual_facets(db: AuditStore, as_of: int | None) -> dict[str, object]:
    facets = db.execute(queries.residual_facets, None, as_of)
    return {"total": facets.total, "occurrences": facets.occurrences,
            "byKind": facet_rows(facets.by_kind), "byAxis": facet_rows(facets.by_axis),
            "byOrgan": facet_rows(facets.by_organ), "byFamily": facet_rows(facets.by_family),
            "byCode": facet_rows(facets.by_code)}


def codes(page: queries.Page[queries.StoredResidual]) -> list[str]:
    return [r.residual.residual_code for r in page.items]


def test_as_of_the_first_head_is_the_first_batch_alone(journal_db: AuditStore) -> None:
    run, first = journal_db.execute, HEADS[1]
    page = run(queries.list_residuals, None, 500, as_of=first)
    assert codes(page) == CODES_OF_BATCH_1
    assert [r.occurrence_count for r in page.items] == [1] * 6  # "Tom gained apples." once
    assert run(queries.count_residuals, None, first) == 6
    assert residual_facets(journal_db, first) == FACETS_BATCH_1
    assessments = run(queries.list_assessments, None, 500, as_of=first)
    assert [a.source_ref for a in assessments.items] == BATCH_1_REFS
    assert run(queries.count_assessments, None, first) == 5
    assert [b.batch_id for b in run(queries.list_batches, 500, as_of=first).items] == [1]
    assert run(queries.count_batches, first) == 1
    assert run(queries.count_surfaces, None, first) == 0
    assert run(queries.surface_facets, None, first).total == 0
    assert run(queries.count_turns, None, first) == 0
    assert run(queries.turn_facets, None, first).total == 0
    assert run(queries.ledger_status, first).tree_size == first


def test_a_residual_seen_again_later_has_its_old_count(journal_db: AuditStore) -> None:
    then = journal_db.execute(queries.residual_by_id, DELTA_QUANTITY_ID, HEADS[1])
    now = journal_db.execute(queries.residual_by_id, DELTA_QUANTITY_ID)
    assert then is not None and now is not None
    assert (then.occurrence_count, now.occurrence_count) == (1, 2)
    sightings = journal_db.execute(queries.list_occurrences, DELTA_QUANTITY_ID, as_of=HEADS[1])
    assert [o.assessment.problem_text for o in sightings.items] == ["Tom gained apples."]
    assert not sightings.has_next_page
    ex_b = sightings.items[0].assessment.assessment_id
    produced = journal_db.execute(queries.assessment_residuals, [ex_b], as_of=HEADS[1])
    assert [(r.residual.residual_code, r.occurrence_count) for r in produced[ex_b]] == [
        ("delta_quantity_unbound", 1)]
    assert journal_db.execute(queries.assessment_residuals, [ex_b])[ex_b][0].occurrence_count == 2


def test_a_record_added_later_is_absent(journal_db: AuditStore) -> None:
    assert journal_db.execute(queries.residual_by_id, ENTITY_ID, HEADS[1]) is None
    assert journal_db.execute(queries.residual_by_id, ENTITY_ID, HEADS[2]) is not None
    entity = ResidualFilter(code=["entity_unbound"])
    assert journal_db.execute(queries.list_residuals, entity, as_of=HEADS[1]).items == []
    assert journal_db.execute(queries.count_residuals, entity, HEADS[1]) == 0
    assert journal_db.execute(queries.surface_by_id, LIGHT_ID, HEADS[2]) is None
    turn = journal_db.execute(queries.list_turns, None, 1).items[0]
    assert journal_db.execute(queries.turn_by_key, turn.turn_key, HEADS[3]) is None
    assert journal_db.execute(queries.turn_by_key, turn.turn_key, HEADS[4]) is not None


def test_as_of_each_head(journal_db: AuditStore) -> None:
    run = journal_db.execute
    assert codes(run(queries.list_residuals, None, 500, as_of=HEADS[2])) == CODES_IN_APPEND_ORDER
    assert residual_facets(journal_db, HEADS[2]) == residual_facets(journal_db, None) == FACETS_ALL
    # Before the journal: the example surfaces, light seen twice (now three times).
    facets = run(queries.surface_facets, None, HEADS[3])
    assert (facets.total, facets.occurrences) == (SURFACE_FACETS_ALL["total"],
                                                  SURFACE_FACETS_ALL["occurrences"])
    assert [(f.value, f.count, f.occurrences) for f in facets.by_verification] == [
        (f["value"], f["count"], f["occurrences"])
        for f in SURFACE_FACETS_ALL["byVerification"]]  # type: ignore[attr-defined]
    light_then = run(queries.surface_by_id, LIGHT_ID, HEADS[3])
    light_now = run(queries.surface_by_id, LIGHT_ID)
    assert light_then is not None and light_now is not None
    assert (light_then.occurrence_count, light_now.occurrence_count) == (2, 3)
    sightings = run(queries.list_surface_occurrences, LIGHT_ID, as_of=HEADS[3])
    assert [o.session_id for o in sightings.items] == ["eval-a", "eval-b"]
    assert run(queries.count_turns, None, HEADS[3]) == 0
    assert run(queries.count_turns, None, HEADS[4]) == run(queries.count_turns) == 6


def test_most_seen_counts_as_of_the_head(journal_db: AuditStore) -> None:
    def most_seen(as_of: int | None) -> list[str]:
        return codes(journal_db.execute(queries.list_residuals, None, 500, order=Order.MOST_SEEN,
                                     as_of=as_of))

    assert most_seen(HEADS[1]) == CODES_OF_BATCH_1  # all seen once: append order
    assert most_seen(HEADS[2]) == most_seen(None) == CODES_MOST_SEEN


def test_the_empty_store_at_zero(journal_db: AuditStore) -> None:
    assert journal_db.execute(queries.list_residuals, None, as_of=0).items == []
    assert journal_db.execute(queries.residual_facets, None, 0).total == 0
    assert journal_db.execute(queries.count_batches, 0) == 0
    status = journal_db.execute(queries.ledger_status, 0)
    assert (status.tree_size, status.root_hash) == (
        0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")  # SHA-256("")


def test_the_head_as_of_is_the_root_of_its_first_leaves(journal_db: AuditStore,
                                                        example_store_url: str) -> None:
    url = make_url(example_store_url)
    store: Path | str = Path(url.database or "") if url.get_backend_name() == "sqlite" \
        else example_store_url
    entries = leaf_entries(store)
    for size in HEADS.values():
        status = journal_db.execute(queries.ledger_status, size)
        assert status.tree_size == size
        assert status.root_hash == mth([leaf(e) for e in entries[:size]]).hex()


@pytest.mark.parametrize(("as_of", "message"), [
    (20, "asOf: 20 is not a tree size this store recorded (one per batch); the nearest are "
         "18 (after batch 1) and 37 (after batch 2)"),
    (5, "asOf: 5 is not a tree size this store recorded (one per batch); the nearest are "
        "0 (the empty store) and 18 (after batch 1)"),
    (84, "asOf: 84 is past the newest tree head, 83 (after batch 4)"),
    (2**40, f"asOf: {2**40} is past the newest tree head, 83 (after batch 4)"),
    (-1, "asOf: must be between 0 and the newest tree size, got -1"),
    (2**63, f"asOf: must be between 0 and the newest tree size, got {2**63}"),
])
def test_only_a_recorded_head_is_a_state_of_the_store(journal_db: AuditStore, as_of: int,
                                                     message: str) -> None:
    for query, args in [(queries.count_residuals, (None,)), (queries.surface_facets, (None,)),
                        (queries.residual_by_id, (DELTA_QUANTITY_ID,)),
                        (queries.ledger_status, ())]:
        with pytest.raises(queries.QueryError) as raised:
            journal_db.execute(query, *args, as_of)
        assert str(raised.value) == message
    with pytest.raises(queries.QueryError, match=r"^asOf: "):
        journal_db.execute(queries.list_turns, None, as_of=as_of)


def test_snapshot_for_callers_outside_the_api(journal_db: AuditStore) -> None:
    snapshot = journal_db.execute(queries.snapshot_at, HEADS[2])
    assert snapshot is not None
    assert (snapshot.tree_size, snapshot.batch_id) == (37, 2)
    assert journal_db.execute(queries.snapshot_at, None) is None
