"""`core-audit copy`: SQLite -> PostgreSQL -> SQLite keeps every row, id, leaf and tree head;
the target is verified before it commits and left untouched on any failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from backends import EXAMPLE_FILES, pg_schema
from cli_runs import cli
from sqlalchemy import select

from store.db import copy as copy_module
from store.db.audit_store import AuditStore
from store.db.schema.record_kinds import APPEND_ONLY_TABLES
from store.db.schema.tables import metadata
from store.db.verify.store_checks import Problem
from store.db.write import reading_process as row_stream

pytestmark = pytest.mark.postgres



def _dump(url: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table in key order, batch times included."""
    with AuditStore.open(url, read_only=True) as store, store.engine.connect() as connection:
        return {name: [dict(r) for r in connection.execute(
                    select(metadata.tables[name]).order_by(
                        *metadata.tables[name].primary_key.columns)
                ).mappings()] for name in APPEND_ONLY_TABLES}


def _checkpoint(url: str) -> str:
    """The C2SP checkpoint text (origin, size, base64 root, blank line)."""
    result = cli("checkpoint", "--db", url)
    assert result.exit_code == 0, result.output
    return result.stdout


def _size(checkpoint: str) -> int:
    return int(checkpoint.split("\n")[1])


def _verify_against(url: str, checkpoint: str, tmp_path: Path) -> None:
    kept = tmp_path / "checkpoint.txt"
    kept.write_text(checkpoint, encoding="utf-8")
    verify = cli("verify", "--db", url, "--checkpoint", kept)
    assert verify.exit_code == 0, verify.output


def _copy(source: str, target: str) -> str:
    result = cli("copy", "--from", source, "--to", target)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def _ingest(url: str, *paths: Path) -> None:
    for path in paths:
        result = cli("ingest", "--db", url, path)
        assert result.exit_code == 0, result.output


def test_round_trip_sqlite_postgresql_sqlite(tmp_path: Path, pg_url: str) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    back = f"sqlite:///{tmp_path / 'back.db'}"
    _ingest(source, *EXAMPLE_FILES[:2])
    head = _checkpoint(source)  # also fixes the log's origin, which travels with the copy
    rows = _size(head)

    assert _copy(source, pg_url).startswith(f"copied {rows} rows (0 already there)")
    assert _copy(pg_url, back).startswith(f"copied {rows} rows (0 already there)")
    original = _dump(source)
    assert _dump(pg_url) == original
    assert _dump(back) == original
    assert _checkpoint(pg_url) == _checkpoint(back) == head
    for url in (pg_url, back):
        _verify_against(url, head, tmp_path)

    # Idempotent: nothing copied twice.
    assert _copy(source, pg_url).startswith(f"copied 0 rows ({rows} already there)")
    assert _copy(pg_url, back).startswith(f"copied 0 rows ({rows} already there)")
    assert _dump(pg_url) == _dump(back) == original

    # A source that grew: only the new rows travel, and the trees still agree.
    _ingest(source, EXAMPLE_FILES[2])
    grown = _checkpoint(source)
    added = _size(grown) - rows
    assert _copy(source, pg_url).startswith(f"copied {added} rows ({rows} already there)")
    assert _copy(pg_url, back).startswith(f"copied {added} rows")
    assert _dump(pg_url) == _dump(back) == _dump(source)
    assert _checkpoint(pg_url) == _checkpoint(back) == grown


def test_a_copy_leaves_the_planner_statistics_of_what_it_copied(tmp_path: Path,
                                                                pg_url: str) -> None:
    # Autovacuum would gather them a minute or more later; a fresh schema's statements were
    # planned as scans meanwhile. The first two examples: 12 residuals, 10 assessments
    # (spec_values' TOTAL_RESIDUALS and TOTAL_ASSESSMENTS); ANALYZE of a table this small
    # reads every row. Before it, PostgreSQL shows -1: never analyzed.
    source = f"sqlite:///{tmp_path / 'source.db'}"
    _ingest(source, *EXAMPLE_FILES[:2])

    def reltuples() -> dict[str, float]:
        with AuditStore.open(pg_url, read_only=True) as store:
            return dict(store.execute(lambda c: c.exec_driver_sql(
                "SELECT relname, reltuples FROM pg_class WHERE relnamespace = "
                "current_schema()::regnamespace AND relname IN "
                "('contract_residuals', 'contract_assessments')").all()))

    _copy(source, pg_url)
    assert reltuples() == {"contract_residuals": 12.0, "contract_assessments": 10.0}


def test_a_target_with_a_different_history_is_refused(tmp_path: Path, pg_url: str) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    _ingest(source, *EXAMPLE_FILES[:2])
    _ingest(pg_url, EXAMPLE_FILES[1])  # same records, another order: another tree
    before = _dump(pg_url)
    result = cli("copy", "--from", source, "--to", pg_url)
    assert result.exit_code == 1
    assert "different history" in result.stderr
    assert _dump(pg_url) == before

    # The other way round, into a SQLite file holding its own history.
    with pg_schema() as other:
        _ingest(other, EXAMPLE_FILES[0])
        refused = cli("copy", "--from", other, "--to", source)
        assert refused.exit_code == 1
        assert "different history" in refused.stderr


def test_a_source_holding_nul_is_refused_cleanly_and_writes_nothing(
        tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SQLite store written before U+0000 was refused at ingest: copying it to PostgreSQL
    names the row instead of failing with a traceback, and writes nothing."""
    source = f"sqlite:///{tmp_path / 'source.db'}"
    _ingest(source, EXAMPLE_FILES[0])
    nul = tmp_path / "nul.jsonl"
    nul.write_text(json.dumps({"grounding_source": "vault", "surface": "a\u0000b"}) + "\n",
                   encoding="utf-8")
    monkeypatch.setattr(row_stream, "_holds_nul", lambda rows: False)  # as the older version did
    _ingest(source, nul)
    monkeypatch.undo()
    result = cli("copy", "--from", source, "--to", pg_url)
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), result.exception
    assert "holds U+0000 (NUL), which PostgreSQL cannot store; nothing copied" in result.stderr
    assert all(rows == [] for rows in _dump(pg_url).values())


def test_a_copy_that_does_not_verify_is_rolled_back(
        tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    _ingest(source, *EXAMPLE_FILES)
    real = copy_module.verify_store
    calls: list[object] = []

    def verify_then_fail(connection: Any, *args: Any, **kwargs: Any) -> Any:
        report = real(connection, *args, **kwargs)
        calls.append(connection)
        if len(calls) == 2:  # the target, inside its transaction
            report.problems.append(Problem(None, "log", "", "simulated"))
        return report

    monkeypatch.setattr(copy_module, "verify_store", verify_then_fail)
    result = cli("copy", "--from", source, "--to", pg_url)
    assert result.exit_code == 1
    assert "copy does not verify, nothing written" in result.stderr
    assert all(rows == [] for rows in _dump(pg_url).values())
