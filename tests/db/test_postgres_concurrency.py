"""Several `core-audit ingest` processes write one PostgreSQL store at once: one gap-free chain.

Real processes, so marked slow (CI runs them too).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from backends import pg_schema, raw_query
from cli_runs import subprocess_environ
from jsonl_files import write_jsonl

from store.db.audit_store import AuditStore
from store.db.schema.record_kinds import APPEND_ONLY_TABLES, LEDGERED_KEYS

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

CORE_AUDIT = str(Path(sys.executable).with_name("core-audit"))
WRITERS = 4


def _frames(tag: str, count: int) -> list[dict[str, object]]:
    """Frames of their own, plus one residual every writer shares (seen "present" by all but
    the first to commit it)."""
    out: list[dict[str, object]] = []
    for i in range(count):
        text = f"Case {tag}-{i}: Tom gained {i} apples."
        start = text.index("gained")
        out.append({"problem_text": text, "contract_assessments": [{
            "candidate_organ": "unary_delta_transition",
            "missing_bindings": ["changed_object_unbound"], "unresolved_hazards": [],
            "runnable": False, "explanation": "not runnable",
            "evidence_spans": [{"text": "gained", "start": start, "end": start + 6,
                                "sentence_index": None}]}]})
    shared = "Tom gained apples."
    out.append({"problem_text": shared, "contract_assessments": [{
        "candidate_organ": "unary_delta_transition",
        "missing_bindings": ["delta_quantity_unbound"], "unresolved_hazards": [],
        "runnable": False, "explanation": "not runnable",
        "evidence_spans": [{"text": "gained", "start": 4, "end": 10, "sentence_index": None}]}]})
    return out


def _counts(url: str) -> dict[str, int]:
    return {t: raw_query(url, f"SELECT count(*) FROM {t}")[0][0]  # type: ignore[misc]
            for t in APPEND_ONLY_TABLES}


def test_concurrent_writers_keep_one_gap_free_chain(tmp_path: Path, pg_url: str) -> None:
    files = [write_jsonl(tmp_path / f"w{n}.jsonl", _frames(f"w{n}", 500))
             for n in range(WRITERS)]
    # Reference: the same files, one after another, into another schema.
    with pg_schema() as reference, AuditStore.open(reference) as store:
        for path in files:
            store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
        expected = _counts(reference)
    # The store does not exist yet: the writers also race to create it.
    writers = [subprocess.Popen([CORE_AUDIT, "ingest", "--db", pg_url, str(path)],
                                env=subprocess_environ(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for path in files]
    outcomes = [(w.wait(timeout=300), w.stderr.read().decode() if w.stderr else "")
                for w in writers]
    assert [code for code, _ in outcomes] == [0] * WRITERS, outcomes
    assert _counts(pg_url) == expected
    seqs = sorted(row[0] for table in LEDGERED_KEYS
                  for row in raw_query(pg_url, f"SELECT seq FROM {table}"))
    assert seqs == list(range(1, len(seqs) + 1))
    assert sorted(r[0] for r in raw_query(pg_url, "SELECT batch_id FROM ingest_batches")) == [
        *range(1, WRITERS + 1)]
    verify = subprocess.run([CORE_AUDIT, "verify", "--db", pg_url], env=subprocess_environ(),
                            capture_output=True, text=True, check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert verify.stdout.startswith(f"intact: {len(seqs)} leaves")
