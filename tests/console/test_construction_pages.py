"""The console links a journal turn and what its construction evidence came to, both ways:
the turn page shows its status and links its assessments and residuals, an assessment links
its turn, a residual lists the turns that projected to it. Ids: construction_data.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from construction_data import REFUSED_ID, RESIDUALS, RUNNABLE_ID, TURN_KEY, recorded_payload
from pages_html import links, text
from starlette.testclient import TestClient
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.api.app import create_app
from store.db.audit_store import AuditStore

LINES = [
    journal_line(journal_entry(1, "Tom gained 3.", DISCLOSURE, "none",
                               construction_evidence=recorded_payload())),
    journal_line(journal_entry(2, "Tom gained 3 degrees.", DISCLOSURE, "none",
                               construction_evidence={"schema_version": "v0"})),
]


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    url = f"sqlite:///{tmp_path_factory.mktemp('construction') / 'audit.db'}"
    with AuditStore.open(url) as store:
        store.ingest(LINES, source="turn_journal.jsonl")
    with AuditStore.open(url, read_only=True) as db, TestClient(
            create_app(db, close_db_on_shutdown=False), base_url="http://127.0.0.1") as client:
        yield client


def test_a_turn_page_links_its_assessments_and_residuals(console: TestClient) -> None:
    page = console.get(f"/turns/{TURN_KEY}")
    assert page.status_code == 200
    shown = text(page.text)
    assert "construction_status RECORDED" in shown
    assert "Construction evidence: its contract assessments (2)" in shown
    assert "Residuals its assessments project to (3)" in shown
    hrefs = links(page.text)
    assert {f"/assessments/{REFUSED_ID}", f"/assessments/{RUNNABLE_ID}"} <= set(hrefs)
    assert {f"/residuals/{rid}" for rid in RESIDUALS.values()} <= set(hrefs)


def test_an_assessment_and_a_residual_link_back_to_the_turn(console: TestClient) -> None:
    assessment = console.get(f"/assessments/{REFUSED_ID}")
    assert f"/turns/{TURN_KEY}" in links(assessment.text)
    residual = console.get(f"/residuals/{RESIDUALS['direction_unbound']}")
    assert "Turns whose construction evidence projected to it (1)" in text(residual.text)
    assert f"/turns/{TURN_KEY}" in links(residual.text)


def test_a_turn_whose_evidence_was_not_projected_says_why(console: TestClient) -> None:
    keys = [href.rsplit("/", 1)[1] for href in links(console.get("/turns").text)
            if href.startswith("/turns/") and len(href) == len("/turns/") + 64]
    other = next(key for key in keys if key != TURN_KEY)
    shown = text(console.get(f"/turns/{other}").text)
    assert "construction_status MISSING_EVIDENCE" in shown
    assert ("construction_missing_reason construction_evidence_unsupported_schema_version: "
            "'v0'") in shown
    assert "Construction evidence: its contract assessments (0)" in shown
