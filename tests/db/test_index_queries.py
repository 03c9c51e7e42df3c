"""Every index of the schema is read by a request a user sends (issue 34: "no index that no
query uses (show each index's query)"). docs/design.md's table names, for each index, one
request; each is sent here to a store where every table has rows, and SQLite's plan of a
statement it sent must name the index. An index the table does not name fails the first
test: it would cost every ingest its writes and the store its bytes for no read."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from construction_data import construction_journal
from raw_reads import indexes
from sent_sql import sent_statements, sqlite_plan
from starlette.testclient import TestClient
from workbench_data import journal_a, journal_b, journal_lines

from store.api.app import create_app
from store.db.audit_store import AuditStore
from store.model.checkpoint import COSIGNATURE_V1, SignerKey
from store.model.cosignature import cosign

REPO = Path(__file__).resolve().parents[2]
DESIGN = REPO / "docs" / "design.md"
SECTION = "### Indexes, each with a request that reads it"
EXAMPLES = [REPO / "examples" / name for name in (
    "adr_0225_frames.jsonl", "core_frames_families.jsonl", "adr_0052_surfaces.jsonl",
    "workbench_turn_journal.jsonl")]
INGEST = "core-audit ingest"
# A batch the ingest row sends: assessments not yet stored, each refused with a residual.
NEW_FRAMES = [json.dumps({"problem_text": f"Tom gained {n} pears.", "contract_assessments": [{
    "candidate_organ": "unary_delta_transition", "missing_bindings": ["direction_unbound"],
    "unresolved_hazards": [], "runnable": False, "explanation": "not runnable",
    "evidence_spans": [{"text": "gained", "start": 4, "end": 10}]}]}) + "\n" for n in (7, 8)]


def _table_rows() -> list[tuple[str, str]]:
    """(index, request) for each row of the design's table, in its order."""
    text = DESIGN.read_text(encoding="utf-8")
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ")]
    return re.findall(r"^\| `(\w+)` \| `([^`]+)`", section, flags=re.MULTILINE)


ROWS = _table_rows()


@pytest.fixture(scope="module")
def every_table_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples (batches 1-4: tree heads 18, 37, 66, 83), a journal of construction
    evidence and the Workbench's two journals, a kept checkpoint with a cosignature: a row in
    every table."""
    path = tmp_path_factory.mktemp("indexes") / "store.db"
    with AuditStore.open(f"sqlite:///{path}") as store:
        for example in EXAMPLES:
            store.ingest(example.read_bytes().splitlines(keepends=True), source=example.name)
        store.ingest(construction_journal(), source="constructions.jsonl")
        for name, entries in (("journal-a.jsonl", journal_a()), ("journal-b.jsonl", journal_b())):
            store.ingest([line + "\n" for line in journal_lines(entries)], source=name)
        store.checkpoint("audit.example.org/core")
        witness = SignerKey("w", b"\x02" * 32, COSIGNATURE_V1)
        kept = store.keep_checkpoint([SignerKey("log", b"\x01" * 32)])
        store.add_cosignatures(kept.checkpoint_id, [cosign(store.checkpoint().body(), witness,
                                                           1)], [witness.verifier])
    return path


@pytest.fixture(scope="module")
def reader(every_table_store: Path) -> Iterator[tuple[AuditStore, TestClient]]:
    db = AuditStore.open(f"sqlite:///{every_table_store}", read_only=True)
    try:
        with TestClient(create_app(db, close_db_on_shutdown=False),
                        base_url="http://127.0.0.1") as client:
            yield db, client
    finally:
        db.close()


def _indexes_read(db: AuditStore, statements: list[tuple[str, Any]]) -> set[str]:
    """The indexes SQLite's plans of `statements` read (on `db`'s file)."""
    found: set[str] = set()
    for sql, params in statements:
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
            continue  # a write's rows (executemany's parameters) or a pragma: no read of its own
        try:
            plan = sqlite_plan(db, sql, params)
        except sqlite3.OperationalError:
            continue  # a table of the writer's own connection (its temp schema): not an index's
        found.update(re.findall(r"USING (?:COVERING )?INDEX (\w+)", " ".join(plan)))
    return found


def _indexes_read_by(request: str, reader: tuple[AuditStore, TestClient],
                     every_table_store: Path, tmp_path: Path) -> tuple[set[str], int]:
    """Sends `request` (a GraphQL document, `GET /path` or `core-audit ingest`), checking it
    succeeded: the indexes the statements it sent read, and how many it sent."""
    db, client = reader
    if request == INGEST:  # into a copy of the store
        copy = tmp_path / "copy.db"
        shutil.copyfile(every_table_store, copy)
        with AuditStore.open(f"sqlite:///{copy}") as writer:
            with sent_statements(writer, writes=True) as statements:
                result = writer.ingest(NEW_FRAMES, source="pears.jsonl")
            assert result.tables["residual_occurrences"].new == 2, result
            return _indexes_read(writer, statements), len(statements)
    with sent_statements(db) as statements:
        if request.startswith("GET "):
            response = client.get(request.removeprefix("GET "))
            assert response.status_code == 200, response.text
        else:
            response = client.post("/graphql", json={"query": request})
            assert response.status_code == 200 and "errors" not in response.json(), response.text
    return _indexes_read(db, statements), len(statements)


def test_the_table_names_every_index_of_the_schema_once(every_table_store: Path) -> None:
    named = [index for index, _ in ROWS]
    assert len(named) == len(set(named)), "an index named twice"
    schema = set(indexes(every_table_store))
    assert schema - set(named) == set(), "indexes the design's table does not name"
    assert set(named) - schema == set(), "named in the design's table, not in the schema"
    assert len(named) == 48  # the schema at revision 0019


@pytest.mark.parametrize(("index", "request_sent"), ROWS, ids=[index for index, _ in ROWS])
def test_the_request_reads_its_index(index: str, request_sent: str,
                                     reader: tuple[AuditStore, TestClient],
                                     every_table_store: Path, tmp_path: Path) -> None:
    read, sent = _indexes_read_by(request_sent, reader, every_table_store, tmp_path)
    assert index in read, f"{request_sent!r}: {sent} statements read {sorted(read)}"
