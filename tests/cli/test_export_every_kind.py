"""`export` covers every stored kind (issue 21): surface sightings, batches and tree heads too,
so nothing the store keeps is reachable only through SQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES, raw_query
from cli_runs import cli

# The store's tables and the export kind that writes each (log_subtrees and the tallies are
# derived: verify recomputes them; log_origin is the checkpoint's first line).
TABLE_OF_KIND = {
    "residuals": "contract_residuals", "occurrences": "residual_occurrences",
    "assessments": "contract_assessments", "surfaces": "surface_records",
    "sightings": "surface_occurrences", "turns": "turns", "batches": "ingest_batches",
    "tree-heads": "tree_heads",
}

# The columns holding JSON text (lists of spans, bindings, domains, chain ids, checked
# files): a JSONL line nests them as JSON values, not as strings of JSON (issue 33).
NESTED_IN_JSONL = {
    "contract_residuals": ("evidence_spans",),
    "contract_assessments": ("missing_bindings", "unresolved_hazards", "evidence_spans"),
    "surface_records": ("subject_domains", "object_domains", "hop_chain_ids",
                        "candidate_chain_ids", "checked_against"),
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("every-kind") / "audit.db"
    for path in (*EXAMPLE_FILES, EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"):
        assert cli("ingest", "--db", db, path).exit_code == 0
    return db


@pytest.mark.parametrize("kind", TABLE_OF_KIND)
def test_every_kind_exports_every_stored_row(store: Path, kind: str) -> None:
    result = cli("export", kind, "--db", store, "--format", "jsonl")
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    table = TABLE_OF_KIND[kind]
    order = "tree_size" if kind == "tree-heads" else "seq"
    stored = raw_query(f"sqlite:///{store}", f"SELECT * FROM {table} ORDER BY {order}")
    assert len(rows) == len(stored) > 0
    nested = NESTED_IN_JSONL.get(table, ())
    columns = list(rows[0])
    expected = [tuple(json.loads(value) if name in nested and value is not None else value
                      for name, value in zip(columns, r, strict=True)) for r in stored]
    assert [tuple(row.values()) for row in rows] == expected or kind in (
        "assessments", "turns")  # their booleans export as true/false, SQLite holds 1/0


def test_tree_heads_and_batches_as_csv(store: Path) -> None:
    heads = cli("export", "tree-heads", "--db", store, "--format", "csv").stdout.splitlines()
    assert heads[0] == "batch_id,tree_size,root_hash"
    assert [line.split(",")[0] for line in heads[1:]] == ["1", "2", "3", "4"]
    newest = cli("checkpoint", "--db", store).stdout.splitlines()[1]
    assert heads[-1].split(",")[1] == newest
    batches = cli("export", "batches", "--db", store, "--format", "csv").stdout.splitlines()
    assert batches[0].startswith("batch_id,seq,source,input_sha256,record_type,lines,")
    assert len(batches) == 5
    refused = cli("export", "batches", "--db", store, "--format", "csv", "--filter", "{}")
    assert refused.exit_code == 2 and "batches take no filter" in refused.stderr
