"""Shared helpers for the surface-record tests: the CLI in-process, and raw reads of a file.

Reads go through the standard-library `sqlite3`, not the store's own query code, so what a
test sees is what is in the file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from backends import raw_query
from click.testing import CliRunner, Result

from store.cli import main
from store.db.tables import metadata

# The CLI must not pick up a store or data dirs from the environment the tests run in.
CLEAN_ENV: dict[str, str | None] = {
    "CORE_AUDIT_DB": None,
    "CORE_AUDIT_PACKS": None,
    "CORE_AUDIT_TEACHING": None,
    "CORE_AUDIT_IMMUTABLE": None,
}


def cli(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], env={**CLEAN_ENV, **(env or {})})


def write_jsonl(path: Path, records: list[dict[str, Any] | str]) -> Path:
    text = "".join(
        (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records
    )
    path.write_bytes(text.encode("utf-8"))
    return path


def query(db: Path | str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of `sql` read raw: a SQLite file, or a PostgreSQL store given by its URL."""
    if isinstance(db, str):
        return raw_query(db, sql, *params)
    with closing(sqlite3.connect(db)) as connection:
        return connection.execute(sql, params).fetchall()


def table_rows(db: Path | str, table: str) -> list[dict[str, Any]]:
    if isinstance(db, str):
        columns = [name for (name,) in raw_query(
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


def tables(db: Path) -> set[str]:
    return {name for (name,) in query(db, "SELECT name FROM sqlite_master WHERE type='table'")}


# The leaf tables and their keys (DESIGN.md: every stored row is one leaf, in seq order).
LEAF_KEYS = {
    "ingest_batches": ("batch_id",),
    "contract_assessments": ("assessment_id",),
    "contract_residuals": ("residual_id",),
    "residual_occurrences": ("assessment_id", "ordinal"),
    "surface_records": ("surface_id",),
    "surface_occurrences": ("occurrence_id",),
    "turns": ("turn_key",),
}
_BOOLEANS = {"runnable", "refusal_emitted", "hedge_injected"}
_LATE = {"surface_form", "hops", "hop_chain_ids", "candidate_chain_ids", "surface_prefix",
         "checked_against", "turn_key"}


def leaf_entry(table: str, row: dict[str, object]) -> bytes:
    """DESIGN.md's leaf entry, written out here: canonical JSON of the table and the stored
    values, without seq and without a null column that revision 0005 added."""
    values = {k: (bool(v) if k in _BOOLEANS and v is not None else v)
              for k, v in row.items() if k != "seq" and not (v is None and k in _LATE)}
    return json.dumps({"table": table, "row": values}, ensure_ascii=False,
                      separators=(",", ":"), sort_keys=True).encode("utf-8")


def history(path: Path | str) -> list[tuple[object, ...]]:
    """The append history, whatever the revision: (seq, table, key, sha256 of the row's
    entry) in seq order — from the hash chain before revision 0006, from the rows after."""
    present = {name for (name,) in query(path, _TABLE_NAMES[isinstance(path, str)])}
    if "ledger" in present:
        return [tuple(r) for r in query(
            path, "SELECT seq, table_name, row_key, row_hash FROM ledger ORDER BY seq")]
    found = []
    for table, key in LEAF_KEYS.items():
        if table not in present:
            continue
        known = {column.name for column in metadata.tables[table].columns}
        for row in table_rows(path, table):
            # A column this version does not know (a later revision's) is not in its leaf.
            row = {k: v for k, v in row.items() if k in known}
            found.append((row["seq"], table, "/".join(str(row[c]) for c in key),
                          hashlib.sha256(leaf_entry(table, row)).hexdigest()))
    return sorted(found, key=lambda item: item[0])  # type: ignore[arg-type, return-value]


_TABLE_NAMES = {
    False: "SELECT name FROM sqlite_master WHERE type = 'table'",
    True: "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()",
}


def rfc9162_root(leaf_entries: list[bytes]) -> bytes:
    """RFC 9162 section 2.1.1's MTH over the entries, written out here (not the store's)."""
    if not leaf_entries:
        return hashlib.sha256(b"").digest()
    if len(leaf_entries) == 1:
        return hashlib.sha256(b"\x00" + leaf_entries[0]).digest()
    split = 1 << ((len(leaf_entries) - 1).bit_length() - 1)
    return hashlib.sha256(b"\x01" + rfc9162_root(leaf_entries[:split])
                          + rfc9162_root(leaf_entries[split:])).digest()


def leaf_entries(path: Path | str) -> list[bytes]:
    """Every stored row's entry, in seq order: the leaves of the store's tree."""
    found = [(row["seq"], leaf_entry(table, row)) for table in LEAF_KEYS
             for row in table_rows(path, table)]
    return [entry for _, entry in sorted(found, key=lambda item: item[0])]
