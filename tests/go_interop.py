"""Go's reference packages against the served log: the app on a real socket, and the Go
client of tests/go/tlogclient built offline from Debian's golang-go and x/mod (GOPATH mode)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn

from store.api.app import create_app
from store.db.audit_store import AuditStore

REPO = Path(__file__).resolve().parents[1]
GO_CLIENT = REPO / "tests" / "go" / "tlogclient"
GO_ENV = {"GO111MODULE": "off", "GOPATH": "/usr/share/gocode", "GOFLAGS": "",
          "CGO_ENABLED": "0"}


@contextmanager
def serving(db_path: Path) -> Iterator[str]:
    """The app on a real socket (Go's client speaks HTTP), in a thread of this process."""
    db = AuditStore.open(str(db_path), read_only=True)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(db), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture(scope="session")
def go_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("go") is None or not Path("/usr/share/gocode/src/golang.org/x/mod").is_dir():
        pytest.skip("needs Debian's golang-go and golang-golang-x-mod-dev (.ci/run installs them)")
    out = tmp_path_factory.mktemp("go")
    env = {**os.environ, **GO_ENV, "GOCACHE": str(out / "cache"), "HOME": str(out)}
    subprocess.run(["go", "build", "-o", str(out / "tlogclient"), "."], cwd=GO_CLIENT,
                   env=env, check=True, capture_output=True, timeout=600)
    return out / "tlogclient"


def run_go(client: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(client), *args], capture_output=True, text=True, timeout=600)


