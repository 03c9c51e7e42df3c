"""surface_records and surface_occurrences are append-only against any connection.

docs/design.md: UPDATE and DELETE are rejected by triggers, and INSERT OR REPLACE / REPLACE INTO
cannot swap a row, also from a connection that sets no pragma (the `sqlite3` shell, another
tool). Here that connection is the standard library's, opened with nothing set.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from cli_runs import cli
from jsonl_files import write_jsonl
from raw_reads import dump, table_dump
from teaching_data import LIGHT_SURFACE

KEYS = {"surface_records": "surface_id", "surface_occurrences": "occurrence_id"}
CHANGED = {"surface_records": ("surface", "tampered"),
           "surface_occurrences": ("prompt", "tampered")}


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding a verified, a mismatched and a none record, each with an occurrence."""
    folder = tmp_path_factory.mktemp("append_only")
    db = folder / "audit.db"
    lines = [
        {"grounding_source": "teaching", "surface": LIGHT_SURFACE, "subject": "light",
         "intent": "cause", "session_id": "s1", "turn_id": "t1", "prompt": "Why?"},
        {"grounding_source": "teaching", "surface": LIGHT_SURFACE + " ", "subject": "light",
         "intent": "cause", "session_id": "s1", "turn_id": "t2"},
        {"grounding_source": "none", "subject": "light", "intent": "definition",
         "session_id": "s1", "turn_id": "t3"},
    ]
    result = cli("ingest", write_jsonl(folder / "in.jsonl", lines), "--db", db)
    assert result.exit_code == 0, result.output
    return db


@pytest.fixture
def store(populated: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "audit.db"
    with closing(sqlite3.connect(populated)) as source, closing(sqlite3.connect(copy)) as dest:
        source.backup(dest)
    return copy


def first_row(connection: sqlite3.Connection, table: str) -> dict[str, Any]:
    connection.row_factory = sqlite3.Row
    row = connection.execute(f"SELECT * FROM {table} ORDER BY seq LIMIT 1").fetchone()
    connection.row_factory = None
    return dict(row)


def _insert(verb: str, suffix: str = "") -> Callable[[sqlite3.Connection, str], None]:
    """Insert the table's first row again under its own key, one column changed."""
    def run(connection: sqlite3.Connection, table: str) -> None:
        row = first_row(connection, table)
        column, value = CHANGED[table]
        row[column] = value
        names = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        connection.execute(
            f"{verb} INTO {table} ({names}) VALUES ({marks})"
            + suffix.format(key=KEYS[table], column=column),
            tuple(row.values()))
    return run


def _sql(template: str) -> Callable[[sqlite3.Connection, str], None]:
    def run(connection: sqlite3.Connection, table: str) -> None:
        row = first_row(connection, table)
        column, value = CHANGED[table]
        connection.execute(template.format(table=table, key=KEYS[table], column=column),
                           {"key": row[KEYS[table]], "value": value})
    return run


TAMPERING = {
    "update one row": _sql("UPDATE {table} SET {column} = :value WHERE {key} = :key"),
    "update every row": _sql("UPDATE {table} SET {column} = :value"),
    "update the key": _sql("UPDATE {table} SET {key} = 'x' || {key} WHERE {key} = :key"),
    "update or replace": _sql("UPDATE OR REPLACE {table} SET {column} = :value"),
    "delete one row": _sql("DELETE FROM {table} WHERE {key} = :key"),
    "delete every row": _sql("DELETE FROM {table}"),
    "insert or replace": _insert("INSERT OR REPLACE"),
    "replace into": _insert("REPLACE"),
    "upsert do update": _insert(
        "INSERT", " ON CONFLICT DO UPDATE SET seq = excluded.seq"),
    "upsert do update on the key": _insert(
        "INSERT", " ON CONFLICT ({key}) DO UPDATE SET {column} = excluded.{column}"),
    "insert or ignore": _insert("INSERT OR IGNORE"),
    "upsert do nothing": _insert("INSERT", " ON CONFLICT DO NOTHING"),
}


@pytest.mark.parametrize("table", list(KEYS))
@pytest.mark.parametrize("attempt", list(TAMPERING))
def test_a_raw_connection_cannot_change_surface_rows(store: Path, table: str,
                                                     attempt: str) -> None:
    before = dump(store)
    rows_before = table_dump(store, table)
    with closing(sqlite3.connect(store)) as connection:
        # Nothing set: in particular no recursive_triggers, which REPLACE would otherwise need.
        assert connection.execute("PRAGMA recursive_triggers").fetchone() == (0,)
        changes = connection.total_changes
        try:
            TAMPERING[attempt](connection, table)
        except sqlite3.IntegrityError as exc:
            assert "append-only" in str(exc)
        else:
            assert connection.total_changes == changes, "the statement changed rows"
        connection.commit()  # whatever the statement left behind, try to keep it
    assert table_dump(store, table) == rows_before
    assert dump(store) == before
    result = cli("verify", "--db", store)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("table", list(KEYS))
def test_update_delete_and_replace_are_rejected_with_an_error(store: Path, table: str) -> None:
    """Not silently ignored: the statements that would change a row raise."""
    with closing(sqlite3.connect(store)) as connection:
        for attempt in ("update one row", "delete one row", "insert or replace",
                        "replace into", "upsert do update on the key"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                TAMPERING[attempt](connection, table)
            connection.rollback()
