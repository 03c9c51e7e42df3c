"""What a store sends to its database, as a test sees it: the statements captured while a call
runs, and SQLite's plan for one of them, asked on a read-only connection of its own."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from typing import Any

from sqlalchemy import event

from store.db.audit_store import AuditStore


@contextmanager
def sent_statements(db: AuditStore, *, writes: bool = False
                    ) -> Iterator[list[tuple[str, Any]]]:
    """(sql, params) of every statement `db` sends inside the block, in order (`writes`: its
    writer's, as `ingest` sends them, rather than its readers')."""
    statements: list[tuple[str, Any]] = []
    engine = db.write_engine() if writes else db.engine

    def sent(_c: Any, _cur: Any, sql: str, params: Any, _ctx: Any, _many: Any) -> None:
        statements.append((sql, params))

    event.listen(engine, "before_cursor_execute", sent)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", sent)


def sqlite_plan(db: AuditStore, sql: str, params: Any) -> list[str]:
    """SQLite's EXPLAIN QUERY PLAN of `sql` on `db`'s file: one line a step."""
    path = db.execute(lambda c: c.exec_driver_sql("PRAGMA database_list").all())[0][2]
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        return [str(step[3]) for step in connection.execute(f"EXPLAIN QUERY PLAN {sql}",
                                                            params)]


def only_journal(db: AuditStore) -> str:
    """The journal id of a store that holds one journal."""
    return str(db.execute(lambda c: c.exec_driver_sql(
        "SELECT DISTINCT journal_id FROM turn_fields WHERE journal_id IS NOT NULL"
    ).scalar_one()))
