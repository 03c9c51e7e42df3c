"""The same input gives the same store on SQLite and on PostgreSQL.

Ids, row orderings by seq, ledger entries, GraphQL results of every Workbench operation and
verify outcomes are compared between a SQLite file and a PostgreSQL schema fed the same files.
Only what records the ingest itself (batch times) may differ.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import EXAMPLE_FILES, pg_schema
from jsonl_files import gained_frame, write_jsonl
from sqlalchemy import select

from store.api.execution import execute_operation
from store.db.audit_store import AuditStore
from store.db.schema.record_kinds import LEDGERED_KEYS
from store.db.schema.tables import metadata
from store.model.checkpoint import Checkpoint

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[2]
WORKBENCH = REPO / "graphql" / "workbench"
BATCH_TIME_FIELDS = ("ingested_at",)


def _frames(count: int) -> list[dict[str, Any]]:
    """Frames with shared and distinct residuals, unicode text and a second sentence index."""
    return [gained_frame(f"Zoë {i} gained {i % 3} äpfel. Then lost them.", f"cross:{i}",
                         missing_bindings=["changed_object_unbound", "direction_unbound"][
                             : 1 + i % 2],
                         unresolved_hazards=[], runnable=False,
                         explanation="diagnostic candidate is not runnable",
                         sentence_index=i % 2)
            for i in range(count)]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    extra = write_jsonl(tmp_path_factory.mktemp("cross") / "generated.jsonl", _frames(40))
    journal = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"
    return [*EXAMPLE_FILES, journal, extra, EXAMPLE_FILES[0]]  # the last again: all "present"


def _build(url: str, inputs: list[Path]) -> None:
    with AuditStore.open(url) as store:
        for path in inputs:
            store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)


@pytest.fixture(scope="module")
def stores(inputs: list[Path],
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    sqlite_url = f"sqlite:///{tmp_path_factory.mktemp('cross-sqlite') / 'audit.db'}"
    with pg_schema() as pg_url:
        _build(sqlite_url, inputs)
        _build(pg_url, inputs)
        yield sqlite_url, pg_url


def _dump(url: str) -> dict[str, list[dict[str, Any]]]:
    with AuditStore.open(url, read_only=True) as store, store.engine.connect() as connection:
        dump = {}
        for name in (*LEDGERED_KEYS, "tree_heads"):
            table = metadata.tables[name]
            order = table.c.batch_id if name == "tree_heads" else table.c.seq
            rows = connection.execute(select(table).order_by(order)).mappings()
            dump[name] = [{k: v for k, v in r.items() if k not in BATCH_TIME_FIELDS}
                          for r in rows]
        return dump


def test_rows_ids_and_orderings_are_identical(stores: tuple[str, str]) -> None:
    sqlite_dump, pg_dump = (_dump(url) for url in stores)
    assert len(sqlite_dump["contract_residuals"]) > 12
    for table in LEDGERED_KEYS:
        assert pg_dump[table] == sqlite_dump[table], table
    # The same tree sizes per batch; roots differ only because batch rows hold their time.
    assert [(h["batch_id"], h["tree_size"]) for h in pg_dump["tree_heads"]] == [
        (h["batch_id"], h["tree_size"]) for h in sqlite_dump["tree_heads"]]
    seqs = sorted(r["seq"] for table in LEDGERED_KEYS for r in pg_dump[table])
    assert seqs == list(range(1, len(seqs) + 1))


def _operation(url: str, name: str, variables: dict[str, Any]) -> dict[str, Any]:
    database = AuditStore.open(url, read_only=True)
    try:
        source = (WORKBENCH / f"{name}.graphql").read_text(encoding="utf-8")
        return asyncio.run(execute_operation(database, source, variables, name))
    finally:
        database.close()


def _without_batch_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_batch_times(v) for k, v in value.items()
                if k not in ("ingestedAt", "rootHash")}
    if isinstance(value, list):
        return [_without_batch_times(v) for v in value]
    return value


def _variables(url: str) -> dict[str, dict[str, Any]]:
    some_residual = _operation(url, "ResidualsByTaxonomy", {"first": 50})
    ids = [e["node"]["residualId"] for e in some_residual["data"]["residuals"]["edges"]]
    [journal] = [n["journalId"] for n in _operation(url, "Runs", {})["data"]["journals"]["nodes"]]
    return {
        "DominantResidualKinds": {"filter": {"batchIdFrom": 2}},
        "PracticeResiduals": {"residualIds": [ids[0], ids[3], "0" * 64]},
        "ResidualCard": {"id": ids[3], "turns": 2},
        "RunDetail": {"journal": journal, "first": 3},
        "RunGroundingDistribution": {"journal": journal},
        "Runs": {},
        "TraceTimeline": {"journal": [journal], "order": "TIME_DESC", "first": 3},
        "TurnDetail": {"journal": journal, "turnId": 2},
        "FacetOverview": {},
        "LedgerStatus": {},
        "ResidualWithOccurrences": {"id": ids[3], "first": 1},
        "ResidualsByTaxonomy": {"kind": ["MISSING_ROLE"], "first": 3},
        "SurfacesByGroundingSource": {"first": 4},
        "TeachingTurnsByChain": {"first": 2, "turns": 1},
        "TurnFacetOverview": {},
        "TurnsByGrounding": {"first": 4},
    }


@pytest.mark.parametrize("name", sorted(p.stem for p in WORKBENCH.glob("*.graphql")))
def test_workbench_operations_answer_alike(stores: tuple[str, str], name: str) -> None:
    sqlite_url, pg_url = stores
    variables = _variables(sqlite_url)[name]
    sqlite_result = _operation(sqlite_url, name, variables)
    pg_result = _operation(pg_url, name, variables)
    assert "errors" not in sqlite_result and "errors" not in pg_result
    # Everything but batch times (and the head hash, which covers them): ids, orders, counts,
    # facets, cursors.
    assert _without_batch_times(pg_result) == _without_batch_times(sqlite_result)


def test_verify_outcomes_are_identical(stores: tuple[str, str]) -> None:
    reports = []
    for url in stores:
        with AuditStore.open(url, read_only=True) as store:
            intact = store.verify()
            tip = store.tree_head()
            wrong = store.verify(Checkpoint("core-audit/test", 5, b"\xff" * 32))
            beyond = store.verify(Checkpoint("core-audit/test", tip.size + 1, tip.root))
            reports.append((intact.intact, intact.rows, intact.tip.size if intact.tip else None,
                            [str(p) for p in wrong.problems], [str(p) for p in beyond.problems]))
    assert reports[0] == reports[1]
    assert reports[0][0] is True
    assert reports[0][3] == [
        "log checkpoint 5: the store does not extend the checkpoint's tree (history was "
        "rewritten)"]
