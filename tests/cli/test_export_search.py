"""`export --search`: the records a search finds, ANDed with --filter, in append order; a kind
without text, or a search the syntax does not read, exits 2 naming --search and writes
nothing. Records are the ADR-0225 examples' (tests/spec_values.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli


@pytest.fixture
def store(tmp_path: Path) -> Path:
    db = tmp_path / "audit.db"
    for path in EXAMPLE_FILES:
        assert cli("ingest", path, "--db", db).exit_code == 0
    return db


def test_export_takes_a_search(store: Path) -> None:
    result = cli("export", "residuals", "--db", store, "--format", "jsonl",
                 "--search", '"price fell"')
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    # "The price fell to a third." leaves the base quantity and the state entity unbound.
    assert [(r["seq"], r["explanation"]) for r in rows] == [
        (25, "The base quantity role is unbound."), (27, "The state entity role is unbound.")]
    both = cli("export", "residuals", "--db", store, "--format", "jsonl", "--search",
               "unbound", "--filter", '{"organ": ["quantity_entity_binding"]}')
    assert [json.loads(line)["explanation"] for line in both.stdout.splitlines()] == [
        "The entity role is unbound."]


@pytest.mark.parametrize(("args", "said"), [
    (("assessments", "--search", "price"), "assessments carry no text to search"),
    (("residuals", "--search", "price AND"), "a term is missing at the end"),
])
def test_a_search_export_cannot_take_exits_2(store: Path, tmp_path: Path,
                                              args: tuple[str, ...], said: str) -> None:
    out = tmp_path / "out.csv"
    result = cli("export", *args, "--db", store, "--format", "csv", "--out", out)
    assert result.exit_code == 2
    assert "Invalid value for '--search'" in result.output and said in result.output
    assert not out.exists()
