"""The console on PostgreSQL: the same pages, facets, proofs and downloads as on SQLite (the
pages read through the query layer; this checks the console's own reads there too)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from pages_html import text
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore

pytestmark = pytest.mark.postgres
JOURNAL = Path(__file__).resolve().parents[2] / "examples" / "workbench_turn_journal.jsonl"
PAGES = ("/", "/residuals?kind=MISSING_ROLE", "/assessments", "/assessments?runnable=true",
         "/surfaces?verification=MISMATCH", "/turns?groundingSource=TEACHING", "/batches",
         "/batches?recordType=turns", "/log?from=18", "/residuals?asOf=18",
         "/residuals/groups?by=kind,organ", "/residuals/groups?by=ingest_week,kind",
         "/turns/groups?by=clearance,grounding_source", "/surfaces/groups?by=verification",
         "/turns.json", "/residuals/groups.json?by=ingest_day")


@pytest.fixture
def pg_console(pg_url: str) -> Iterator[TestClient]:
    with AuditStore.open(pg_url) as store:
        for path in (*EXAMPLE_FILES, JOURNAL):
            store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
    with AuditStore.open(pg_url, read_only=True) as db, TestClient(
            create_app(db, close_db_on_shutdown=False), base_url="http://127.0.0.1") as client:
        yield client


def _without_times(page: str) -> str:
    """The page's text less what differs between two stores of the same records: ingest
    times, the roots and ids they change (the batch rows hold the times)."""
    shown = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "T", text(page))
    shown = re.sub(r"\d{4}-\d\d-\d\d( \d\d:00)?", "D", shown)  # ingest days and hours
    shown = re.sub(r"[A-Za-z0-9+/]{43}=", "B", shown)  # a checkpoint's base64 root
    return re.sub(r"[0-9a-f]{16,64}…?", "H", shown)


def test_every_page_reads_the_same_on_postgresql(pg_console: TestClient,
                                                 console: TestClient) -> None:
    for path in PAGES:
        on_pg, on_sqlite = pg_console.get(path), console.get(path)
        assert on_pg.status_code == on_sqlite.status_code == 200, path
        assert _without_times(on_pg.text) == _without_times(on_sqlite.text), path
    for kind in ("residuals", "assessments", "surfaces", "turns"):
        listing = pg_console.get(f"/{kind}")
        for key in re.findall(rf'href="/{kind}/([0-9a-f]{{64}})"', listing.text)[:3]:
            page = pg_console.get(f"/{kind}/{key}")
            assert page.status_code == 200, (kind, key)
            assert 'data-proof="inclusion"' in page.text
        assert pg_console.get(f"/export/{kind}.jsonl").status_code == 200
    assert pg_console.get("/batches/4").status_code == 200
