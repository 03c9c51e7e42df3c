"""Append-only against a raw connection that sets no pragma (as the sqlite3 shell would)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from cli_runs import cli
from raw_reads import dump
from store_support import TABLES, raw_connect

# Per table: its primary key and a text column an attacker would like to change.
PRIMARY_KEY = {
    "ingest_batches": ("batch_id",),
    "contract_assessments": ("assessment_id",),
    "contract_residuals": ("residual_id",),
    "residual_occurrences": ("assessment_id", "ordinal"),
    "residual_tallies": ("batch_id", "ordinal"),
    "sighting_counts": ("batch_id", "record_seq"),
    "tree_heads": ("batch_id",),
}
EDITABLE = {
    "ingest_batches": "source",
    "contract_assessments": "explanation",
    "contract_residuals": "explanation",
    "residual_occurrences": "residual_id",
    "residual_tallies": "residual_code",
    "sighting_counts": "record_table",
    "tree_heads": "root_hash",
}
# The tallies, sighting counts and tree heads are derived, not leaves, but guarded all the same.
GUARDED = (*TABLES, "residual_tallies", "sighting_counts", "tree_heads")


def _first_row(connection: sqlite3.Connection, table: str) -> dict[str, object]:
    order = ", ".join(PRIMARY_KEY[table])
    cursor = connection.execute(f"SELECT * FROM {table} ORDER BY {order} LIMIT 1")
    names = [d[0] for d in cursor.description]
    return dict(zip(names, cursor.fetchone(), strict=True))


def _insert(verb: str, table: str, row: dict[str, object]) -> tuple[str, list[object]]:
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    return f"{verb} INTO {table} ({columns}) VALUES ({marks})", list(row.values())


def _statements(connection: sqlite3.Connection, table: str) -> dict[str, tuple[str, list]]:
    """Every way to change an existing row, aimed at the table's first row."""
    row = _first_row(connection, table)
    column = EDITABLE[table]
    swapped = {**row, column: "0" * 64}
    pk = ", ".join(PRIMARY_KEY[table])
    where = " AND ".join(f"{k} = ?" for k in PRIMARY_KEY[table])
    key_values = [row[k] for k in PRIMARY_KEY[table]]
    upsert_sql, upsert_args = _insert("INSERT", table, swapped)
    statements = {
        "update": (f"UPDATE {table} SET {column} = ? WHERE {where}", ["0" * 64, *key_values]),
        "update all": (f"UPDATE {table} SET {PRIMARY_KEY[table][0]} = {PRIMARY_KEY[table][0]}",
                       []),
        "delete": (f"DELETE FROM {table} WHERE {where}", key_values),
        "delete all": (f"DELETE FROM {table}", []),
        "insert or replace": _insert("INSERT OR REPLACE", table, swapped),
        "replace into": _insert("REPLACE", table, swapped),
        "upsert do update": (
            f"{upsert_sql} ON CONFLICT ({pk}) DO UPDATE SET {column} = excluded.{column}",
            upsert_args,
        ),
    }
    return statements


def _new_key_on_existing_seq(connection: sqlite3.Connection, table: str) -> dict[str, object]:
    """A new key that reuses a stored row's seq: REPLACE must not delete that row for it."""
    row = _first_row(connection, table)
    new_key = {**row, **{k: ("f" * 64 if isinstance(row[k], str) else 10**6)
                         for k in PRIMARY_KEY[table]}}
    new_key[EDITABLE[table]] = "0" * 64
    return new_key


STATEMENT_KINDS = ("update", "update all", "delete", "delete all", "insert or replace",
                   "replace into", "upsert do update")


CASES = [(table, kind) for table in GUARDED for kind in STATEMENT_KINDS]


@pytest.mark.parametrize(("table", "kind"), CASES)
def test_a_raw_connection_cannot_change_a_stored_row(
    examples_store: Path, table: str, kind: str
) -> None:
    before = dump(examples_store)
    connection = raw_connect(examples_store)
    sql, args = _statements(connection, table)[kind]

    with pytest.raises(sqlite3.IntegrityError, match=f"{table} is append-only"):
        connection.execute(sql, args)
    connection.close()

    assert dump(examples_store) == before


@pytest.mark.parametrize("table", TABLES)
def test_replace_with_a_new_key_on_a_stored_seq_keeps_every_row_and_is_flagged(
    examples_store: Path, table: str
) -> None:
    """seq is unique through the ledger, not by a constraint, so REPLACE has nothing to delete
    through; the stray row it adds is an out-of-band insert, which verify names."""
    before = dump(examples_store)
    connection = raw_connect(examples_store)
    stray = _new_key_on_existing_seq(connection, table)
    sql, args = _insert("REPLACE", table, stray)
    connection.execute(sql, args)
    connection.commit()
    connection.close()

    after = dump(examples_store)
    assert set(before) <= set(after)  # every stored row is still there, unchanged
    assert len(after) == len(before) + 1
    result = cli("verify", "--db", examples_store)
    assert result.exit_code == 1
    assert f"seq {stray['seq']}: {table}" in result.stderr


def test_a_raw_connection_runs_with_recursive_triggers_and_foreign_keys_off(
    examples_store: Path,
) -> None:
    """The premise of the tests above: nothing our engine sets is on in a raw connection."""
    connection = raw_connect(examples_store)
    assert connection.execute("PRAGMA recursive_triggers").fetchone() == (0,)
    assert connection.execute("PRAGMA foreign_keys").fetchone() == (0,)
    connection.close()


def test_insert_or_ignore_of_an_existing_row_changes_nothing(examples_store: Path) -> None:
    before = dump(examples_store)
    connection = raw_connect(examples_store)
    row = _first_row(connection, "contract_residuals")
    sql, args = _insert("INSERT OR IGNORE", "contract_residuals", {**row, "explanation": "x"})
    with contextlib.suppress(sqlite3.IntegrityError):
        connection.execute(sql, args)
    connection.close()
    assert dump(examples_store) == before
