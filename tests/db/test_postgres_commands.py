"""Every command takes `--db postgresql+psycopg://...` (one store per schema)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from backends import raw_query
from cli_runs import cli, subprocess_environ
from free_ports import free_port

from store.db.schema.record_kinds import LEDGERED_KEYS
from store.db.schema.schema_version import head_revision

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = [REPO / "examples" / name for name in (
    "adr_0225_frames.jsonl", "core_frames_families.jsonl", "adr_0052_surfaces.jsonl")]


def _ok(*args: str | Path) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_db_upgrade_current_and_downgrade(pg_url: str) -> None:
    _ok("db", "upgrade", "--db", pg_url)
    assert _ok("db", "current", "--db", pg_url).strip() == f"{head_revision()} (at head)"
    assert {r[0] for r in raw_query(pg_url, "SELECT tablename FROM pg_tables "
                                            "WHERE schemaname = current_schema()")} == {
        "alembic_version", "ingest_batches", "contract_assessments", "contract_residuals",
        "residual_occurrences", "surface_records", "surface_occurrences", "residual_tallies",
        "turns", "log_subtrees", "tree_heads", "log_origin", "checkpoints",
        "checkpoint_cosignatures", "sighting_counts", "turn_fields", "turn_constructions",
        "turn_assessments", "residual_texts", "surface_texts", "turn_texts",
        "residual_record_tallies"}
    _ok("db", "downgrade", "0001", "--db", pg_url)
    assert _ok("db", "current", "--db", pg_url).strip().startswith("0001")
    _ok("db", "upgrade", "--db", pg_url)
    assert _ok("db", "current", "--db", pg_url).strip() == f"{head_revision()} (at head)"


def test_ingest_verify_checkpoint_query(pg_url: str, tmp_path: Path) -> None:
    out = json.loads(_ok("ingest", "--json", "--db", pg_url, EXAMPLES[0]))
    assert out["batches"][0]["tables"]["contract_residuals"]["new"] == 6
    for path in EXAMPLES[1:]:
        _ok("ingest", "--db", pg_url, path)
    note = _ok("checkpoint", "--db", pg_url)
    _, size, root = note.split("\n")[:3]
    leaves = sum(raw_query(pg_url, f"SELECT count(*) FROM {t}")[0][0]  # type: ignore[misc]
                 for t in LEDGERED_KEYS)
    assert int(size) == leaves
    checkpoint = tmp_path / "checkpoint.txt"
    checkpoint.write_text(note, encoding="utf-8")
    verified = _ok("verify", "--db", pg_url, "--checkpoint", checkpoint)
    head = base64.b64decode(root).hex()
    assert verified.strip() == (f"intact: {size} leaves, root {head}; extends the checkpoint "
                                f"of size {size}")
    answer = json.loads(_ok("query", "--db", pg_url, "{ ledger { treeSize rootHash } }"))
    assert answer == {"data": {"ledger": {"treeSize": int(size), "rootHash": head}}}


def test_a_bad_file_writes_nothing(pg_url: str, tmp_path: Path) -> None:
    _ok("ingest", "--db", pg_url, EXAMPLES[0])
    before = raw_query(pg_url, "SELECT count(*) FROM tree_heads")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(EXAMPLES[1].read_text() + "not json\n")
    result = cli("ingest", "--db", pg_url, bad)
    assert result.exit_code == 2
    assert raw_query(pg_url, "SELECT count(*) FROM tree_heads") == before


def test_surface_record(pg_url: str) -> None:
    shown = json.loads(_ok("surface", "knowledge", "--intent", "cause", "--record",
                           "--db", pg_url))
    assert shown["grounding_source"] == "teaching"
    assert raw_query(pg_url, "SELECT grounding_source, surface FROM surface_records") == [
        ("teaching", shown["surface"])]
    assert raw_query(pg_url, "SELECT count(*) FROM surface_occurrences") == [(1,)]
    assert _ok("verify", "--db", pg_url).startswith("intact: ")


def test_serve(pg_url: str) -> None:
    _ok("ingest", "--db", pg_url, EXAMPLES[0])
    port = free_port()
    command = Path(sys.executable).parent / "core-audit"
    server = subprocess.Popen(
        [str(command), "serve", "--db", pg_url, "--port", str(port)],
        env=subprocess_environ(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None, server.stdout.read() if server.stdout else ""
            assert time.monotonic() < deadline, "server did not come up"
            time.sleep(0.2)
        response = httpx.post(f"{base}/graphql",
                              json={"query": "{ ledger { treeSize } residuals { totalCount } }"})
        body = response.json()
        assert body["data"]["ledger"]["treeSize"] == raw_query(
            pg_url, "SELECT max(tree_size) FROM tree_heads")[0][0]
        assert body["data"]["residuals"]["totalCount"] == raw_query(
            pg_url, "SELECT count(*) FROM contract_residuals")[0][0]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_nul_character_rejects_the_file_cleanly(pg_url: str, tmp_path: Path) -> None:
    # PostgreSQL text cannot hold U+0000: the line is named and nothing is written.
    _ok("ingest", "--db", pg_url, EXAMPLES[0])
    before = raw_query(pg_url, "SELECT count(*) FROM tree_heads")
    record = {"problem_text": "Tom gained\u0000 apples.", "contract_assessments": [{
        "candidate_organ": "unary_delta_transition",
        "missing_bindings": ["delta_quantity_unbound"], "unresolved_hazards": [],
        "runnable": False, "explanation": "x",
        "evidence_spans": [{"text": "gained", "start": 4, "end": 10, "sentence_index": None}]}]}
    path = tmp_path / "nul.jsonl"
    path.write_text(EXAMPLES[1].read_text() + json.dumps(record) + "\n")
    result = cli("ingest", "--db", pg_url, path)
    assert result.exit_code == 2
    lines = len(EXAMPLES[1].read_text().splitlines()) + 1
    assert f"{path}:{lines}: a text value holds U+0000 (NUL)" in result.stderr
    assert raw_query(pg_url, "SELECT count(*) FROM tree_heads") == before
