"""Content-addressed keys, recomputed: a row whose key is not the hash of its content was
forged or edited, whatever the log or the triggers say."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Generator, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Row, select

from store.db.problems import Problem
from store.db.tables import metadata
from store.model.assessment_ids import assessment_id
from store.model.projection import stored_residual_id
from store.model.surface_ids import (
    CHECK_COLUMNS,
    SurfaceIdentity,
    sighting_id,
    surface_id,
    surface_id_before_0005,
)
from store.model.turns import stored_turn_key

STREAM_ROWS = 1000  # rows fetched at a time: memory stays flat on a store of any size


class UndecodableColumn(ValueError):
    """A JSON column that does not decode: the row's content cannot be what was hashed."""


def _decoded(row: Row[Any], column: str) -> Any:
    value = getattr(row, column)
    if value is None:
        return None
    try:
        return json.loads(value)
    except (TypeError, ValueError) as exc:
        raise UndecodableColumn(f"{column} is not JSON") from exc


def _residual_ids(row: Row[Any]) -> set[str]:
    spans = _decoded(row, "evidence_spans")
    if not isinstance(spans, list) or not all(isinstance(s, dict) for s in spans):
        raise UndecodableColumn("evidence_spans is not a list of spans")
    return {stored_residual_id(row.candidate_organ, row.residual_kind, row.residual_code, spans)}


def _assessment_ids(row: Row[Any]) -> set[str]:
    assessment = {
        "candidate_organ": row.candidate_organ,
        "missing_bindings": _decoded(row, "missing_bindings"),
        "unresolved_hazards": _decoded(row, "unresolved_hazards"),
        "runnable": bool(row.runnable),
        "explanation": row.explanation,
        "evidence_spans": _decoded(row, "evidence_spans"),
    }
    return {assessment_id(row.problem_text, row.source_ref, assessment)}


def _surface_ids(row: Row[Any]) -> set[str]:
    identity = SurfaceIdentity(
        grounding_source=row.grounding_source, surface=row.surface, subject=row.subject,
        intent=row.intent, corpus_id=row.corpus_id, chain_id=row.chain_id,
        pack_id=row.pack_id, subject_domains=_decoded(row, "subject_domains"),
        object_domains=_decoded(row, "object_domains"), verification=row.verification,
        surface_form=row.surface_form, hops=row.hops,
        hop_chain_ids=_decoded(row, "hop_chain_ids"),
        candidate_chain_ids=_decoded(row, "candidate_chain_ids"),
        surface_prefix=row.surface_prefix, checked_against=_decoded(row, "checked_against"),
    )
    ids = {surface_id(identity)}
    if all(getattr(identity, column) is None for column in CHECK_COLUMNS):
        # Stored before revision 0005, whose ids did not name the check: still valid.
        ids.add(surface_id_before_0005(identity))
    return ids


def _occurrence_ids(row: Row[Any]) -> set[str]:
    return {sighting_id(row.surface_id, row.session_id, row.turn_id, row.prompt, row.turn_key)}


def _turn_keys(row: Row[Any]) -> set[str]:
    return {stored_turn_key(row.kind, row.line, row.line_number)}


@dataclass(frozen=True, slots=True)
class ContentKey:
    """A table whose key names its content, and how to name a stored row's content."""

    table: str
    key: str
    ids: Callable[[Row[Any]], set[str]]


CONTENT_KEYS: tuple[ContentKey, ...] = (
    ContentKey("contract_assessments", "assessment_id", _assessment_ids),
    ContentKey("contract_residuals", "residual_id", _residual_ids),
    ContentKey("surface_records", "surface_id", _surface_ids),
    ContentKey("surface_occurrences", "occurrence_id", _occurrence_ids),
    ContentKey("turns", "turn_key", _turn_keys),
)


def content_id_problems(connection: Connection, *,
                        skip: Collection[str] = ()) -> Generator[Problem, None, None]:
    """Every row of every content-addressed table whose key is not its content's hash.

    `skip`: tables that cannot be read as the schema says (missing, or columns lost)."""
    for content_key in CONTENT_KEYS:
        if content_key.table not in skip:
            yield from _table_problems(connection, content_key)


def _table_problems(connection: Connection, content_key: ContentKey) -> Iterator[Problem]:
    table = metadata.tables[content_key.table]
    query = select(table)
    if "seq" in table.c:
        query = query.order_by(table.c.seq)
    with connection.execute(query.execution_options(yield_per=STREAM_ROWS)) as rows:
        yield from _row_problems(rows, content_key)


def _row_problems(rows: Iterator[Row[Any]], content_key: ContentKey) -> Iterator[Problem]:
    for row in rows:
        key = getattr(row, content_key.key)
        seq = getattr(row, "seq", None)
        try:
            ids = content_key.ids(row)
        except UndecodableColumn as exc:
            yield Problem(seq, content_key.table, key, f"{exc}: its content cannot be hashed")
            continue
        if key not in ids:
            yield Problem(seq, content_key.table, key,
                          f"{content_key.key} is not the hash of its content")
