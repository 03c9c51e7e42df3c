"""`core-audit demo` honours $CORE_AUDIT_DB, but only for a store of its own (issue 32, item
9): a store holding any batch but the bundled examples' is refused, naming the batch, and not
one byte of it changes; a new store, or the demo's own again, is served."""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path
from typing import Any

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli
from jsonl_files import gained_frame, write_jsonl

from store.db.audit_store import AuditStore
from store.db.queries.batches import first_batch_not_of

EXAMPLES = EXAMPLE_FILES[0].parent


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Any]:
    """What demo would serve, recorded instead of served."""
    calls: list[Any] = []
    monkeypatch.setattr(importlib.import_module("store.cli.demo"), "run_server",
                        lambda settings, **options: calls.append(settings.db))
    monkeypatch.chdir(tmp_path)
    return calls


def digest(path: Path) -> tuple[str, bytes]:
    """The store file's sha256 and its -wal's bytes (a read-only open may leave an empty
    -wal and a -shm beside it: no frame, nothing of the store)."""
    wal = Path(f"{path}-wal")
    return hashlib.sha256(path.read_bytes()).hexdigest(), \
        wal.read_bytes() if wal.exists() else b""


def real_frame(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "production.jsonl", [gained_frame(
        "Ann gained 3 coins.", "prod/1", missing_bindings=["direction_unbound"],
        unresolved_hazards=[], runnable=False, explanation="not runnable",
        sentence_index=0)])


def test_demo_on_core_audit_db_refuses_a_real_store_and_changes_no_byte(
        served: list[Any], tmp_path: Path) -> None:
    real = tmp_path / "real.db"
    assert cli("ingest", "--db", real, EXAMPLE_FILES[0]).exit_code == 0
    assert cli("ingest", "--db", real, real_frame(tmp_path)).exit_code == 0
    before = digest(real)
    with AuditStore.open(str(real), read_only=True) as store:
        before_size = store.tree_head().size
    result = cli("demo", "--port", "0", env={"CORE_AUDIT_DB": str(real)})
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"Error: {real} is not the demo's store: it holds batch 2 (assessments from "
        f"'{tmp_path}/production.jsonl', 1 lines, ingested ")
    assert ("not a bundled example; the demo writes nothing to it. Run the demo on a store "
            "of its own (--db demo.db), or serve this one with `core-audit serve`") \
        in result.stderr
    assert digest(real) == before
    assert served == []
    with AuditStore.open(str(real), read_only=True) as store:
        assert store.tree_head().size == before_size


def test_an_example_of_the_same_name_but_other_bytes_is_not_the_demos(
        served: list[Any], tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    renamed = tmp_path / EXAMPLE_FILES[0].name
    renamed.write_bytes(real_frame(tmp_path).read_bytes())
    assert cli("ingest", "--db", store, renamed).exit_code == 0
    result = cli("demo", "--db", store, "--port", "0")
    assert result.exit_code == 1
    assert f"it holds batch 1 (assessments from '{renamed}'" in result.stderr
    assert served == []


def test_demo_honours_core_audit_db_for_a_new_store_and_its_own(
        served: list[Any], tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.db"
    first = cli("demo", "--port", "0", env={"CORE_AUDIT_DB": str(elsewhere)})
    assert first.exit_code == 0, first.output
    assert elsewhere.exists() and not (tmp_path / "core-audit.db").exists()
    again = cli("demo", "--port", "0", env={"CORE_AUDIT_DB": str(elsewhere)})
    assert again.exit_code == 0, again.output
    assert "0 new" in again.stderr
    partial = tmp_path / "partial.db"  # an interrupted demo, or an example ingested alone
    assert cli("ingest", "--db", partial, EXAMPLE_FILES[1]).exit_code == 0
    assert cli("demo", "--db", partial, "--port", "0").exit_code == 0
    assert served == [None, None, str(partial)]


def test_batches_that_record_no_input_may_sit_beside_the_examples(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    assert cli("ingest", "--db", store, real_frame(tmp_path)).exit_code == 0
    with AuditStore.open(str(store), read_only=True) as opened:
        found = opened.execute(first_batch_not_of, {}, ())
        assert found is not None and found.record_type == "assessments"
        assert opened.execute(first_batch_not_of, {}, ("assessments",)) is None
        assert opened.execute(first_batch_not_of, {found.input_sha256}, ()) is None
