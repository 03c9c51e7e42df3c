"""Reads of a store from outside: a SQLite file through the standard-library `sqlite3`, a
PostgreSQL store through a raw driver connection, never the store's own query code, so what a
test sees is what is in the database."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from backends import raw_query


def query(db: Path | str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of `sql` read raw: a SQLite file, or a PostgreSQL store given by its URL."""
    if isinstance(db, str):
        return raw_query(db, sql, *params)
    with closing(sqlite3.connect(db)) as connection:
        return connection.execute(sql, params).fetchall()


def table_rows(db: Path | str, table: str) -> list[dict[str, Any]]:
    if isinstance(db, str):
        columns = [str(name) for (name,) in raw_query(
            db, "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                "current_schema() AND table_name = ? ORDER BY ordinal_position", table)]
        return [dict(zip(columns, row, strict=True))
                for row in raw_query(db, f"SELECT * FROM {table} ORDER BY seq")]
    with closing(sqlite3.connect(db)) as connection:
        connection.row_factory = sqlite3.Row
        rows = connection.execute(f"SELECT * FROM {table} ORDER BY seq").fetchall()
        return [dict(row) for row in rows]


def dump(db: Path) -> list[str]:
    """The whole database as SQL text: schema, triggers, indexes and every row."""
    with closing(sqlite3.connect(db)) as connection:
        return list(connection.iterdump())


def table_dump(db: Path, table: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(db)) as connection:
        return connection.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()


def triggers(db: Path) -> set[str]:
    return {name for (name,) in query(db, "SELECT name FROM sqlite_master WHERE type='trigger'")}


def trigger_definitions(db: Path) -> set[tuple[str, str, str]]:
    """Every trigger as SQLite stores it: (name, table, CREATE text)."""
    return set(query(db, "SELECT name, tbl_name, sql FROM sqlite_master WHERE type='trigger'"))


def tables(db: Path) -> set[str]:
    return {name for (name,) in query(db, "SELECT name FROM sqlite_master WHERE type='table'")}


def indexes(db: Path) -> dict[str, tuple[str, list[str]]]:
    """Every index a CREATE INDEX made (not a key's own), by name: its table and columns."""
    with closing(sqlite3.connect(db)) as connection:
        found = connection.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            "ORDER BY name").fetchall()
        return {name: (table, [column for _, _, column in connection.execute(
            f"PRAGMA index_info('{name}')")]) for name, table in found}
