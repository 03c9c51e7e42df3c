"""Where the writer's SQL time goes: the same rows replayed into the schema with parts removed.

    .venv/bin/python bench/ingest_sql.py [--occurrences 300000] [--seed 0] [--variants ...]

Generates frames (bench/frames.py), ingests them once through AuditStore, then replays the
stored rows, in leaf order and in the writer's chunks and table order, with a raw sqlite3
`executemany` into fresh stores made by the migrations, each with one part of the schema
removed or changed (the insert guards, lifted as the writer lifts them inside its
transaction, store/db/write/guard_lift.py; the residual filter indexes, the seq indexes, the
occurrences' residual index dropped or keyed on a 16-character prefix, ids stored as 32
bytes, bigger pages, a bigger page cache), on a connection set up as the writer's is (same
page cache, WAL, temp_store, no row-by-row foreign key checks). No Python work but the
replay loop: the figures are SQLite's alone. Prints seconds and each variant's ratio to the
floor (keys only) measured in the same run; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from frames import write_frames

from store.db.audit_store import AuditStore
from store.db.schema.engine import WRITE_CACHE_KIB
from store.db.write.guard_lift import INSERT_GUARDS
from store.db.write.input_kinds import INPUT_KINDS
from store.db.write.reading_process import CHUNK_ROWS

ROW_TABLES = ("contract_assessments", "contract_residuals", "residual_occurrences")
ID_COLUMNS = ("assessment_id", "residual_id")
FILTER_INDEXES = ("ix_contract_residuals_candidate_organ_seq",
                  "ix_contract_residuals_family_id_seq", "ix_contract_residuals_residual_code_seq",
                  "ix_contract_residuals_residual_kind_seq",
                  "ix_contract_residuals_source_axis_seq")


def _drop(kind: str, names: Callable[[sqlite3.Connection], list[str]]
          ) -> Callable[[sqlite3.Connection], None]:
    def apply(connection: sqlite3.Connection) -> None:
        for name in names(connection):
            connection.execute(f"DROP {kind} {name}")
    return apply


def _named(sql: str) -> Callable[[sqlite3.Connection], list[str]]:
    return lambda connection: [name for (name,) in connection.execute(sql)]


_NO_TRIGGERS = _drop("TRIGGER", _named("SELECT name FROM sqlite_master WHERE type = 'trigger'"))
_NO_INSERT_GUARDS = _drop("TRIGGER", lambda _: list(INSERT_GUARDS))


@dataclass(frozen=True)
class Variant:
    schema_changes: tuple[Callable[[sqlite3.Connection], None], ...] = ()
    blob_ids: bool = False  # the columns' TEXT affinity leaves a bytes value a BLOB
    cache_kib: int = WRITE_CACHE_KIB
    page_size: int = 4096  # SQLite's default; set when the file is created
    # Secondary (ix_) indexes dropped before the load and rebuilt, timed, before COMMIT.
    indexes_after: bool = False


VARIANTS: dict[str, Variant] = {
    "as stored": Variant(),  # every guard firing, as any other writer meets them
    "without the insert guards": Variant((_NO_INSERT_GUARDS,)),  # as the writer appends
    "without the residual filter indexes": Variant(
        (_drop("INDEX", lambda _: list(FILTER_INDEXES)),)),
    "32-byte BLOB ids instead of 64 hex characters": Variant(blob_ids=True),
    "a 1 GiB page cache": Variant(cache_kib=1 << 20),
    "8 KiB pages": Variant(page_size=8192),
    "16 KiB pages": Variant(page_size=16384),
    "without the seq indexes": Variant(
        (_drop("INDEX", lambda _: [f"ix_{table}_seq" for table in ROW_TABLES]),)),
    "the occurrences' residual index on 16 hex characters": Variant((
        _drop("INDEX", lambda _: ["ix_residual_occurrences_residual_id_seq"]),
        lambda connection: connection.execute(
            "CREATE INDEX ix_residual_occurrences_residual_prefix_seq ON residual_occurrences"
            " (substr(residual_id, 1, 16), seq)"))),
    "a 96 MiB page cache": Variant(cache_kib=96 * 1024),
    "without the occurrences' residual index": Variant(
        (_drop("INDEX", lambda _: ["ix_residual_occurrences_residual_id_seq"]),)),
    "without the insert guards, secondary indexes built after the load": Variant(
        (_NO_INSERT_GUARDS,), indexes_after=True),
    "keys only (floor)": Variant((
        _NO_TRIGGERS,
        _drop("INDEX", _named("SELECT name FROM sqlite_master WHERE type = 'index'"
                             " AND name LIKE 'ix_%'")))),
}


def stored_rows(path: Path) -> tuple[list[tuple[int, str, tuple]], dict[str, list[str]]]:
    """Every row of the residual tables in leaf order, and each table's columns."""
    connection = sqlite3.connect(path)
    columns = {t: [r[1] for r in connection.execute(f"PRAGMA table_info({t})")]
               for t in ROW_TABLES}
    rows = []
    for table in ROW_TABLES:
        seq = columns[table].index("seq")
        rows.extend((row[seq], table, row) for row in connection.execute(f"SELECT * FROM {table}"))
    connection.close()
    rows.sort(key=lambda row: row[0])
    return rows, columns


def replay(rows: list[tuple[int, str, tuple]], columns: dict[str, list[str]], path: Path,
           variant: Variant) -> float:
    created = sqlite3.connect(path)
    created.execute(f"PRAGMA page_size={variant.page_size}")
    created.execute("VACUUM")  # writes the empty file with that page size
    created.close()
    with AuditStore.open(str(path)):
        pass  # the migrations make the schema
    connection = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=WAL", "synchronous=FULL", "recursive_triggers=ON",
                   f"cache_size=-{variant.cache_kib}", "temp_store=MEMORY", "foreign_keys=OFF"):
        connection.execute(f"PRAGMA {pragma}")
    for change in variant.schema_changes:
        change(connection)
    built_after: list[str] = []
    if variant.indexes_after:
        for name, index in connection.execute("SELECT name, sql FROM sqlite_master"
                                              " WHERE type = 'index' AND name LIKE 'ix_%'"
                                              ).fetchall():
            connection.execute(f"DROP INDEX {name}")
            built_after.append(index)
    order = [kind.name for kind in INPUT_KINDS if kind.name in ROW_TABLES]
    if variant.blob_ids:
        ids = {t: [i for i, c in enumerate(columns[t]) if c in ID_COLUMNS] for t in ROW_TABLES}
        rows = [(seq, t, tuple(bytes.fromhex(v) if i in ids[t] else v
                               for i, v in enumerate(row))) for seq, t, row in rows]
    sql = {t: f"INSERT INTO {t} ({', '.join(columns[t])}) VALUES"
              f" ({', '.join('?' * len(columns[t]))})" for t in ROW_TABLES}
    started = time.perf_counter()
    connection.execute("BEGIN IMMEDIATE")
    for start in range(0, len(rows), CHUNK_ROWS):
        chunk = rows[start:start + CHUNK_ROWS]
        for table in order:
            connection.executemany(sql[table], [row for _, t, row in chunk if t == table])
    for index in built_after:
        connection.execute(index)
    connection.execute("COMMIT")
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--occurrences", type=int, default=300_000,
                        help="residual occurrences to generate")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated frames")
    parser.add_argument("--variants", nargs="*", choices=sorted(VARIANTS), default=list(VARIANTS),
                        help="the schema variants to replay into (default: all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="core-audit-bench-") as tmp:
        directory = Path(tmp)
        source = directory / "frames.jsonl"
        frames, occurrences = write_frames(source, args.occurrences, args.seed)
        with AuditStore.open(str(directory / "source.db")) as store, source.open("rb") as stream:
            store.ingest(stream, source=source.name)
        rows, columns = stored_rows(directory / "source.db")
        print(f"input: {frames} frames, {occurrences} residual occurrences, {len(rows)} rows"
              f" (seed {args.seed}); page cache {WRITE_CACHE_KIB // 1024} MiB")
        seconds = {}
        for name in [*args.variants, "keys only (floor)"]:
            if name in seconds:
                continue
            seconds[name] = replay(rows, columns, directory / f"{len(seconds)}.db",
                                   VARIANTS[name])
        floor = seconds["keys only (floor)"]
        for name, elapsed in seconds.items():
            print(f"{name}: {elapsed:.1f} s, {occurrences / elapsed:,.0f} occurrences/s,"
                  f" {elapsed / floor:.2f}x the floor")


if __name__ == "__main__":
    main()
