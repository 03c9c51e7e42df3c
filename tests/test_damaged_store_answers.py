"""A damaged store answers with what is wrong and what to run, never a traceback (issue 32,
item 10): the console's pages and downloads and the log's tiles a 503 naming `core-audit
verify` (the server's log one warning line, nothing at error level, no traceback); `query` one
line; `export` never writes a byte that is not UTF-8: it stops at the record, naming it."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore

JOURNAL = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"
VERIFY = "run `core-audit verify` on it"


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples and the journal; the third turn's prompt rewritten out of band as bytes
    that are not UTF-8 (its update guard dropped first)."""
    path = tmp_path_factory.mktemp("damaged") / "audit.db"
    for source in (*EXAMPLE_FILES, JOURNAL):
        assert cli("ingest", "--db", path, source).exit_code == 0
    connection = sqlite3.connect(path)
    connection.execute("DROP TRIGGER turns_append_only_update")
    connection.execute("UPDATE turns SET prompt = CAST(X'FFFE41' AS TEXT) WHERE turn_id = 3")
    connection.commit()
    connection.close()
    return path


@pytest.fixture(scope="module")
def served(damaged: Path) -> Iterator[TestClient]:
    with AuditStore.open(str(damaged), read_only=True) as db, TestClient(
            create_app(db, close_db_on_shutdown=False), base_url="http://127.0.0.1",
            raise_server_exceptions=False) as client:
        yield client


def _seq_of_turn_3(path: Path) -> int:
    connection = sqlite3.connect(path)
    [(seq,)] = connection.execute("SELECT seq FROM turns WHERE turn_id = 3").fetchall()
    connection.close()
    return int(seq)


def test_query_says_one_line_naming_verify(damaged: Path) -> None:
    result = cli("query", "--db", damaged, "{ turns(first: 10) { nodes { prompt } } }")
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stderr.count("\n") == 1
    # The answer's code is STORE_UNAVAILABLE: the one line says so and names verify.
    assert result.stderr == f"Error: the store could not answer it; {VERIFY}\n"


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_stops_at_the_damaged_record_and_writes_only_utf8(damaged: Path, fmt: str,
                                                                 tmp_path: Path) -> None:
    result = cli("export", "turns", "--db", damaged, "--format", fmt)
    assert result.exit_code == 1
    result.stdout_bytes.decode("utf-8")  # every byte written is UTF-8
    records = result.stdout_bytes.count(b"\n") - (1 if fmt == "csv" else 0)
    assert records == 2  # turns 1 and 2, then turn 3 is damaged
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(
        f"Error: turns: record 3 of the export (seq {_seq_of_turn_3(damaged)}) holds bytes "
        "that are not UTF-8 (invalid start byte at byte ")
    assert result.stderr.endswith(f"the export stopped after 2 records; {VERIFY}\n")
    out = tmp_path / f"turns.{fmt}"
    assert cli("export", "turns", "--db", damaged, "--format", fmt, "--out", out
               ).exit_code == 1
    assert not out.exists() and list(tmp_path.iterdir()) == []  # no partial file left


def test_console_pages_downloads_and_tiles_answer_503_naming_verify(
        served: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for url in ("/turns", "/turns?first=500", "/export/turns.jsonl", "/export/turns.csv",
                "/log/tile/0/000.p/83", "/log/tile/entries/000.p/83"):
        answer = served.get(url)
        assert answer.status_code == 503, url
        assert VERIFY in answer.text, url
        assert "Traceback" not in answer.text, url
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert [r for r in caplog.records if r.exc_info] == []
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned and all(VERIFY in message for message in warned)


def test_graphql_over_http_logs_one_warning_line_no_traceback(
        served: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    answer = served.post("/graphql", json={"query": "{ turns(first: 10) { nodes { prompt } } }"})
    assert answer.json()["errors"][0]["message"] != ""
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert warnings[0].startswith("GraphQL: the store cannot be read now (unreachable, removed "
                                  "or damaged): `core-audit verify` checks it: ")
    assert "Could not decode to UTF-8 column 'prompt'" in warnings[0]
