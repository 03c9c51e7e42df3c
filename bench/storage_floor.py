"""The storage floor of an ingest: the least any writer of the same store must spend.

    .venv/bin/python bench/storage_floor.py STORE.db

Every row the ingest stored (ledgered records, derived tables, the full-text index's
documents) re-inserted by `sqlite3.executemany` into an empty copy of the store's schema (the
migrations', same tables and indexes, every trigger dropped), on a connection set up as the
writer's is (WAL, synchronous=FULL, the write page cache, temp_store=MEMORY, no row-by-row
foreign key checks), in one transaction; plus one sha256 per leaf (each ledgered row as JSON,
hashed once). Rows are read into memory a table slice at a time, outside the timing; ledgered
rows go in seq order, in the writer's chunks and table order. Prints seconds; asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from store.db.audit_store import AuditStore
from store.db.schema.engine import WRITE_CACHE_KIB
from store.db.schema.text_search import TEXT_INDEXES
from store.db.write.input_kinds import INPUT_KINDS
from store.db.write.reading_process import CHUNK_ROWS

_SLICE_ROWS = 200_000  # rows held in memory at once, per table


@dataclass
class Floor:
    rows: int = 0
    leaves: int = 0
    insert_seconds: float = 0.0
    hash_seconds: float = 0.0
    cpu_seconds: float = 0.0  # user+sys of both parts (a busy machine stretches wall time)

    @property
    def seconds(self) -> float:
        return self.insert_seconds + self.hash_seconds


def _columns(connection: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]


def _stored_tables(source: sqlite3.Connection, fresh: sqlite3.Connection) -> list[str]:
    """The tables holding rows of the ingest: every real table the fresh copy has empty
    (not FTS5's shadow tables nor virtual tables: the index is rebuilt from its documents)."""
    virtual = {name for (name,) in source.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'")}
    shadow = {name for name in (n for (n,) in source.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'"))
        if any(name.startswith(v + "_") for v in virtual)}
    names = [name for (name,) in source.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " ORDER BY name")]
    return [name for name in names if name not in virtual | shadow
            and fresh.execute(f"SELECT count(*) FROM {name}").fetchone()[0] == 0
            and source.execute(f"SELECT count(*) FROM {name}").fetchone()[0] > 0]


def _empty_copy(path: Path) -> sqlite3.Connection:
    with AuditStore.open(str(path)):
        pass  # the migrations make the schema
    connection = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=WAL", "synchronous=FULL", f"cache_size=-{WRITE_CACHE_KIB}",
                   "temp_store=MEMORY", "foreign_keys=OFF"):
        connection.execute(f"PRAGMA {pragma}")
    for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        connection.execute(f"DROP TRIGGER {name}")
    return connection


def storage_floor(store: Path, directory: Path) -> Floor:
    """Seconds to re-insert `store`'s rows into an empty copy at `directory`/floor.db."""
    floor = Floor()
    source = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    copy = _empty_copy(directory / "floor.db")
    tables = _stored_tables(source, copy)
    ledgered = [kind.name for kind in INPUT_KINDS if kind.name in tables]
    fts = {str(index.texts.name): index for index in TEXT_INDEXES.values()}

    def insert(table: str, columns: list[str], rows: list[tuple]) -> None:
        sql = (f"INSERT INTO {table} ({', '.join(columns)})"
               f" VALUES ({', '.join('?' * len(columns))})")
        started, cpu = time.perf_counter(), time.process_time()
        copy.executemany(sql, rows)
        floor.insert_seconds += time.perf_counter() - started
        floor.cpu_seconds += time.process_time() - cpu
        floor.rows += len(rows)

    def hashed(rows: list[tuple]) -> None:
        started, cpu = time.perf_counter(), time.process_time()
        sha256, dumps = hashlib.sha256, orjson.dumps
        for row in rows:
            sha256(dumps(row)).digest()
        floor.hash_seconds += time.perf_counter() - started
        floor.cpu_seconds += time.process_time() - cpu
        floor.leaves += len(rows)

    copy.execute("BEGIN IMMEDIATE")
    # The ledgered tables interleaved in seq order, a slice of seqs at a time.
    columns = {t: _columns(source, t) for t in tables}
    last = max((source.execute(f"SELECT max(seq) FROM {t}").fetchone()[0] or 0)
               for t in ledgered) if ledgered else 0
    for start in range(0, last, _SLICE_ROWS):
        rows = sorted(
            ((row[columns[t].index("seq")], t, row) for t in ledgered for row in source.execute(
                f"SELECT * FROM {t} WHERE seq > ? AND seq <= ?", (start, start + _SLICE_ROWS))),
            key=lambda item: item[0])
        for at in range(0, len(rows), CHUNK_ROWS):
            chunk = rows[at:at + CHUNK_ROWS]
            for table in ledgered:
                mine = [row for _, t, row in chunk if t == table]
                if mine:
                    insert(table, columns[table], mine)
                    hashed(mine)
    for table in tables:
        if table in ledgered:
            continue
        after = 0  # by rowid, a slice at a time
        while True:
            rows = source.execute(f"SELECT rowid, * FROM {table} WHERE rowid > ?"
                                  f" ORDER BY rowid LIMIT {_SLICE_ROWS}", (after,)).fetchall()
            if not rows:
                break
            after = rows[-1][0]
            insert(table, columns[table], [row[1:] for row in rows])
            if table in fts:  # its documents into the FTS5 index, as the writer does
                index = fts[table]
                at = [columns[table].index(c) for c in index.columns]
                insert(index.fts, ["rowid", *index.columns],
                       [(row[1], *(row[1 + i] for i in at)) for row in rows])
                floor.rows -= len(rows)  # the same documents, not more rows
    started, cpu = time.perf_counter(), time.process_time()
    copy.execute("COMMIT")
    floor.insert_seconds += time.perf_counter() - started
    floor.cpu_seconds += time.process_time() - cpu
    copy.close()
    source.close()
    return floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", type=Path,
                        help="the SQLite store an ingest wrote (its rows are copied)")
    parser.add_argument("--dir", type=Path, default=Path("."),
                        help="where the copy (floor.db) is made; it must not exist")
    args = parser.parse_args()
    if (args.dir / "floor.db").exists():
        sys.exit(f"{args.dir / 'floor.db'} exists")
    floor = storage_floor(args.store, args.dir)
    print(f"storage floor: {floor.rows:,} rows inserted in {floor.insert_seconds:.1f} s,"
          f" {floor.leaves:,} leaves hashed in {floor.hash_seconds:.1f} s:"
          f" {floor.seconds:.1f} s ({floor.cpu_seconds:.1f} s CPU)")


if __name__ == "__main__":
    main()
