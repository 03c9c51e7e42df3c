"""Turn fields (revision 0011): the writer's derived row per new turn, its proof by value
before COMMIT, and the rows `verify` derives again from the stored lines.

A journal is named by its turn 1's turn_key. The writer knows which journal an input holds:
its first journal line is turn 1 (JournalSequence), stored already or new. `verify` cannot
see the input again; it checks what the stored rows allow: turn 1 names its own journal, and
every later turn follows the journal's previous turn (turn_id - 1, stored earlier), one
journal per batch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, func, select

from store.db.schema.tables import turn_fields, turns
from store.db.verify.problems import Problem
from store.db.write.batch_proof import BatchNotStored
from store.db.write.inserts import content_columns, insert_values
from store.model.turn_fields import TURN_FIELD_COLUMNS, core_time, journal_fields
from store.model.turns import TurnKind

COLUMNS: tuple[str, ...] = tuple(str(c.name) for c in turn_fields.columns)
JOURNAL = TurnKind.WORKBENCH_JOURNAL.value
_CONTENT = content_columns("turns")
_KEY, _KIND, _TURN_ID, _TIME, _LINE = (_CONTENT.index(name) for name in (
    "turn_key", "kind", "turn_id", "timestamp", "line"))
_EMPTY = dict.fromkeys(TURN_FIELD_COLUMNS)
_READ_ROWS = 5000


class TurnFieldsNotStored(BatchNotStored):
    """The batch's turn_fields did not read back as written: nothing was committed."""


def derived_row(turn_key: str, batch_id: int, seq: int, kind: str, turn_id: int | None,
                timestamp: str | None, line: str, journal_id: str | None) -> tuple[Any, ...]:
    """A turn's turn_fields values, in COLUMNS order."""
    journal = kind == JOURNAL
    values: dict[str, Any] = {
        "turn_key": turn_key, "batch_id": batch_id, "turn_seq": seq,
        "core_time": core_time(timestamp), "journal_id": journal_id if journal else None,
        "turn_id": turn_id if journal else None,
        **(journal_fields(line) if journal else _EMPTY)}
    return tuple(values[name] for name in COLUMNS)


def _row_bytes(values: tuple[Any, ...]) -> bytes:
    # A Boolean read back through SQLAlchemy is a bool, as written; ints and text as they are.
    return json.dumps(values, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


@dataclass
class TurnFieldsWriter:
    """One batch's turn_fields rows, as its turns are met in input order."""

    batch_id: int
    journal_id: str | None = None  # the input's journal: its turn 1's key
    rows: int = 0
    digest: Any = field(default_factory=hashlib.sha256)

    def saw_stored(self, content: tuple[Any, ...]) -> None:
        if content[_KIND] == JOURNAL and content[_TURN_ID] == 1:
            self.journal_id = content[_KEY]

    def new_row(self, seq: int, content: tuple[Any, ...]) -> tuple[Any, ...]:
        if content[_KIND] == JOURNAL and content[_TURN_ID] == 1:
            self.journal_id = content[_KEY]
        row = derived_row(content[_KEY], self.batch_id, seq, content[_KIND], content[_TURN_ID],
                          content[_TIME], content[_LINE], self.journal_id)
        self.rows += 1
        self.digest.update(_row_bytes(row))
        return row

    def insert(self, connection: Connection, rows: list[tuple[Any, ...]]) -> None:
        insert_values(connection, "turn_fields", COLUMNS, rows)

    def prove(self, connection: Connection) -> None:
        """TurnFieldsNotStored unless the batch's rows read back value for value."""
        found, digest = 0, hashlib.sha256()
        for row in _batch_rows(connection, self.batch_id):
            found += 1
            digest.update(_row_bytes(row))
        if found != self.rows or digest.digest() != self.digest.digest():
            problem = (f"{self.rows} rows were inserted, {found} read back" if found != self.rows
                       else "rows read back differ from the rows inserted")
            raise TurnFieldsNotStored(
                f"turn_fields: the batch did not read back as written ({problem}): nothing "
                "was written; an out-of-band trigger, rule or row-level security policy may "
                "drop or alter rows (run `core-audit verify`)")


def _batch_rows(connection: Connection, batch_id: int) -> Iterator[tuple[Any, ...]]:
    statement = (select(*(turn_fields.c[name] for name in COLUMNS))
                 .where(turn_fields.c.batch_id == batch_id).order_by(turn_fields.c.turn_seq))
    result = connection.execute(statement.execution_options(yield_per=_READ_ROWS))
    for row in result:
        yield tuple(row)


def _journal_ends(connection: Connection, after_batch: int) -> dict[str, int]:
    """Each journal's last turn id stored by batch `after_batch`."""
    c = turn_fields.c
    return {journal: last for journal, last in connection.execute(
        select(c.journal_id, func.max(c.turn_id))
        .where(c.batch_id <= after_batch, c.journal_id.is_not(None))
        .group_by(c.journal_id))}


def turn_field_problems(connection: Connection, after_batch: int = 0) -> Iterator[Problem]:
    """Every turn of the batches after `after_batch` has exactly the row its line derives
    (its journal as the module says), and no row, of any batch, names a turn that is not
    stored."""
    t, f = turns.c, turn_fields.c
    ends = _journal_ends(connection, after_batch) if after_batch else {}
    batch_journal: dict[int, str] = {}
    statement = (select(t.turn_key, t.seq, t.batch_id, t.kind, t.turn_id, t.timestamp, t.line,
                        *(f[name] for name in COLUMNS))
                 .join_from(turns, turn_fields, f.turn_key == t.turn_key, isouter=True)
                 .where(t.batch_id > after_batch).order_by(t.seq))
    width = 7
    for row in connection.execute(statement.execution_options(yield_per=_READ_ROWS)):
        key, seq, batch_id, kind, turn_id, timestamp, line = row[:width]
        stored = tuple(row[width:])
        where = f"turn {key}"
        if stored[0] is None:
            yield Problem(seq, "turn_fields", where, "row is missing")
            continue
        journal = stored[COLUMNS.index("journal_id")]
        if kind == JOURNAL:
            expected_journal = _follows(journal, key, turn_id, batch_id, ends, batch_journal)
            if expected_journal is not None:
                yield Problem(seq, "turn_fields", where, expected_journal)
            ends[journal] = turn_id
        want = derived_row(key, batch_id, seq, kind, turn_id, timestamp, line, journal)
        if stored != want:
            differing = [name for name, a, b in zip(COLUMNS, stored, want, strict=True)
                         if a != b]
            yield Problem(seq, "turn_fields", where,
                          f"{', '.join(differing)} differ from what its line says")
    orphans = connection.execute(
        select(f.turn_key).join_from(turn_fields, turns, t.turn_key == f.turn_key,
                                     isouter=True)
        .where(t.turn_key.is_(None)).order_by(f.turn_key))  # any batch: rows added late
    for (key,) in orphans:
        yield Problem(None, "turn_fields", f"turn {key}",
                      "row names no stored turn (added out of band)")


def _follows(journal: str | None, key: str, turn_id: int, batch_id: int,
             ends: dict[str, int], batch_journal: dict[int, str]) -> str | None:
    """What is wrong with a journal turn's journal, or None."""
    if journal is None:
        return "a journal turn without a journal"
    if batch_journal.setdefault(batch_id, journal) != journal:
        return f"its batch holds journal {batch_journal[batch_id]}, it names {journal}"
    if turn_id == 1:
        return None if journal == key else f"turn 1 names journal {journal}, not its own key"
    if ends.get(journal) != turn_id - 1:
        return (f"journal {journal} has no turn {turn_id - 1} stored before it (its last: "
                f"{ends.get(journal)})")
    return None
