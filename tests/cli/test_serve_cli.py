"""`core-audit serve`'s deployment flags reach the app, in one process and in every worker;
`core-audit trusted-documents` prints the manifest the Workbench ships."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from backends import EXAMPLE_FILES
from cli_runs import cli, subprocess_environ
from free_ports import free_port
from starlette.testclient import TestClient

from store.cli.serve import SETTINGS_VARIABLE, app_from_settings
from store.db.audit_store import AuditStore

REPO = Path(__file__).resolve().parents[2]
WORKBENCH = REPO / "graphql" / "workbench"
LEDGER_LENGTH = 66  # the bundled examples' rows (tests/api/spec_values.py)
FIFTY_ONE_OBJECTS = "{ residuals { nodes { seq } } }"  # the page and its 50 rows


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "audit.db"
    with AuditStore.open(str(path)) as opened:
        for example in EXAMPLE_FILES:
            opened.ingest(example.read_bytes().splitlines(keepends=True), source=example.name)
    return path


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What `serve` hands uvicorn.run, which is not started."""
    options: dict[str, Any] = {}

    def fake_run(app: Any, **given: Any) -> None:
        options.update(given, app=app)

    monkeypatch.setattr(uvicorn, "run", fake_run)
    monkeypatch.setenv(SETTINGS_VARIABLE, "")  # restored after the test
    return options


def deployment_flags(store: Path, port: int) -> list[str]:
    return ["serve", "--db", str(store), "--host", "0.0.0.0", "--port", str(port),
            "--allowed-host", "audit.example.com", "--allowed-host", "*.internal.example",
            "--root-path", "/audit/", "--time-limit", "30.5", "--read-threads", "2",
            "--max-objects", "50",
            "--log-level", "debug", "--log-format", "json", "--no-graphiql"]


def check_deployed_app(app: Any) -> None:
    """The app behaves as deployment_flags asked, reached under /audit by a proxy."""
    # Well above any request's time here: a suite's other worker driving the browser once
    # stalled this process past a limit of 2.5 s before its ledger read began.
    assert app.routes[0].endpoint.db.time_limit == 30.5
    assert app.routes[0].endpoint.db.reads.count == 2
    with TestClient(app, base_url="http://audit.example.com", root_path="/audit") as client:
        health = client.get("/audit/healthz")  # as uvicorn passes a stripped /healthz
        assert (health.status_code, health.json()) == (
            200, {"status": "ok", "tree_size": LEDGER_LENGTH})
        assert client.get("/healthz").status_code == 200  # a scope without the prefix
        assert client.get("/healthz", headers={"host": "db.internal.example"}).status_code == 200
        assert client.get("/healthz", headers={"host": "127.0.0.1"}).status_code == 200
        assert client.get("/healthz", headers={"host": "0.0.0.0"}).status_code == 200
        assert client.get("/healthz", headers={"host": "evil.example"}).status_code == 400
        refused = client.post("/audit/graphql", json={"query": FIFTY_ONE_OBJECTS}).json()
        assert refused["errors"][0]["message"].startswith(
            "this query may resolve 51 objects, over this server's limit of 50:")
        assert client.post("/audit/graphql", json={"query": "{ ledger { treeSize } }"}).json(
            ) == {"data": {"ledger": {"treeSize": LEDGER_LENGTH}}}
        assert client.get("/audit/graphql", headers={"accept": "text/html"}).status_code == 404


def test_the_flags_reach_the_server_and_the_app(store: Path, started: dict[str, Any]) -> None:
    port = free_port("0.0.0.0")
    result = cli(*deployment_flags(store, port))
    assert result.exit_code == 0, result.output
    assert f"GraphQL at http://0.0.0.0:{port}/audit/graphql (read-only)" in result.stderr
    assert {k: started[k] for k in ("host", "port", "root_path", "log_level")} == {
        "host": "0.0.0.0", "port": port, "root_path": "/audit", "log_level": "debug"}
    assert started["log_config"]["formatters"]["access"] == {
        "()": "store.api.logging_config.JsonLineFormatter"}
    check_deployed_app(started["app"])


def test_the_flags_reach_every_worker(store: Path, started: dict[str, Any]) -> None:
    result = cli(*deployment_flags(store, free_port("0.0.0.0")), "--workers", "3")
    assert result.exit_code == 0, result.output
    assert (started["app"], started["factory"], started["workers"], started["root_path"]) == (
        "store.cli.serve:app_from_settings", True, 3, "/audit")
    assert started["log_config"]["formatters"]["default"] == {
        "()": "store.api.logging_config.JsonLineFormatter"}
    check_deployed_app(app_from_settings())  # what each worker process builds


def test_trusted_documents_reach_every_worker(store: Path, started: dict[str, Any]) -> None:
    result = cli("serve", "--db", str(store), "--port", "0", "--workers", "2",
                 "--trusted-documents",
                 str(WORKBENCH))
    assert result.exit_code == 0, result.output
    with TestClient(app_from_settings(), base_url="http://127.0.0.1") as client:
        assert client.post("/graphql", json={"query": "{ ledger { treeSize } }"}
                           ).status_code == 403
        ledger_status = (WORKBENCH / "LedgerStatus.graphql").read_text(encoding="utf-8")
        answer = client.post("/graphql", json={"query": ledger_status}).json()
        assert answer["data"]["ledger"]["treeSize"] == LEDGER_LENGTH


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--time-limit", "0", "0.0: must be a number of seconds above 0"),
    ("--time-limit", "-1", "-1.0: must be a number of seconds above 0"),
    ("--time-limit", "nan", "nan: must be a number of seconds above 0"),
    ("--time-limit", "inf", "inf: must be a number of seconds above 0"),
    ("--root-path", "audit", "'audit': a URL path such as /audit (ASCII, no ? or #)"),
    ("--root-path", "/a?b", "'/a?b': a URL path such as /audit (ASCII, no ? or #)"),
    ("--root-path", "/prüfung", "'/prüfung': a URL path such as /audit (ASCII, no ? or #)"),
    ("--allowed-host", "https://audit.example.com", "'https://audit.example.com': a host"),
    ("--allowed-host", "audit.example.com:443", "'audit.example.com:443': a host"),
    ("--allowed-host", "audit*.example.com", "'audit*.example.com': a host"),
    ("--max-objects", "0", "0 is not in the range x>=1"),
    ("--read-threads", "0", "0 is not in the range 1<=x<=64"),
    ("--log-level", "loud", "'loud' is not one of"),
    ("--log-format", "xml", "'xml' is not one of"),
])
def test_bad_flag_values_are_usage_errors(store: Path, started: dict[str, Any], flag: str,
                                          value: str, message: str) -> None:
    result = cli("serve", "--db", str(store), "--port", "0", flag, value)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "app" not in started


def test_a_bad_trusted_documents_dir_stops_serve_with_exit_2(
    store: Path, started: dict[str, Any], tmp_path: Path
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "Broken.graphql").write_text("query Broken { ledger {\n")
    result = cli("serve", "--db", str(store), "--port", "0", "--trusted-documents",
                 tmp_path / "docs")
    assert result.exit_code == 2
    assert f"{tmp_path}/docs/Broken.graphql:2:1: Syntax Error: Expected Name, found <EOF>." in (
        result.stderr)
    assert "Traceback" not in result.output and "app" not in started


def test_trusted_documents_prints_the_manifest() -> None:
    result = cli("trusted-documents", WORKBENCH)
    assert result.exit_code == 0, result.output
    expected = {
        "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest(): path.stem
        for path in WORKBENCH.glob("*.graphql")}  # each file is named after its operation
    assert json.loads(result.stdout) == expected
    assert list(json.loads(result.stdout)) == sorted(expected)
    assert cli("trusted-documents", WORKBENCH).stdout_bytes == result.stdout_bytes


@pytest.mark.parametrize(("setup", "reason"), [
    (lambda d: None, "{d}/missing: no such directory"),
    (lambda d: (d / "missing").mkdir(), "{d}/missing: no .graphql files"),
    (lambda d: ((d / "missing").mkdir(), (d / "missing" / "Two.graphql").write_text(
        "query A { ledger { treeSize } }\nquery B { ledger { treeSize } }\n")),
     "{d}/missing/Two.graphql: 2 operations; a trusted document holds exactly one"),
])
def test_trusted_documents_names_what_is_wrong(tmp_path: Path, setup: Any,
                                               reason: str) -> None:
    setup(tmp_path)
    result = cli("trusted-documents", tmp_path / "missing")
    assert result.exit_code == 2
    assert reason.format(d=tmp_path) in result.stderr
    assert result.stdout == ""


@pytest.mark.slow
def test_a_real_server_with_workers_uses_every_flag(store: Path, tmp_path: Path) -> None:
    port = free_port()
    stdout, stderr = tmp_path / "stdout.log", tmp_path / "stderr.log"
    server = subprocess.Popen(
        [sys.executable, "-c", "from store.cli import main; main()", "serve", "--db",
         str(store), "--port", str(port), "--workers", "2", "--root-path", "/audit",
         "--allowed-host", "audit.example.com", "--max-objects", "50", "--log-format", "json",
         "--time-limit", "3"],
        env=subprocess_environ(), stdout=stdout.open("wb"), stderr=stderr.open("wb"))
    base, host = f"http://127.0.0.1:{port}", {"host": "audit.example.com"}
    try:
        deadline = time.monotonic() + 60
        while True:  # the proxy strips /audit: the server sees /healthz
            assert server.poll() is None, stderr.read_text()
            try:
                if httpx.get(f"{base}/healthz", headers=host).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "no answer within 60 s"
            time.sleep(0.2)
        for _ in range(4):  # spread over the workers; each one has the settings
            refused = httpx.post(f"{base}/graphql", headers=host,
                                 json={"query": FIFTY_ONE_OBJECTS}).json()
            assert refused["errors"][0]["message"].startswith(
                "this query may resolve 51 objects, over this server's limit of 50:")
        malformed = httpx.post(f"{base}/graphql", content=b"null",
                               headers={**host, "content-type": "application/json"})
        assert malformed.status_code == 422  # JSON, but not a GraphQL-over-HTTP request
    finally:
        server.terminate()
        server.wait(timeout=30)
    access = [json.loads(line) for line in stdout.read_text().splitlines()]
    assert {"method": "GET", "path": "/audit/healthz", "status": 200} in [
        {k: line.get(k) for k in ("method", "path", "status")} for line in access]
    assert {line["logger"] for line in access} == {"uvicorn.access"}
    errors = [json.loads(line) for line in stderr.read_text().splitlines()
              if not line.startswith("GraphQL at ")]
    assert errors and {line["logger"] for line in errors} == {"uvicorn.error"}


def test_demo_on_a_busy_port_suggests_another_before_printing_its_url(
        tmp_path: Path, started: dict[str, Any]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = cli("demo", "--db", tmp_path / "demo.db", "--port", str(port))
    assert result.exit_code == 1
    assert f"127.0.0.1:{port} cannot be served" in result.stderr
    assert f"choose another port with --port N, e.g. --port {port + 1}" in result.stderr
    assert "GraphQL at http" not in result.stderr
    assert started == {}  # uvicorn was never asked to serve
