"""The console when every read thread of the server is busy (store/db/read_threads.py): a
page says so (503, "try again", not "narrow the filter"), and a read a page can go without
is left out with that reason, the page still served."""

from __future__ import annotations

import time
from typing import Any

import anyio
import httpx
import pytest
from held_reads import while_held
from pages_html import text

from store.api.app import create_app
from store.console.pages import Console
from store.db.audit_store import AuditStore
from store.db.read_threads import ReadThreads


def test_a_page_left_waiting_for_a_read_thread_says_the_server_was_busy(
        console_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console_db, "reads", ReadThreads(1))
    monkeypatch.setattr(console_db, "time_limit", 0.3)
    app = create_app(console_db, close_db_on_shutdown=False)
    pages: list[httpx.Response] = []

    async def scenario() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            pages.append(await while_held(console_db.reads, lambda: http.get("/residuals")))
            pages.append(await http.get("/residuals"))

    anyio.run(scenario)
    busy, after = pages
    assert busy.status_code == 503
    assert ("query not started: the server's 1 read thread(s) stayed busy past the "
            "request's time limit. Try again.") in text(busy.text)
    assert "Narrow the filter" not in busy.text
    assert after.status_code == 200


def test_a_read_a_page_can_go_without_is_left_out_when_the_server_is_busy(
        console_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console_db, "reads", ReadThreads(1))
    console = Console(console_db)
    asked: list[str] = []
    context: dict[str, Any] = {"deferred": {"histogram": (
        lambda _connection: asked.append("read") or "bars", 0.2,
        lambda _connection: asked.append("explain") or "counting every row")}}

    async def scenario() -> None:
        await while_held(console_db.reads, lambda: console._run_deferred(
            context, time.monotonic() + 30))

    anyio.run(scenario)
    assert context == {"histogram": None, "omitted": {"histogram": (
        "the server's 1 read thread(s) stayed busy for 0.2 s; reload the page to try "
        "again")}}
    assert asked == []  # neither the read nor its explanation ran
