"""Construction evidence read back: what each journal turn's evidence came to (its status,
its assessments in payload order), the turn an assessment came from, and the turns whose
assessments projected to a residual."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Unpack

import orjson
from sqlalchemy import Connection, Select, bindparam, select

from store.db.queries.as_of import Snapshot, held, snapshot_at
from store.db.queries.filters import any_of, equals
from store.db.queries.listing_declarations import ASSESSMENTS, TURN_RECORD, TURNS
from store.db.queries.pages import PageArgs, count_rows, record_seq_page
from store.db.queries.records import Page, StoredAssessment, StoredTurn
from store.db.schema.tables import contract_assessments as assessments_t
from store.db.schema.tables import residual_occurrences as occurrences_t
from store.db.schema.tables import turn_assessments as links_t
from store.db.schema.tables import turn_constructions as constructions_t
from store.db.schema.tables import turns as turns_t
from store.model.construction import NOT_PERSISTED, ConstructionStatus
from store.model.turns import TurnKind

_NULL_PAYLOAD = '"construction_evidence":null'


@dataclass(frozen=True, slots=True)
class TurnConstruction:
    """What a turn's construction_evidence came to. status None: a turn of another kind, or
    a payload not projected by the tree size read (a store upgraded later projects it then)."""

    status: ConstructionStatus | None = None
    missing_reason: str | None = None
    assessments: list[StoredAssessment] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TurnLine:
    """What a turn's construction status is read from: its key, kind and stored line."""

    turn_key: str
    kind: str
    line: str


def _without_row(turn: TurnLine) -> TurnConstruction:
    """A journal turn with no turn_constructions row: CORE's "not persisted" when its line's
    payload is null (the writer stores no row for it)."""
    if turn.kind != TurnKind.WORKBENCH_JOURNAL.value:
        return TurnConstruction()
    line = turn.line
    null = (line.count('"construction_evidence"') == 1 and _NULL_PAYLOAD in line) or (
        orjson.loads(line).get("construction_evidence") is None)
    return TurnConstruction(ConstructionStatus.MISSING_EVIDENCE, NOT_PERSISTED) if null else (
        TurnConstruction())


def _construction_reads(snapshot: Snapshot | None) -> tuple[Select[Any], Select[Any],
                                                             Select[Any]]:
    """turn_constructions' statements as of `snapshot`: the turns' rows (`keys`), the links of
    those with one (`linked`), and the linked assessments (`ids`), each list a parameter."""
    return (select(constructions_t).where(
                constructions_t.c.turn_key.in_(bindparam("keys", expanding=True)),
                *held(snapshot, constructions_t)),
            select(links_t.c.turn_key, links_t.c.assessment_id).where(
                links_t.c.turn_key.in_(bindparam("linked", expanding=True)),
                *held(snapshot, links_t)).order_by(links_t.c.turn_key, links_t.c.ordinal),
            ASSESSMENTS.rows(None, snapshot).where(
                assessments_t.c.assessment_id.in_(bindparam("ids", expanding=True))))


@functools.cache
def _reads_of_now() -> tuple[Select[Any], Select[Any], Select[Any]]:
    """The reads of now, built once: building them cost more than running them for a turn."""
    return _construction_reads(None)


def turn_constructions(connection: Connection, stored: Sequence[TurnLine], *,
                       as_of: int | None = None) -> dict[str, TurnConstruction]:
    """Per turn (by key), its construction status and assessments, as of `as_of`: at most
    three statements for a whole page of turns (none for what no row links)."""
    snapshot = snapshot_at(connection, as_of)
    by_rows, by_links, by_ids = (_reads_of_now() if snapshot is None
                                 else _construction_reads(snapshot))
    keys = list(dict.fromkeys(turn.turn_key for turn in stored))
    rows = {row.turn_key: row for row in connection.execute(by_rows, {"keys": keys})
            } if keys else {}
    links = connection.execute(by_links, {"linked": list(rows)}).all() if rows else []
    ids = list(dict.fromkeys(link.assessment_id for link in links))
    assessments = {a.assessment_id: a for a in map(ASSESSMENTS.record, connection.execute(
        by_ids, {"ids": ids}))} if ids else {}
    found: dict[str, TurnConstruction] = {}
    for turn in stored:
        row = rows.get(turn.turn_key)
        found[turn.turn_key] = _without_row(turn) if row is None else TurnConstruction(
            ConstructionStatus(row.status), row.missing_reason,
            [assessments[link.assessment_id] for link in links
             if link.turn_key == turn.turn_key and link.assessment_id in assessments])
    return found


def assessment_turns(connection: Connection, assessment_ids: Sequence[str], *,
                     as_of: int | None = None) -> dict[str, StoredTurn | None]:
    """The journal turn each assessment was projected from (None: one a frame stored)."""
    snapshot = snapshot_at(connection, as_of)
    rows = connection.execute(
        TURNS.rows(None, snapshot).add_columns(links_t.c.assessment_id.label("projected"))
        .join(links_t, links_t.c.turn_key == turns_t.c.turn_key)
        .where(any_of(links_t.c.assessment_id, list(set(assessment_ids))),
               *held(snapshot, links_t))
        .order_by(links_t.c.seq)).all()
    found: dict[str, StoredTurn | None] = dict.fromkeys(assessment_ids)
    for row in rows:
        if found.get(row.projected) is None:
            found[row.projected] = TURN_RECORD(row)
    return found


def _residual_turns_select(residual_id: Any, snapshot: Snapshot | None) -> Select[Any]:
    projecting = (select(links_t.c.turn_key)
                  .join(occurrences_t, occurrences_t.c.assessment_id == links_t.c.assessment_id)
                  .where(equals(occurrences_t.c.residual_id, residual_id),
                         *held(snapshot, links_t), *held(snapshot, occurrences_t)))
    return TURNS.rows(None, snapshot).where(turns_t.c.turn_key.in_(projecting))


def list_residual_turns(connection: Connection, residual_id: str, first: int | None = None,
                        after: str | None = None, **page: Unpack[PageArgs]
                        ) -> Page[StoredTurn]:
    """The turns whose construction evidence projected to the residual, each once, in
    `order` (append order by default)."""
    return record_seq_page(connection, _residual_turns_select, residual_id, turns_t.c.seq,
                           TURN_RECORD, "turns", first, after, **page)


def count_residual_turns(connection: Connection, residual_id: str, *,
                         as_of: int | None = None) -> int:
    """How many turns list_residual_turns lists."""
    statement = _residual_turns_select(residual_id, snapshot_at(connection, as_of))
    return count_rows(connection, statement.with_only_columns(turns_t.c.seq))
