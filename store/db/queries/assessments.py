"""Assessments in their context, with their batch."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import (
    Connection,
    Select,
    select,
)

from store.db.queries.batches import BATCH_COLUMNS, batch_of
from store.db.queries.filters import AssessmentFilter, equals
from store.db.queries.pages import (
    count_rows,
    page_of,
)
from store.db.queries.records import Page, StoredAssessment, spans_of
from store.db.tables import contract_assessments as assessments_t
from store.db.tables import ingest_batches as batches_t
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


def _assessments_select() -> Select[Any]:
    return select(assessments_t, *BATCH_COLUMNS).join(
        batches_t, batches_t.c.batch_id == assessments_t.c.batch_id
    )


def assessment_by_id(connection: Connection, assessment_id: str) -> StoredAssessment | None:
    row = connection.execute(
        _assessments_select().where(equals(assessments_t.c.assessment_id, assessment_id))
    ).first()
    return None if row is None else assessment_of(row)


def _filtered_assessments(where: AssessmentFilter | None) -> Select[Any]:
    return _assessments_select().where(*(where.conditions() if where else []))


def list_assessments(
    connection: Connection,
    where: AssessmentFilter | None = None,
    first: int | None = None,
    after: str | None = None,
) -> Page[StoredAssessment]:
    statement = _filtered_assessments(where)
    return page_of(connection, statement, assessments_t.c.seq, first, after, assessment_of)


def count_assessments(connection: Connection, where: AssessmentFilter | None = None) -> int:
    conditions = where.conditions() if where else []
    return count_rows(connection, select(assessments_t.c.seq).where(*conditions))


