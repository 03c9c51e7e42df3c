"""`verify --jobs N` runs the O(n) checks in worker processes: a worker that dies fails the
verify (never "intact"), and the report is the one a single process writes."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from cli_runs import cli
from jsonl_files import write_jsonl
from store_support import distinct_frames, triggers_bypassed, verify_both_ways

from store.db.audit_store import AuditStore
from store.db.verify.check_processes import CheckOutcome, CheckProcesses, run_check
from store.db.verify.store_checks import Scope, verify_store
from store.errors import StoreError


def _killed_on_the_leaves(url: str, name: str, scope: Scope, immutable: bool) -> CheckOutcome:
    """run_check, except that the worker checking the leaves is killed (as by the OOM killer)."""
    if name == "leaves":
        os.kill(os.getpid(), signal.SIGKILL)
    return run_check(url, name, scope, immutable)


def test_a_killed_worker_fails_the_verify_and_says_it_was_not_verified(
        examples_store: Path) -> None:
    with AuditStore.open(str(examples_store), read_only=True) as store, \
            store.engine.connect() as connection, \
            CheckProcesses(store.url, 2, check=_killed_on_the_leaves) as processes, \
            pytest.raises(StoreError) as raised:
        verify_store(connection, heavy=processes)
    assert str(raised.value) == ("a verify worker process ended before its checks were done "
                                 "(killed, or out of memory?): the store was not verified")


def test_two_processes_report_an_intact_store_as_one_does(examples_store: Path) -> None:
    result = verify_both_ways(examples_store)
    assert result.exit_code == 0
    assert result.stdout.startswith("intact: 18 leaves, root ")
    json_result = verify_both_ways(examples_store, "--json")
    assert json_result.stdout.startswith('{"intact":true,"tree_size":18,')


def test_many_problems_are_capped_and_ordered_the_same_in_one_process_or_three(
        db_path: Path, tmp_path: Path) -> None:
    """Every row's content changed out of band: more problems than the report shows, found
    by different workers; the first twenty are the same, in the same order."""
    frames = write_jsonl(tmp_path / "frames.jsonl", distinct_frames(40, "capped"))
    assert cli("ingest", "--db", db_path, frames).exit_code == 0
    with triggers_bypassed(db_path) as connection:
        for table in ("contract_assessments", "contract_residuals"):
            connection.execute(f"UPDATE {table} SET candidate_organ = 'forged'")
        connection.commit()
    alone = cli("verify", "--db", db_path, "--jobs", "1")
    three = cli("verify", "--db", db_path, "--jobs", "3")
    assert alone.exit_code == 1
    assert len(alone.stderr.splitlines()) == 20
    assert (three.exit_code, three.stderr) == (1, alone.stderr)
