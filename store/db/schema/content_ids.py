"""How a stored row's content names it: the ids a content-addressed row may carry,
recomputed from its columns (the writer's recipes in store/model, read back)."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from sqlalchemy import Row

from store.errors import StoreError
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


class UndecodableColumn(StoreError, ValueError):
    """A JSON column that does not decode: the row's content cannot be what was hashed."""


# A number of 19 digits or more may be an integer beyond 64 bits, which orjson reads as a
# float where json reads it exactly (a different content id): json reads such text.
_LONG_NUMBER = re.compile(r"[0-9]{19}")


def _decoded(row: Row[Any], column: str) -> Any:
    value = getattr(row, column)
    if value is None:
        return None
    # orjson first (verify decodes every row's columns: json.loads was a third of its content
    # check); whatever orjson refuses (NaN, a lone surrogate escape) json decides.
    if type(value) is str and _LONG_NUMBER.search(value) is None:
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(value)
    except (TypeError, ValueError) as exc:
        raise UndecodableColumn(f"{column} is not JSON") from exc


def residual_ids(row: Row[Any]) -> set[str]:
    spans = _decoded(row, "evidence_spans")
    if not isinstance(spans, list) or not all(isinstance(s, dict) for s in spans):
        raise UndecodableColumn("evidence_spans is not a list of spans")
    return {stored_residual_id(row.candidate_organ, row.residual_kind, row.residual_code, spans)}


def assessment_ids(row: Row[Any]) -> set[str]:
    assessment = {
        "candidate_organ": row.candidate_organ,
        "missing_bindings": _decoded(row, "missing_bindings"),
        "unresolved_hazards": _decoded(row, "unresolved_hazards"),
        "runnable": bool(row.runnable),
        "explanation": row.explanation,
        "evidence_spans": _decoded(row, "evidence_spans"),
    }
    return {assessment_id(row.problem_text, row.source_ref, assessment)}


def surface_ids(row: Row[Any]) -> set[str]:
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


def sighting_ids(row: Row[Any]) -> set[str]:
    return {sighting_id(row.surface_id, row.session_id, row.turn_id, row.prompt, row.turn_key)}


def turn_keys(row: Row[Any]) -> set[str]:
    return {stored_turn_key(row.kind, row.line, row.line_number)}
