"""SQLite: the writer's bulk appends run with the insert guards lifted inside its transaction.

A BEFORE INSERT trigger gives every inserted row its own statement journal and trigger
program: about a quarter of a batch's SQL time at 1M occurrences (bench/ingest_sql.py).
Lifting them for the writer's own plain INSERTs keeps what they guarantee:
- the batch holds the file's only write lock from BEGIN IMMEDIATE to COMMIT, so no other
  connection can insert, REPLACE, update or delete while they are away;
- readers see committed states only, and every committed state has every guard: the guards
  are recreated from their stored text before the batch commits, and a batch that fails or
  is killed rolls the drop back with the rest of its writes;
- the writer inserts only keys it looked up, never a rowid, under the tables' own keys.
The stored text is put back as it was, tampered or not: the writer neither repairs nor hides
what `verify` would report. A batch of one chunk keeps them (lifting costs ~1 ms and a schema
change that readers then re-read).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, bindparam, text

from store.db.schema.guards import guard_name
from store.db.schema.record_kinds import APPEND_ONLY_TABLES

INSERT_GUARDS: tuple[str, ...] = tuple(guard_name(t, "insert") for t in APPEND_ONLY_TABLES)

_STORED_GUARDS = text(
    "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN :names "
    "ORDER BY name"
).bindparams(bindparam("names", expanding=True))


class InsertGuards:
    """A write transaction's insert guards: lifted on demand, restored once, on SQLite only
    (PostgreSQL has no REPLACE and no insert guards)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.lifted: list[tuple[str, str]] | None = None  # (name, stored text), to put back

    def lift(self) -> None:
        connection = self.connection
        if self.lifted is not None or connection.dialect.name != "sqlite":
            return
        if not connection.in_transaction():
            raise RuntimeError("insert guards may be lifted only inside a write transaction")
        self.lifted = [(name, sql) for name, sql in connection.execute(
            _STORED_GUARDS, {"names": list(INSERT_GUARDS)})]
        for name, _ in self.lifted:
            connection.exec_driver_sql(f'DROP TRIGGER "{name}"')

    def restore(self) -> None:
        for _, sql in self.lifted or ():
            self.connection.exec_driver_sql(sql)
        self.lifted = None


@contextmanager
def insert_guards_liftable(connection: Connection) -> Iterator[InsertGuards]:
    """Guards the block may lift (InsertGuards.lift), recreated from their stored text once
    it ends without an error; on an error the caller's transaction rolls the drop back."""
    guards = InsertGuards(connection)
    yield guards
    guards.restore()
