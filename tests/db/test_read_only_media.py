"""Stores on read-only media (an evidence disk, a CD): opened with SQLite's immutable=1 where
the file or its folder cannot be written, said on stderr, and never written; a -wal holding
transactions such an open would miss is refused with what to do instead.

The tests run as root, whom chmod does not stop: the decision is tested with a `writable`
stand-in, the immutable open itself with CORE_AUDIT_IMMUTABLE=1 (the same open, forced), and
a real read-only mount in a private mount namespace (`unshare -m`) where that is permitted.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli, subprocess_environ
from free_ports import free_port
from spec_values import LEDGER_LENGTH
from starlette.testclient import TestClient

from store import StoreError
from store.db.schema.engine import read_only_mode

REPO = Path(__file__).resolve().parents[2]
IMMUTABLE = {"CORE_AUDIT_IMMUTABLE": "1"}
TREE_SIZE = LEDGER_LENGTH  # the three example files' rows
CHECKPOINT_HINT = "PRAGMA wal_checkpoint(TRUNCATE)"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """The examples, written and closed: no -wal left beside the file."""
    db = tmp_path / "store" / "audit.db"
    db.parent.mkdir()
    for path in EXAMPLE_FILES:
        assert cli("ingest", "--db", db, path).exit_code == 0
    assert sorted(p.name for p in db.parent.iterdir()) == ["audit.db"]
    return db


@pytest.fixture(scope="module")
def live_wal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A store whose last batches are only in its -wal: another connection holds a read
    transaction, so the writer could not checkpoint them into the file (a live store). One
    for the module (each ingest waits out the writer's 2 s fold against the reader); every
    test reads a copy of it."""
    db = tmp_path_factory.mktemp("live") / "audit.db"
    assert cli("ingest", "--db", db, EXAMPLE_FILES[0]).exit_code == 0
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN")
    holder.execute("SELECT count(*) FROM ingest_batches").fetchone()
    for path in EXAMPLE_FILES[1:]:
        assert cli("ingest", "--db", db, path).exit_code == 0
    assert Path(f"{db}-wal").stat().st_size > 0
    yield db
    holder.close()


def copied(db: Path, folder: Path, *suffixes: str) -> Path:
    folder.mkdir()
    for suffix in ("", *suffixes):
        shutil.copy2(f"{db}{suffix}", folder / f"{db.name}{suffix}")
    return folder / db.name


# --- the decision ---------------------------------------------------------------------------


@pytest.mark.parametrize(("unwritable", "beside", "mode"), [
    ((), (), "ro"),  # a store this process can write: as before, mode=ro
    (("file",), (), "immutable"),
    (("folder",), (), "immutable"),  # SQLite could not create its -shm here
    (("file", "folder"), (), "immutable"),  # read-only media
    (("file", "folder"), ("-wal:0",), "immutable"),  # an empty log holds nothing
    (("file", "folder"), ("-wal", "-shm"), "ro"),  # SQLite reads the log through the -shm
    (("file",), ("-wal",), "ro"),  # ... or through one it can create in the folder
])
def test_when_a_read_only_open_is_immutable(tmp_path: Path, unwritable: tuple[str, ...],
                                            beside: tuple[str, ...], mode: str) -> None:
    db = tmp_path / "audit.db"
    db.write_bytes(b"")
    for name in beside:
        suffix, _, size = name.partition(":")
        Path(f"{db}{suffix}").write_bytes(b"x" * int(size or 8))
    paths = {"file": db, "folder": tmp_path}
    closed = {paths[what] for what in unwritable}

    assert read_only_mode(db, writable=lambda p: p not in closed) == mode


def test_a_wal_an_immutable_open_would_miss_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    db.write_bytes(b"")
    Path(f"{db}-wal").write_bytes(b"x" * 8)

    with pytest.raises(StoreError) as refused:
        read_only_mode(db, writable=lambda _: False)
    message = str(refused.value)
    assert message.startswith(f"{db}: its write-ahead log audit.db-wal holds transactions")
    assert "copy audit.db-wal and audit.db-shm along with the file" in message
    assert f"sqlite3 audit.db '{CHECKPOINT_HINT}'" in message


# --- the immutable open, forced -------------------------------------------------------------


@pytest.mark.parametrize("command", [
    ("verify",), ("query", "{ ledger { treeSize } }"), ("export", "residuals", "--format", "csv"),
    ("log",), ("prove", "--index", "0"), ("db", "current"),
])
def test_commands_read_an_immutable_store_and_leave_no_file_beside_it(
        store: Path, command: tuple[str, ...]) -> None:
    before = digest(store)
    result = cli(*command, "--db", store, env=IMMUTABLE)
    assert result.exit_code == 0, result.output
    assert result.stderr == f"opened read-only (immutable): {store} (CORE_AUDIT_IMMUTABLE=1)\n"
    assert sorted(p.name for p in store.parent.iterdir()) == ["audit.db"]  # no -wal, no -shm
    assert digest(store) == before


def test_verify_workers_open_an_immutable_store_immutable(store: Path, tmp_path: Path) -> None:
    # A verify run earlier in this process started the fork server without the variable.
    other = copied(store, tmp_path / "other")
    assert cli("verify", "--jobs", "2", "--db", other).exit_code == 0
    before = digest(store)
    result = cli("verify", "--jobs", "2", "--db", store, env=IMMUTABLE)
    assert result.stdout.startswith(f"intact: {TREE_SIZE} leaves, root ")
    assert sorted(p.name for p in store.parent.iterdir()) == ["audit.db"]  # no -wal, no -shm
    assert digest(store) == before


def test_verify_on_an_immutable_store_checks_everything(store: Path) -> None:
    result = cli("verify", "--db", store, env=IMMUTABLE)
    assert result.stdout.startswith(f"intact: {TREE_SIZE} leaves, root ")


def test_serve_answers_from_an_immutable_store(store: Path, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    import uvicorn

    started: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: started.update(app=app))
    result = cli("serve", "--db", store, "--port", str(free_port()), env=IMMUTABLE)
    assert result.exit_code == 0, result.output
    assert f"opened read-only (immutable): {store}" in result.stderr
    with TestClient(started["app"], base_url="http://127.0.0.1") as served:
        answer = served.post("/graphql", json={"query": "{ ledger { treeSize } }"})
    assert answer.json() == {"data": {"ledger": {"treeSize": TREE_SIZE}}}


@pytest.mark.parametrize("command", [("verify",), ("export", "residuals", "--format", "csv"),
                                     ("query", "{ ledger { treeSize } }"), ("db", "current")])
def test_a_copied_live_store_whose_wal_an_immutable_open_would_miss_is_refused(
        live_wal: Path, tmp_path: Path, command: tuple[str, ...]) -> None:
    db = copied(live_wal, tmp_path / "copy", "-wal")
    result = cli(*command, "--db", db, env=IMMUTABLE)
    assert result.exit_code == 1
    assert "its write-ahead log audit.db-wal holds transactions" in result.stderr
    assert CHECKPOINT_HINT in result.stderr
    assert "Traceback" not in result.output


def test_without_the_immutable_switch_a_copied_wal_is_read(live_wal: Path, tmp_path: Path
                                                           ) -> None:
    db = copied(live_wal, tmp_path / "copy", "-wal")
    result = cli("verify", "--db", db)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"intact: {TREE_SIZE} leaves")


def test_verify_workers_ignore_the_switch_a_newer_fork_server_was_started_with(
        live_wal: Path, store: Path, tmp_path: Path) -> None:
    """The fork server starts once a process, with the environment of the verify that first
    needs it: an immutable verify before, then a plain one of a copied live store, must read
    its -wal (the workers open as this verify did, not as the fork server's environment
    says). Run in a process of its own, so the fork server is this test's."""
    db = copied(live_wal, tmp_path / "copy", "-wal")
    script = (
        "import os, sys\n"
        "from click.testing import CliRunner\n"
        "from store.cli import main\n"
        "first = CliRunner().invoke(main, ['verify', '--jobs', '2', '--db', sys.argv[1]],\n"
        "                           env={'CORE_AUDIT_IMMUTABLE': '1'})\n"
        "assert first.exit_code == 0, first.output\n"
        "os.environ.pop('CORE_AUDIT_IMMUTABLE', None)\n"
        "second = CliRunner().invoke(main, ['verify', '--jobs', '2', '--db', sys.argv[2]])\n"
        "print(second.exit_code, second.output)\n")
    done = subprocess.run([sys.executable, "-c", script, str(store), str(db)],
                          capture_output=True, text=True, cwd=REPO, timeout=300,
                          env={**subprocess_environ(), "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"0 intact: {TREE_SIZE} leaves"), done.stdout


# --- a real read-only mount -----------------------------------------------------------------


def _mount_namespace_works() -> bool:
    try:
        return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


def on_read_only_mount(folder: Path, mount: Path, *commands: tuple[str, ...]
                       ) -> list[subprocess.CompletedProcess[str]]:
    """Run core-audit `commands` with `folder` bind-mounted read-only at `mount`, in a mount
    namespace of their own (nothing outside it sees the mount)."""
    mount.mkdir()
    script = (f"mount --bind '{folder}' '{mount}' && mount -o remount,ro,bind '{mount}' && "
              f"exec {sys.executable} -c 'from store.cli import main; main()' \"$@\"")
    return [subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", *command],
                           capture_output=True, text=True, cwd=REPO,
                           env={"PYTHONPATH": str(REPO), "PATH": "/usr/sbin:/usr/bin:/bin"})
            for command in commands]


read_only_mount = pytest.mark.skipif(
    not _mount_namespace_works(), reason="needs `unshare -m` (root or user namespaces) for a "
                                        "read-only bind mount")


@pytest.mark.slow
@read_only_mount
def test_a_store_on_a_read_only_mount(store: Path, tmp_path: Path) -> None:
    on_mount = tmp_path / "mnt" / "audit.db"
    verify, query, export, current = on_read_only_mount(
        store.parent, on_mount.parent,
        ("verify", "--db", str(on_mount)),
        ("query", "--db", str(on_mount), "{ ledger { treeSize } }"),
        ("export", "turns", "--db", str(on_mount), "--format", "jsonl"),
        ("db", "current", "--db", str(on_mount)))
    said = f"opened read-only (immutable): {on_mount} (not writable here)\n"
    assert (verify.returncode, verify.stderr) == (0, said)
    assert verify.stdout.startswith(f"intact: {TREE_SIZE} leaves")
    assert (query.returncode, query.stderr) == (0, said)
    assert f'"treeSize": {TREE_SIZE}' in query.stdout
    assert (export.returncode, export.stderr, export.stdout) == (0, said, "")  # no turns
    assert (current.returncode, current.stdout, current.stderr) == (0, "0019 (at head)\n", said)
    assert sorted(p.name for p in store.parent.iterdir()) == ["audit.db"]


@pytest.mark.slow
@read_only_mount
def test_a_live_store_copied_with_its_wal_and_shm_is_read_whole(live_wal: Path,
                                                                tmp_path: Path) -> None:
    folder = copied(live_wal, tmp_path / "cd", "-wal", "-shm").parent
    on_mount = tmp_path / "mnt" / "audit.db"
    [verify] = on_read_only_mount(folder, on_mount.parent, ("verify", "--db", str(on_mount)))
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.startswith(f"intact: {TREE_SIZE} leaves")  # the -wal's batches too


@pytest.mark.slow
@read_only_mount
def test_a_live_store_copied_with_its_wal_alone_is_refused(live_wal: Path, tmp_path: Path
                                                          ) -> None:
    folder = copied(live_wal, tmp_path / "cd", "-wal").parent
    on_mount = tmp_path / "mnt" / "audit.db"
    [verify] = on_read_only_mount(folder, on_mount.parent, ("verify", "--db", str(on_mount)))
    assert verify.returncode == 1
    assert "its write-ahead log audit.db-wal holds transactions" in verify.stderr
    assert CHECKPOINT_HINT in verify.stderr
