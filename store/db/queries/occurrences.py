"""Where residuals were seen: an assessment's residuals, a residual's sightings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

from sqlalchemy import (
    Connection,
    Select,
    select,
)

from store.db.queries.as_of import Snapshot, held, snapshot_at
from store.db.queries.batches import BATCH_COLUMNS
from store.db.queries.filters import any_of, equals
from store.db.queries.listing_declarations import ASSESSMENT_RECORD, RESIDUAL_RECORD, RESIDUALS
from store.db.queries.pages import (
    PageArgs,
    record_seq_page,
)
from store.db.queries.records import Occurrence, Page, StoredResidual
from store.db.schema.tables import contract_assessments as assessments_t
from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import ingest_batches as batches_t
from store.db.schema.tables import residual_occurrences as occurrences_t


def _occurrences_select(residual_id: Any, snapshot: Snapshot | None) -> Select[Any]:
    return (
        select(
            occurrences_t.c.seq.label("occurrence_seq"),
            occurrences_t.c.residual_id,
            occurrences_t.c.ordinal,
            assessments_t,
            *BATCH_COLUMNS,
        )
        .join(assessments_t, assessments_t.c.assessment_id == occurrences_t.c.assessment_id)
        .join(batches_t, batches_t.c.batch_id == assessments_t.c.batch_id)
        .where(equals(occurrences_t.c.residual_id, residual_id), *held(snapshot, occurrences_t))
    )


def _occurrence(row: Any) -> Occurrence:
    return Occurrence(
        seq=row.occurrence_seq,
        residual_id=row.residual_id,
        ordinal=row.ordinal,
        assessment=ASSESSMENT_RECORD(row),
    )


def list_occurrences(connection: Connection, residual_id: str, first: int | None = None,
                     after: str | None = None, **page: Unpack[PageArgs]) -> Page[Occurrence]:
    """Sightings of one residual with their assessment and batch, in `order`."""
    return record_seq_page(connection, _occurrences_select, residual_id, occurrences_t.c.seq,
                           _occurrence, "occurrences", first, after, **page)


def assessment_residuals(
    connection: Connection, assessment_ids: Sequence[str], *, as_of: int | None = None
) -> dict[str, list[StoredResidual]]:
    """The residuals each assessment produced, in projection (ordinal) order, with their
    sightings as of `as_of`; one statement for a whole page of assessments, none for none."""
    if not assessment_ids:
        return {}
    rows = connection.execute(
        RESIDUALS.rows(None, snapshot_at(connection, as_of))
        .add_columns(occurrences_t.c.assessment_id.label("produced_by"))
        .join(occurrences_t, occurrences_t.c.residual_id == residuals_t.c.residual_id)
        .where(any_of(occurrences_t.c.assessment_id, list(set(assessment_ids))))
        .order_by(occurrences_t.c.assessment_id, occurrences_t.c.ordinal)
    ).all()
    produced: dict[str, list[StoredResidual]] = {a: [] for a in assessment_ids}
    for row in rows:
        produced[row.produced_by].append(RESIDUAL_RECORD(row))
    return produced
