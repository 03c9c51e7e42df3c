"""Turn fields: per turn, what its verbatim line says beyond the columns of `turns` (CORE's own
time, the journal it belongs to, the typed TurnJournalEntry fields), and indexes on the turn
identities CORE uses (trace_hash, journal_digest, turn_id).

`turn_fields` is derived, like `sighting_counts`: not leaves of the log, written per batch by
the writer, derived again by `verify`; backfilled here from every stored turn's `line`. It is
created whole (no batch mode: it would drop the triggers) under the append-only guards every
table has. No row of an existing table changes, so no id, leaf or tree head does.

A stored journal's turns are assigned to it as the writer assigns them: turn 1 starts a
journal (its turn_key names it); a batch's later journal turns continue the journal its first
one follows. Before this revision the store did not record which stored journal a grown file
continued: when two journals end at the same turn id, the one whose last turn was stored most
recently is taken (the writer, from now on, knows).

The derivation below is frozen as of this revision (store.model.turn_fields is today's).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from alembic import op
from append_only import (
    create_append_only_triggers_v2,
    drop_append_only_triggers,
    sqlite_insert_guard_v3,
)

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

TABLE = "turn_fields"
KEY = ("turn_key",)
JOURNAL = "workbench_journal"
_TURN_INDEXES = ("trace_hash", "journal_digest", "turn_id")
_CHUNK = 5000
_DAY_US = 86_400_000_000


def _time(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    offset = moment.utcoffset()
    if offset is None:
        return None
    us = timedelta(microseconds=1)
    return (moment.replace(tzinfo=None) - datetime.min) // us - offset // us + _DAY_US


def _typed(line: str) -> dict[str, Any]:
    entry = json.loads(line)
    verdicts = entry["verdicts"]

    def detail(axis: str) -> str | None:
        verdict = verdicts[axis]
        return verdict.get("runtime_detail") if isinstance(verdict, dict) else None

    return {
        "articulation_surface": entry["articulation_surface"],
        "walk_surface": entry["walk_surface"],
        "verdict_identity_detail": detail("identity"),
        "verdict_safety_detail": detail("safety"),
        "verdict_ethics_detail": detail("ethics"),
        "proposal_candidates": json.dumps(entry["proposal_candidates"], sort_keys=True,
                                          separators=(",", ":"), ensure_ascii=False),
        "turn_cost_ms": entry["turn_cost_ms"],
        "checkpoint_emitted": entry["checkpoint_emitted"],
    }


_EMPTY = dict.fromkeys(("articulation_surface", "walk_surface", "verdict_identity_detail",
                        "verdict_safety_detail", "verdict_ethics_detail", "proposal_candidates",
                        "turn_cost_ms", "checkpoint_emitted"))


def _rows(bind: sa.Connection) -> Iterator[dict[str, Any]]:
    """Every stored turn's row, in seq order."""
    journals: dict[str, tuple[int, int]] = {}  # journal -> (its last turn id, that turn's seq)
    batch_journal: dict[int, str] = {}  # batch -> the journal its journal turns belong to
    result = bind.execute(sa.text(
        "SELECT turn_key, seq, batch_id, kind, turn_id, timestamp, line FROM turns "
        "ORDER BY seq").execution_options(yield_per=_CHUNK))
    for turn_key, seq, batch_id, kind, turn_id, timestamp, line in result:
        row: dict[str, Any] = {"turn_key": turn_key, "batch_id": batch_id, "turn_seq": seq,
                               "core_time": _time(timestamp), "journal_id": None,
                               "turn_id": None, **_EMPTY}
        if kind == JOURNAL:
            journal = batch_journal.get(batch_id)
            if turn_id == 1:
                journal = turn_key
            elif journal is None:
                following = [(s, j) for j, (last, s) in journals.items() if last == turn_id - 1]
                journal = max(following)[1] if following else turn_key
            batch_journal[batch_id] = journal
            journals[journal] = (turn_id, seq)
            row.update(journal_id=journal, turn_id=turn_id, **_typed(line))
        yield row


def _create_indexes() -> None:
    op.create_index("ix_turn_fields_journal_id_turn_id", TABLE, ["journal_id", "turn_id"])
    op.create_index("ix_turn_fields_journal_id_turn_seq", TABLE, ["journal_id", "turn_seq"])
    op.create_index("ix_turn_fields_core_time_turn_seq", TABLE, ["core_time", "turn_seq"])
    op.create_index("ix_turn_fields_batch_id_turn_seq", TABLE, ["batch_id", "turn_seq"])


def upgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    position = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    table = op.create_table(
        TABLE,
        sa.Column("turn_key", sa.String(64), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("turn_seq", position, nullable=False),
        sa.Column("core_time", sa.BigInteger(), nullable=True),
        sa.Column("journal_id", sa.String(64), nullable=True),
        sa.Column("turn_id", sa.Integer(), nullable=True),
        sa.Column("articulation_surface", sa.Text(), nullable=True),
        sa.Column("walk_surface", sa.Text(), nullable=True),
        sa.Column("verdict_identity_detail", sa.Text(), nullable=True),
        sa.Column("verdict_safety_detail", sa.Text(), nullable=True),
        sa.Column("verdict_ethics_detail", sa.Text(), nullable=True),
        sa.Column("proposal_candidates", sa.Text(), nullable=True),
        sa.Column("turn_cost_ms", sa.BigInteger(), nullable=True),
        sa.Column("checkpoint_emitted", sa.Boolean(create_constraint=False), nullable=True),
        sa.PrimaryKeyConstraint(*KEY, name="pk_turn_fields"),
        sa.ForeignKeyConstraint(["batch_id"], ["ingest_batches.batch_id"],
                                name="fk_turn_fields_batch_id_ingest_batches",
                                deferrable=True, initially="DEFERRED"),
    )
    assert table is not None
    if not sqlite:  # PostgreSQL refuses CREATE INDEX while the rows' deferred FK checks pend
        _create_indexes()
    chunk: list[dict[str, Any]] = []
    for row in _rows(bind):
        chunk.append(row)
        if len(chunk) >= _CHUNK:
            bind.execute(table.insert(), chunk)
            chunk = []
    if chunk:
        bind.execute(table.insert(), chunk)
    if sqlite:  # built once over the rows
        _create_indexes()
    for column in _TURN_INDEXES:
        op.create_index(f"ix_turns_{column}_seq", "turns", [column, "seq"])
    create_append_only_triggers_v2(TABLE, KEY)
    if sqlite:
        op.execute(f"DROP TRIGGER {TABLE}_append_only_insert")
        op.execute(sqlite_insert_guard_v3(TABLE, KEY, rowid=True))


def downgrade() -> None:
    # Derived rows only: dropping them loses nothing the ledger holds.
    for column in _TURN_INDEXES:
        op.drop_index(f"ix_turns_{column}_seq", "turns")
    drop_append_only_triggers(TABLE)
    op.drop_table(TABLE)
