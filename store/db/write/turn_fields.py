"""Turn fields (revision 0011): the writer's derived row per new turn (`verify` derives the
same, store/db/verify/derived_checks.py) and its proof by value before COMMIT.

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

from sqlalchemy import Connection, select

from store.db.schema.tables import turn_fields
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
READ_ROWS = 5000


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
    result = connection.execute(statement.execution_options(yield_per=READ_ROWS))
    for row in result:
        yield tuple(row)
