"""The standard alembic CLI, run from the repository root (its alembic.ini), does what
`core-audit db` does: same revisions, same tables and triggers, one transaction per run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from backends import raw_query
from cli_runs import cli, subprocess_environ
from raw_reads import dump
from store_support import raw_connect, revision_of, url_of

from store.db.schema.guards import expected_pg_guards, expected_sqlite_guards

REPO = Path(__file__).resolve().parents[2]
REV0004_DATA = REPO / "tests" / "data" / "store-rev0004.db"  # tests/data/README.md
# `alembic history`, oldest last: each revision and the one it follows.
STEPS = ["0018 -> 0019 (head)", "0017 -> 0018", "0016 -> 0017", "0015 -> 0016",
         "0014 -> 0015", "0013 -> 0014", "0012 -> 0013", "0011 -> 0012", "0010 -> 0011",
         "0009 -> 0010", "0008 -> 0009",
         "0007 -> 0008", "0006 -> 0007", "0005 -> 0006", "0004 -> 0005", "0003 -> 0004",
         "0002 -> 0003", "0001 -> 0002", "<base> -> 0001"]


def alembic(*args: str | Path, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """`python -m alembic ARGS` in the repository root, as an alembic user runs it there."""
    clean = {k: v for k, v in subprocess_environ(**(env or {})).items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", "alembic", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, env=clean)


def schema_of(db: Path) -> set[tuple[str, str, str]]:
    """Every table, index and trigger as SQLite stores its definition."""
    with raw_connect(db) as connection:
        return set(connection.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall())


def test_history_and_heads_list_the_revisions() -> None:
    heads = alembic("heads")
    assert (heads.returncode, heads.stdout) == (0, "0019 (head)\n"), heads.stderr
    history = alembic("history")
    assert history.returncode == 0, history.stderr
    steps = [line.split(",")[0] for line in history.stdout.splitlines() if " -> " in line]
    assert steps == STEPS


def test_upgrade_head_makes_the_store_core_audit_makes(tmp_path: Path) -> None:
    by_alembic, by_core_audit = tmp_path / "alembic.db", tmp_path / "core-audit.db"
    upgraded = alembic("-x", f"db={by_alembic}", "upgrade", "head")
    assert upgraded.returncode == 0, upgraded.stderr
    assert "Running upgrade 0007 -> 0008" in upgraded.stderr  # alembic's own log lines
    assert cli("db", "upgrade", "--db", by_core_audit).exit_code == 0

    assert schema_of(by_alembic) == schema_of(by_core_audit)
    triggers = {(name, sql) for kind, name, sql in schema_of(by_alembic) if kind == "trigger"}
    assert triggers == {(g.name, g.sql) for g in expected_sqlite_guards().values()}
    assert cli("ingest", "--db", by_alembic, REPO / "examples" / "adr_0225_frames.jsonl"
               ).exit_code == 0
    assert cli("verify", "--db", by_alembic).exit_code == 0


def test_current_reads_the_store_named_by_x_db_or_core_audit_db(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    assert cli("db", "upgrade", "--db", db).exit_code == 0
    for args, env in ((("-x", f"db={db}"), None), (("-x", f"db={url_of(db)}"), None),
                      ((), {"CORE_AUDIT_DB": str(db)})):
        current = alembic(*args, "current", env=env)
        assert (current.returncode, current.stdout) == (0, "0019 (head)\n"), current.stderr


def test_an_old_store_upgraded_by_alembic_equals_one_upgraded_by_core_audit(tmp_path: Path
                                                                           ) -> None:
    by_alembic, by_core_audit = tmp_path / "alembic.db", tmp_path / "core-audit.db"
    for copy in (by_alembic, by_core_audit):
        shutil.copyfile(REV0004_DATA, copy)
    assert alembic("-x", f"db={by_alembic}", "upgrade", "head").returncode == 0
    assert cli("db", "upgrade", "--db", by_core_audit).exit_code == 0

    assert dump(by_alembic) == dump(by_core_audit)
    assert cli("verify", "--db", by_alembic).exit_code == 0


def test_a_failed_upgrade_through_alembic_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "tampered.db"
    shutil.copyfile(REV0004_DATA, db)
    with raw_connect(db) as connection:  # a tampered chain: 0006 refuses to convert it
        connection.execute("DROP TRIGGER ledger_append_only_update")
        connection.execute("UPDATE ledger SET row_hash = ? WHERE seq = 5", ("0" * 64,))
    before = dump(db)

    upgraded = alembic("-x", f"db={db}", "upgrade", "head")

    assert upgraded.returncode == 1
    assert "cannot convert the ledger: seq 5" in upgraded.stderr
    assert "Running upgrade 0004 -> 0005" in upgraded.stderr  # ... and 0005 was undone too
    assert revision_of(url_of(db)) == "0004"
    assert dump(db) == before


@pytest.mark.postgres
def test_upgrade_head_on_postgresql_makes_the_guards_core_audit_checks(pg_url: str) -> None:
    upgraded = alembic("-x", f"db={pg_url}", "upgrade", "head")
    assert upgraded.returncode == 0, upgraded.stderr
    stored = {name for (name,) in raw_query(
        pg_url, "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN "
                "pg_namespace n ON n.oid = c.relnamespace WHERE NOT t.tgisinternal AND "
                "n.nspname = current_schema()")}
    assert stored == set(expected_pg_guards())
    assert cli("verify", "--db", pg_url).exit_code == 0
