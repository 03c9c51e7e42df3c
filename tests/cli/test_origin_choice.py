"""The log's origin is chosen once, on purpose (issue 21): a plain `checkpoint` never fixes
`core-audit/<hex>` for ever; `--origin` does, and the README's order of commands works."""

from __future__ import annotations

from pathlib import Path

from backends import EXAMPLE_FILES, raw_query
from cli_runs import cli

ORIGIN = "audit.example.org/core"


def _origins(db: Path) -> list[tuple[object, ...]]:
    return raw_query(f"sqlite:///{db}", "SELECT origin FROM log_origin")


def test_a_plain_checkpoint_writes_nothing_and_says_the_origin_is_provisional(
        tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    assert cli("ingest", "--db", db, EXAMPLE_FILES[0]).exit_code == 0
    first = cli("checkpoint", "--db", db)
    assert first.exit_code == 0
    provisional = first.stdout.splitlines()[0]
    assert provisional.startswith("core-audit/") and len(provisional) == len("core-audit/") + 16
    assert "this store's origin is not chosen yet" in first.stderr
    assert "core-audit checkpoint --origin HOST/PATH" in first.stderr
    assert _origins(db) == []
    # Stable as the log grows: the first tree head's root names it.
    assert cli("ingest", "--db", db, EXAMPLE_FILES[1]).exit_code == 0
    assert cli("checkpoint", "--db", db).stdout.splitlines()[0] == provisional
    assert _origins(db) == []


def test_the_readme_order_then_a_signed_checkpoint_under_the_chosen_origin(
        tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    for path in EXAMPLE_FILES:
        assert cli("ingest", "--db", db, path).exit_code == 0
    assert cli("checkpoint", "--db", db).exit_code == 0  # a new user's first, plain one
    assert cli("keygen", "auditor", "--out", tmp_path / "auditor").exit_code == 0

    chosen = cli("checkpoint", "--db", db, "--key", tmp_path / "auditor.key",
                 "--origin", ORIGIN)

    assert chosen.exit_code == 0, chosen.stderr
    assert chosen.stdout.splitlines()[0] == ORIGIN
    assert _origins(db) == [(ORIGIN,)]
    again = cli("checkpoint", "--db", db)
    assert again.stdout.splitlines()[0] == ORIGIN and again.stderr == ""
    other = cli("checkpoint", "--db", db, "--origin", "other.example/log")
    assert other.exit_code == 1
    assert f"have origin '{ORIGIN}', not 'other.example/log'" in other.stderr


def test_signing_before_an_origin_is_chosen_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    assert cli("ingest", "--db", db, EXAMPLE_FILES[0]).exit_code == 0
    assert cli("keygen", "auditor", "--out", tmp_path / "auditor").exit_code == 0
    result = cli("checkpoint", "--db", db, "--key", tmp_path / "auditor.key")
    assert result.exit_code == 1
    assert "origin is not chosen yet: sign only under the origin it will keep" in result.stderr
    assert _origins(db) == []
