"""The newcomer's path: the README run top to bottom, as a user types it, in a fresh copy of
the checkout — the first command's demo (stopped as a user stops it), then "A first look" in
one shell that activates the venv, then `serve` — so `core-audit: command not found`, an
unsigned "signed" checkpoint or a key left outside .gitignore fails here."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.cli_runs import subprocess_environ

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```sh\n(.*?)```", README, flags=re.S)
FIRST_LOOK = re.search(r"## A first look\n(.*?)\n## ", README, flags=re.S)

pytestmark = pytest.mark.slow


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A fresh copy of the checkout's files, and the venv the first command made (this test's
    own, which has core-audit installed from this checkout)."""
    folder = tmp_path / "core-audit"
    shutil.copytree(REPO, folder, ignore=shutil.ignore_patterns(
        ".git", ".venv", "*.db", "*.db-*", "__pycache__", ".*_cache", "*.key"))
    (folder / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return folder


def _serving(command: list[str], folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A serving command started as typed (its callers add `--port 0`: a developer's own
    server may hold 8000), once it printed its URL and answers."""
    log = folder / "serve.log"
    process = subprocess.Popen(command, cwd=folder, stdout=log.open("wb"),
                               stderr=subprocess.STDOUT, env=subprocess_environ())
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, log.read_text()
        found = re.search(r"GraphQL at (http://127\.0\.0\.1:(\d+))/graphql", log.read_text())
        if found and found.group(2) != "0":
            try:
                if httpx.get(f"{found.group(1)}/healthz").status_code == 200:
                    return process, found.group(1)
            except httpx.TransportError:
                pass
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGINT)  # Ctrl-C, as the README says
    assert process.wait(timeout=30) == 0


def test_the_readme_runs_top_to_bottom_in_a_fresh_checkout(checkout: Path) -> None:
    first = BLOCKS[0].splitlines()[0]
    assert first.endswith("&& .venv/bin/core-audit demo"), first
    demo, base = _serving([".venv/bin/core-audit", "demo", "--port", "0"], checkout)
    try:
        ledger = httpx.post(f"{base}/graphql", json={"query": "{ ledger { treeSize } }"}).json()
        assert ledger == {"data": {"ledger": {"treeSize": 83}}}
        assert httpx.get(f"{base}/").status_code == 200
    finally:
        _stop(demo)

    assert FIRST_LOOK is not None
    block = re.search(r"```sh\n(.*?)```", FIRST_LOOK.group(1), flags=re.S)
    assert block is not None
    lines = [line for line in block.group(1).splitlines() if line and not line.startswith("#")]
    assert lines[0].startswith(". .venv/bin/activate")
    assert lines[-1].startswith("core-audit serve")
    script = "set -eu\n" + "\n".join(lines[:-1]) + "\n"
    done = subprocess.run(["bash", "-c", script], cwd=checkout, capture_output=True, text=True,
                          timeout=300, env=subprocess_environ())
    assert done.returncode == 0, done.stderr
    assert "command not found" not in done.stderr
    assert "intact: 83 leaves" in done.stdout + done.stderr
    # choosing the origin logs it as one more leaf: 84
    assert "intact: 84 leaves" in done.stdout + done.stderr
    assert "extends the checkpoint of size 84" in done.stdout + done.stderr

    # The "signed C2SP checkpoint" is signed: origin, size, root, blank line, a signature line.
    note = (checkout / "checkpoint.txt").read_text(encoding="utf-8")
    body, _, signatures = note.partition("\n\n")
    assert body.splitlines()[:2] == ["audit.example.org/log", "84"]
    assert signatures.startswith("— audit.example.org/log ")
    # The secret key the walk wrote is one git would not commit.
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "-q", "auditor.key"],
                             cwd=REPO)
    assert ignored.returncode == 0, "auditor.key is not git-ignored"
    shown = subprocess.run(["git", "check-ignore", "--no-index", "-q", "auditor.pub"], cwd=REPO)
    assert shown.returncode == 1, "the public half should stay committable"

    serve_words = lines[-1].split("#")[0].split()
    server, base = _serving([str(checkout / ".venv/bin/core-audit"), *serve_words[1:],
                             "--port", "0"], checkout)
    try:
        answer = httpx.post(f"{base}/graphql", json={"query": "{ ledger { origin } }"}).json()
        assert answer == {"data": {"ledger": {"origin": "audit.example.org/log"}}}
    finally:
        _stop(server)
