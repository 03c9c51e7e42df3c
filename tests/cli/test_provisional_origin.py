"""Before `core-audit checkpoint --origin` has named the log, every checkpoint note the
project shows carries one provisional origin, `core-audit/` and the first tree head's root
(16 hex digits): the CLI's `checkpoint`, the Python API's `store.checkpoint()` (as the
README prints it), `prove --with-checkpoint`, and the console's log page and proof
download. One wording, so a note copied from one can be compared with another's."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore

# A residual of examples/adr_0225_frames.jsonl ("Tom gained 3.": action_cue_unbound).
EXAMPLE_RESIDUAL = "54b43aa2d7a9ec73c55f994d92be93d9f3148b28f72ac43c1f99fdf360f5fc42"


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("origin") / "audit.db"
    with AuditStore.open(str(path)) as store:
        for example in EXAMPLE_FILES:  # three batches; the first head is after the first file
            store.ingest(example.read_bytes().splitlines(keepends=True), source=example.name)
    return path


@pytest.fixture(scope="module")
def provisional(store_path: Path) -> str:
    with AuditStore.open(str(store_path), read_only=True) as store, \
            store.engine.connect() as connection:
        first_root = connection.exec_driver_sql(
            "SELECT root_hash FROM tree_heads ORDER BY tree_size LIMIT 1").scalar_one()
    return f"core-audit/{first_root[:16]}"


def test_the_python_api_prints_a_readable_note(store_path: Path, provisional: str) -> None:
    with AuditStore.open(str(store_path), read_only=True) as store:
        shown = str(store.checkpoint())
        root = store.tree_head().root
    # Three batches of the example files: 66 leaves (tests/spec_values.py's third head).
    assert shown == f"{provisional}\n66\n{base64.b64encode(root).decode()}"


def test_the_cli_and_prove_name_the_note_alike(store_path: Path, provisional: str) -> None:
    printed = cli("checkpoint", "--db", str(store_path))
    assert printed.exit_code == 0, printed.output
    assert printed.stdout.splitlines()[0] == provisional
    proved = cli("prove", "--db", str(store_path), "--index", "0", "--with-checkpoint")
    assert proved.exit_code == 0, proved.output
    assert json.loads(proved.stdout)["checkpoint"].splitlines()[0] == provisional


def test_the_console_names_the_note_alike(store_path: Path, provisional: str) -> None:
    with AuditStore.open(str(store_path), read_only=True) as db, TestClient(
            create_app(db, close_db_on_shutdown=False), base_url="http://127.0.0.1") as client:
        page = client.get("/log").text
        download = client.get(f"/proofs/residuals/{EXAMPLE_RESIDUAL}.json").json()
    assert f'<pre class="note-text">{provisional}\n' in page
    assert download["checkpoint"].splitlines()[0] == provisional
