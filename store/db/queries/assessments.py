"""Assessments in their context, with their batch."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import (
    Connection,
    Select,
    select,
)

from store.db.queries.as_of import Snapshot, held, snapshot_at
from store.db.queries.batches import BATCH_COLUMNS, batch_of
from store.db.queries.filters import AssessmentFilter, equals
from store.db.queries.orders import Order, in_seq_order
from store.db.queries.pages import (
    count_rows,
    page_of,
)
from store.db.queries.records import Page, StoredAssessment, spans_of
from store.db.schema.tables import contract_assessments as assessments_t
from store.db.schema.tables import ingest_batches as batches_t
from store.model.records import ContractAssessment


def assessment_of(row: Any) -> StoredAssessment:
    return StoredAssessment(
        assessment_id=row.assessment_id,
        seq=row.seq,
        problem_text=row.problem_text,
        source_ref=row.source_ref,
        assessment=ContractAssessment(
            candidate_organ=row.candidate_organ,
            missing_bindings=tuple(orjson.loads(row.missing_bindings)),
            unresolved_hazards=tuple(orjson.loads(row.unresolved_hazards)),
            runnable=bool(row.runnable),
            explanation=row.explanation,
            evidence_spans=spans_of(row.evidence_spans),
        ),
        batch=batch_of(row, "batch_"),
    )


def _assessments_select(snapshot: Snapshot | None) -> Select[Any]:
    return select(assessments_t, *BATCH_COLUMNS).join(
        batches_t, batches_t.c.batch_id == assessments_t.c.batch_id
    ).where(*held(snapshot, assessments_t))


def assessment_by_id(connection: Connection, assessment_id: str,
                     as_of: int | None = None) -> StoredAssessment | None:
    row = connection.execute(
        _assessments_select(snapshot_at(connection, as_of))
        .where(equals(assessments_t.c.assessment_id, assessment_id))
    ).first()
    return None if row is None else assessment_of(row)


def list_assessments(
    connection: Connection,
    where: AssessmentFilter | None = None,
    first: int | None = None,
    after: str | None = None,
    *,
    last: int | None = None,
    before: str | None = None,
    order: Order = Order.OLDEST_FIRST,
    as_of: int | None = None,
) -> Page[StoredAssessment]:
    statement = _assessments_select(snapshot_at(connection, as_of)).where(
        *(where.conditions() if where else []))
    listing = in_seq_order(order, statement, assessments_t.c.seq, listing="assessments")
    return page_of(connection, listing, order, assessment_of, first, after, last, before)


def count_assessments(connection: Connection, where: AssessmentFilter | None = None,
                      as_of: int | None = None) -> int:
    conditions = where.conditions() if where else []
    snapshot = snapshot_at(connection, as_of)
    statement = select(assessments_t.c.seq).where(*conditions, *held(snapshot, assessments_t))
    return count_rows(connection, statement)
