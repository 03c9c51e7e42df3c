"""`verify`'s construction check: each journal turn's `turn_constructions` row and links to
its assessments must be exactly what its stored line's construction_evidence comes to (CORE's
seam, store/model/construction.py), re-derived, never trusted; and a line that carries a
payload must have been projected."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from sqlalchemy import Connection, exists, select

from store.db.schema.tables import turn_assessments, turn_constructions, turns
from store.db.verify.problems import Problem
from store.model.assessment_ids import assessment_id
from store.model.construction import ConstructionStatus, read_construction
from store.model.turns import TurnKind

_READ_ROWS = 1000
_JOURNAL = TurnKind.WORKBENCH_JOURNAL.value


def _payload(kind: str, line: str) -> Any:
    if kind != _JOURNAL:
        return None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None  # the turn's own content check reports a line that does not decode
    return value.get("construction_evidence") if isinstance(value, dict) else None


def _expected(turn_key: str, payload: Any) -> tuple[str, str | None, list[tuple[int, str]]]:
    reading = read_construction(payload)
    links = [] if reading.status is not ConstructionStatus.RECORDED else [
        (ordinal, assessment_id(reading.problem_text, turn_key, assessment.as_dict()))
        for ordinal, assessment in enumerate(reading.assessments)]
    return reading.status.value, reading.missing_reason, links


def _stored_rows(connection: Connection, after_seq: int
                 ) -> Iterator[tuple[list[Any], dict[str, list[tuple[int, str]]]]]:
    """The construction rows after leaf `after_seq` with their turns' kind and line, a
    thousand at a time (memory stays flat), each chunk with its turns' links."""
    t, c, a = turns, turn_constructions, turn_assessments
    last = after_seq
    while True:
        rows = connection.execute(
            select(c.c.seq, c.c.turn_key, c.c.status, c.c.missing_reason, t.c.kind, t.c.line)
            .join(t, t.c.turn_key == c.c.turn_key, isouter=True)
            .where(c.c.seq > last).order_by(c.c.seq).limit(_READ_ROWS)).all()
        if not rows:
            return
        links: dict[str, list[tuple[int, str]]] = {}
        for key, ordinal, assessment in connection.execute(
                select(a.c.turn_key, a.c.ordinal, a.c.assessment_id)
                .where(a.c.turn_key.in_([row.turn_key for row in rows]))
                .order_by(a.c.turn_key, a.c.ordinal)):
            links.setdefault(key, []).append((ordinal, assessment))
        yield list(rows), links
        last = rows[-1].seq


def construction_problems(connection: Connection, after_seq: int = 0) -> Iterator[Problem]:
    """The construction rows stored after leaf `after_seq`, and the journal turns stored
    after it whose payload has no row."""
    t, c = turns, turn_constructions
    for rows, links in _stored_rows(connection, after_seq):
        for seq, key, status, reason, kind, line in rows:
            payload = None if line is None else _payload(kind, line)
            if payload is None:
                yield Problem(seq, "turn_constructions", key,
                              "its turn's line carries no construction_evidence")
                continue
            want_status, want_reason, want_links = _expected(key, payload)
            if (status, reason) != (want_status, want_reason):
                yield Problem(seq, "turn_constructions", key,
                              f"says {status} ({reason}); the line's evidence reads as "
                              f"{want_status} ({want_reason})")
            if links.get(key, []) != want_links:
                yield Problem(seq, "turn_assessments", key,
                              f"links {len(links.get(key, []))} assessments; the line's "
                              f"evidence projects to {len(want_links)} (ordinals and ids must "
                              "match)")
    unprojected = (select(t.c.seq, t.c.turn_key, t.c.kind, t.c.line)
                   .where(t.c.seq > after_seq, t.c.kind == _JOURNAL,
                          t.c.line.contains('"construction_evidence"'),
                          ~exists().where(c.c.turn_key == t.c.turn_key))
                   .order_by(t.c.seq))
    for seq, key, kind, line in connection.execute(
            unprojected.execution_options(yield_per=_READ_ROWS)):
        if _payload(kind, line) is not None:
            yield Problem(seq, "turns", key,
                          "its line carries construction_evidence that was never projected "
                          "(no turn_constructions row)")
