"""/healthz reads the store: 200 with the tree size, 503 with the reason when it cannot; and it
answers while slow requests hold every read thread and the rest wait their turn."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from spec_values import LEDGER_LENGTH
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from starlette.testclient import TestClient

from store.api import schema as api_schema
from store.api.app import create_app
from store.db import queries
from store.db.audit_store import AuditStore
from store.db.schema.engine import sqlite_path


def test_healthz_reads_the_tree_head(client: TestClient) -> None:
    response = client.get("/healthz")
    assert (response.status_code, response.json()) == (
        200, {"status": "ok", "tree_size": LEDGER_LENGTH})


@contextmanager
def store_gone(url: str) -> Iterator[None]:
    """The store made unreadable: its SQLite file removed, its PostgreSQL schema renamed."""
    path = sqlite_path(url)
    if path is not None:
        path.unlink()
        yield
        return
    schema = make_url(url).query["options"].removeprefix("-csearch_path=")
    server = make_url(url).difference_update_query(["options"])
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'ALTER SCHEMA "{schema}" RENAME TO "{schema}_gone"'))
        yield
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'ALTER SCHEMA "{schema}_gone" RENAME TO "{schema}"'))
        admin.dispose()


def test_healthz_is_503_when_the_store_is_gone(client: TestClient, example_store_url: str,
                                              caplog: pytest.LogCaptureFixture) -> None:
    assert client.get("/healthz").status_code == 200
    with store_gone(example_store_url):
        response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["reason"].startswith("cannot read the store: ")
    expected = ("unable to open database file" if sqlite_path(example_store_url)
                else 'relation "tree_heads" does not exist')
    assert expected in body["reason"]
    assert [r.getMessage() for r in caplog.records if r.name == "store.api.health"] == [
        f"healthz: {body['reason']}"]


def test_healthz_is_503_when_the_file_is_corrupt(tmp_path: Path,
                                                  example_store_url: str) -> None:
    path = sqlite_path(example_store_url)
    if path is None:
        pytest.skip("a SQLite file")
    database = AuditStore.open(example_store_url, read_only=True)
    app = create_app(database)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get("/healthz").status_code == 200
        path.write_bytes(b"not a database, just bytes" * 200)
        response = client.get("/healthz")
    assert (response.status_code, response.json()) == (503, {
        "status": "unavailable", "reason": "cannot read the store: file is not a database"})


@pytest.mark.slow
def test_healthz_answers_while_slow_queries_hold_every_read_thread(
    example_db: AuditStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    order: list[str] = []
    ledger_status = queries.ledger_status

    def blocking_ledger(connection: Any) -> queries.LedgerStatus:
        release.wait(timeout=60)  # only a broken server leaves it unreleased
        return ledger_status(connection)

    # A test hook: GraphQL's ledger waits; the health probe reads the store its own way.
    monkeypatch.setattr(api_schema.queries, "ledger_status", blocking_ledger)
    fan_out = "{ " + " ".join(f"a{i}: ledger {{ treeSize }}" for i in range(25)) + " }"
    app = create_app(example_db, close_db_on_shutdown=False)

    async def scenario() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:

            async def slow() -> None:
                response = await http.post("/graphql", json={"query": fan_out})
                order.append(f"slow {response.status_code} {len(response.json()['data'])}")

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(slow)
                tasks.start_soon(slow)
                # 50 resolvers: every read thread taken, the rest waiting their turn
                with anyio.fail_after(60):
                    while example_db.reads.busy < example_db.reads.count:
                        await anyio.sleep(0.01)
                health = await http.get("/healthz")
                order.append(f"healthz {health.status_code} {health.json()['tree_size']}")
                release.set()

    anyio.run(scenario)
    assert order == [f"healthz 200 {LEDGER_LENGTH}", "slow 200 25", "slow 200 25"]
