"""The turn list's histogram over CORE's own time: the bucket follows the turns' span (hours,
days, Monday-started weeks), a bucket's bounds are inclusive to the microsecond, times with an
offset count at their instant (UTC), and each bar's link lists exactly its count. On SQLite
and PostgreSQL (the buckets are integer division in SQL)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.api.app import create_app
from store.console import lists
from store.db.audit_store import AuditStore


@pytest.fixture(autouse=True)
def histograms_take_their_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the buckets: the histogram's own time limit (0.5 s, then a note
    instead of the chart) has its test in test_page_json.py. On a CI machine loaded by the
    whole suite, PostgreSQL's histogram once took longer and the page had no chart."""
    monkeypatch.setattr(lists, "HISTOGRAM_SECONDS", 30.0)


def _console(url: str, times: list[str]) -> Iterator[TestClient]:
    lines = [journal_line(journal_entry(n, f"Why does zorp {n} exist?", DISCLOSURE, "none",
                                        timestamp=at)) for n, at in enumerate(times, start=1)]
    with AuditStore.open(url) as store:
        store.ingest(lines, source="turn_journal.jsonl")
    with AuditStore.open(url, read_only=True) as db, TestClient(
            create_app(db, close_db_on_shutdown=False), base_url="http://127.0.0.1") as client:
        yield client


@pytest.fixture
def days(backend_url: str) -> Iterator[TestClient]:
    # Eleven days apart at most: more than 90 hours, so a bar per day.
    yield from _console(backend_url, [
        "2026-07-30T18:01:00.000000+00:00", "2026-07-30T23:59:59.999999+00:00",
        "2026-07-31T00:00:00.000000+00:00", "2026-08-02T10:00:00.000000+02:00",
        "2026-08-10T12:00:00.000000+00:00"])


@pytest.fixture
def weeks(backend_url: str) -> Iterator[TestClient]:
    # 2026-01-01 is a Thursday, 2026-07-30 a Thursday too: 210 days, so a bar per week.
    yield from _console(backend_url, [
        "2026-01-01T09:00:00.000000+00:00", "2026-01-04T23:00:00.000000+00:00",
        "2026-01-05T00:00:00.000000+00:00", "2026-07-30T18:01:00.000000+00:00"])


def _listed(client: TestClient, bar: dict[str, Any]) -> int:
    return int(client.get(bar["href"].replace("/turns?", "/turns.json?")).json()["total"])


def test_turns_over_days_get_a_bar_per_day_each_listing_its_count(days: TestClient) -> None:
    found = days.get("/turns.json").json()["histogram"]
    assert (found["time"], found["bucket"], found["from"], found["to"]) == (
        "CORE time", "day", "timeFrom", "timeTo")
    # 23:59:59.999999 is the 30th's last instant; 10:00+02:00 on the 2nd is 08:00 UTC.
    assert [(b["label"], b["count"]) for b in found["bars"]] == [
        ("2026-07-30", 2), ("2026-07-31", 1), ("2026-08-02", 1), ("2026-08-10", 1)]
    assert (found["bars"][0]["from"], found["bars"][0]["to"]) == (
        "2026-07-30T00:00:00.000000Z", "2026-07-30T23:59:59.999999Z")
    for bar in found["bars"]:
        assert _listed(days, bar) == bar["count"], bar
    page = days.get("/turns").text
    assert "Turns per day of CORE time (UTC)" in page


def test_turns_over_months_get_a_bar_per_week_from_monday(weeks: TestClient) -> None:
    found = weeks.get("/turns.json").json()["histogram"]
    assert found["bucket"] == "week"
    # The week of Thursday 2026-01-01 starts Monday 2025-12-29 and ends Sunday 2026-01-04.
    assert [(b["label"], b["count"]) for b in found["bars"]] == [
        ("week from 2025-12-29", 2), ("week from 2026-01-05", 1), ("week from 2026-07-27", 1)]
    assert found["bars"][0]["to"] == "2026-01-04T23:59:59.999999Z"
    for bar in found["bars"]:
        assert _listed(weeks, bar) == bar["count"], bar
    narrowed = weeks.get("/turns.json?timeFrom=2026-01-02T00:00:00Z").json()["histogram"]
    first = narrowed["bars"][0]
    assert first["count"] == 1 and "timeFrom=2026-01-02T00%3A00%3A00Z" in first["href"]
    assert _listed(weeks, first) == 1


def test_a_filter_on_the_turns_own_columns_gives_the_same_bars(days: TestClient) -> None:
    # Every turn here is grounded by nothing: filtered by grounding source (read from the
    # turns joined to their surfaces) the bars are the unfiltered ones (read from turn_fields).
    unfiltered = days.get("/turns.json").json()["histogram"]["bars"]
    grounded = days.get("/turns.json?groundingSource=NONE").json()["histogram"]["bars"]
    assert [(b["label"], b["count"]) for b in grounded] == [
        ("2026-07-30", 2), ("2026-07-31", 1), ("2026-08-02", 1), ("2026-08-10", 1)]
    assert grounded == [{**bar, "href": bar["href"].replace("/turns?", "/turns?groundingSource"
                                                             "=NONE&")} for bar in unfiltered]
    none = days.get("/turns.json?groundingSource=TEACHING").json()["histogram"]["bars"]
    assert none == []
