"""`core-audit copy`: SQLite -> PostgreSQL -> SQLite keeps every row, id and chain hash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from backends import EXAMPLE_FILES, pg_schema
from sqlalchemy import select
from surface_helpers import cli

from store.db.audit_store import AuditStore
from store.db.tables import APPEND_ONLY_TABLES, metadata

pytestmark = pytest.mark.postgres



def _dump(url: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table in key order, batch times included."""
    with AuditStore.open(url, read_only=True) as store, store.engine.connect() as connection:
        return {name: [dict(r) for r in connection.execute(
                    select(metadata.tables[name]).order_by(
                        *metadata.tables[name].primary_key.columns)
                ).mappings()] for name in APPEND_ONLY_TABLES}


def _checkpoint(url: str) -> str:
    result = cli("checkpoint", "--db", url)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


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
    head = _checkpoint(source)
    rows = int(head.split()[0])

    assert _copy(source, pg_url).startswith(f"copied {rows} ledger rows (0 already there)")
    assert _copy(pg_url, back).startswith(f"copied {rows} ledger rows (0 already there)")
    original = _dump(source)
    assert _dump(pg_url) == original
    assert _dump(back) == original
    assert _checkpoint(pg_url) == _checkpoint(back) == head
    for url in (pg_url, back):
        verify = cli("verify", "--db", url, "--checkpoint", head.replace(" ", ":"))
        assert verify.exit_code == 0, verify.output

    # Idempotent: nothing copied twice.
    assert _copy(source, pg_url).startswith(f"copied 0 ledger rows ({rows} already there)")
    assert _copy(pg_url, back).startswith(f"copied 0 ledger rows ({rows} already there)")
    assert _dump(pg_url) == _dump(back) == original

    # A source that grew: only the new rows travel, and the chains still agree.
    _ingest(source, EXAMPLE_FILES[2])
    grown = _checkpoint(source)
    added = int(grown.split()[0]) - rows
    assert _copy(source, pg_url).startswith(f"copied {added} ledger rows ({rows} already there)")
    assert _copy(pg_url, back).startswith(f"copied {added} ledger rows")
    assert _dump(pg_url) == _dump(back) == _dump(source)
    assert _checkpoint(pg_url) == _checkpoint(back) == grown


def test_a_target_with_a_different_history_is_refused(tmp_path: Path, pg_url: str) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    _ingest(source, *EXAMPLE_FILES[:2])
    _ingest(pg_url, EXAMPLE_FILES[1])  # same records, another order: another chain
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
