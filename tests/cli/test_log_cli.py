"""`core-audit log` and `prove`, checked by an independent RFC 9162 verifier
(tests/rfc9162_reference.py).

The store holds the bundled examples and three batches of generated frames: more than
2**SUBTREE_LEVEL leaves, so proofs use stored subtrees as well as recomputed ones. The
verifier follows RFC 9162 §2.1.1, §2.1.3.2 and §2.1.4.2 and does not import
store.model.merkle: a bug shared by the prover and the store's verifier would pass otherwise.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import BACKENDS, pg_schema, raw_query
from cli_runs import cli
from jsonl_files import write_jsonl
from rfc9162_reference import consistency_ok, inclusion_ok, leaf, mth, sha256
from sqlalchemy import Connection

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.log.stored_log import StoredLog
from store.db.schema.tables import SUBTREE_LEVEL

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.jsonl"))
EXTRA_BATCHES, FRAMES_PER_BATCH = 3, 25
SPAN = {"text": "gained", "start": 4, "end": 10, "sentence_index": None}


def extra_frames(batch: int) -> list[dict[str, Any]]:
    """Frames with distinct problem texts: a new assessment each, with three residuals."""
    return [{"source_ref": f"test:extra-{batch}-{i}", "problem_text": f"Tom gained {i}.",
             "contract_assessments": [{
                 "candidate_organ": "unary_delta_transition",
                 "missing_bindings": ["action_cue_unbound", "direction_unbound",
                                      "changed_object_unbound"],
                 "unresolved_hazards": [], "runnable": False,
                 "explanation": "diagnostic candidate is not runnable: action_cue_unbound, "
                                "direction_unbound, changed_object_unbound",
                 "evidence_spans": [SPAN]}]}
            for i in range(FRAMES_PER_BATCH)]


def build_store(db: str, folder: Path) -> None:
    paths = [*EXAMPLES, *(write_jsonl(folder / f"extra{b}.jsonl", extra_frames(b))
                          for b in range(EXTRA_BATCHES))]
    for path in paths:
        result = cli("ingest", "--db", db, path)
        assert result.exit_code == 0, result.output


@pytest.fixture(scope="module", params=BACKENDS)
def log_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("log")
    if request.param == "sqlite":
        url = f"sqlite:///{folder / 'audit.db'}"
        build_store(url, folder)
        yield url
        return
    with pg_schema() as url:
        build_store(url, folder)
        yield url


@pytest.fixture(scope="module")
def logged(log_store: str) -> list[bytes]:
    """Every entry, as `core-audit log` prints it."""
    result = cli("log", "--db", log_store)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout_bytes.splitlines()]
    assert [line["index"] for line in lines] == list(range(len(lines)))
    return [line["entry"].encode("utf-8") for line in lines]


def heads(db: str) -> list[tuple[int, bytes]]:
    return [(int(size), bytes.fromhex(str(root))) for size, root in raw_query(
        db, "SELECT tree_size, root_hash FROM tree_heads ORDER BY tree_size")]


def connect(db: str) -> Iterator[Connection]:  # a generator: `for connection in connect(db)`
    with AuditStore.open(db, read_only=True) as store, store.engine.connect() as connection:
        yield connection


def test_the_log_alone_rebuilds_every_tree_head_and_the_checkpoint(log_store: str,
                                                                   logged: list[bytes]) -> None:
    leaves = [leaf(entry) for entry in logged]
    assert len(leaves) > 1 << SUBTREE_LEVEL
    assert len(heads(log_store)) == len(EXAMPLES) + EXTRA_BATCHES
    for size, root in heads(log_store):
        assert mth(leaves[:size]) == root, size
    result = cli("checkpoint", "--db", log_store)
    assert result.exit_code == 0, result.output
    _origin, size, root, blank = result.stdout.split("\n")[:4]
    assert (int(size), blank) == (len(leaves), "")
    assert base64.b64decode(root) == mth(leaves)


def test_log_ranges(log_store: str, logged: list[bytes]) -> None:
    result = cli("log", "--db", log_store, "--start", "250", "--end", "260")
    lines = [json.loads(line) for line in result.stdout_bytes.splitlines()]
    assert [(d["index"], d["entry"].encode()) for d in lines] == list(
        zip(range(250, 260), logged[250:260], strict=True))
    assert cli("log", "--db", log_store, "--start", "7", "--end", "7").stdout == ""
    size = len(logged)
    for bad in (["--end", str(size + 1)], ["--start", "9", "--end", "8"], ["--start", "-1"]):
        result = cli("log", "--db", log_store, *bad)
        assert result.exit_code == 1, bad
        assert "leaf range" in result.output and result.exception.__class__ is SystemExit


def test_every_leaf_at_several_sizes_has_a_proof_the_reference_accepts(
        log_store: str, logged: list[bytes]) -> None:
    leaves = [leaf(entry) for entry in logged]
    sizes = sorted({size for size, _ in heads(log_store)} | {1, 255, 256, 257, 300})
    for connection in connect(log_store):
        log = StoredLog(connection)  # one cache for all sizes: a full subtree never changes
        for size in sizes:
            root = mth(leaves[:size])
            assert log.root(size) == root
            for index in range(size):
                path = log.inclusion(index, size)
                assert inclusion_ok(index, size, leaves[index], path, root), (index, size)
                if path:  # a proof for another leaf, or with a changed node, is refused
                    assert not inclusion_ok(index, size, leaves[(index + 1) % size], path, root)
                    assert not inclusion_ok(index, size, leaves[index], path[1:], root)


def prove(db: str, *args: str) -> dict[str, Any]:
    result = cli("prove", "--db", db, *args)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def check_inclusion(proof: dict[str, Any], logged: list[bytes]) -> None:
    index, size = proof["leaf_index"], proof["tree_size"]
    entry = proof["entry"].encode("utf-8")
    assert entry == logged[index]
    assert proof["leaf_hash"] == leaf(entry).hex()
    root = mth([leaf(e) for e in logged[:size]])
    assert proof["root_hash"] == root.hex()
    path = [bytes.fromhex(h) for h in proof["inclusion_path"]]
    assert inclusion_ok(index, size, leaf(entry), path, root)


def test_prove_by_index_and_tree_size(log_store: str, logged: list[bytes]) -> None:
    size = len(logged)
    for index, tree_size in ((0, None), (255, 256), (256, None), (size - 1, None), (3, 4)):
        extra = [] if tree_size is None else ["--tree-size", str(tree_size)]
        proof = prove(log_store, "--index", str(index), *extra)
        assert (proof["leaf_index"], proof["tree_size"]) == (index, tree_size or size)
        check_inclusion(proof, logged)


@pytest.mark.parametrize(("option", "table", "key"), [
    ("--residual", "contract_residuals", "residual_id"),
    ("--assessment", "contract_assessments", "assessment_id"),
    ("--surface", "surface_records", "surface_id"),
    ("--turn", "turns", "turn_key"),
])
def test_prove_each_record_kind(log_store: str, logged: list[bytes], option: str, table: str,
                                key: str) -> None:
    # one record a kind: every leaf is proven above
    record_id, seq = raw_query(log_store, f"SELECT {key}, seq FROM {table} ORDER BY seq")[0]
    proof = prove(log_store, option, str(record_id))
    assert proof["leaf_index"] == int(str(seq)) - 1
    assert json.loads(proof["entry"])["row"][key] == record_id
    check_inclusion(proof, logged)


def test_every_pair_of_batch_heads_is_proven_consistent(log_store: str) -> None:
    tree_heads = [(0, sha256(b"")), *heads(log_store)]
    for connection in connect(log_store):
        for i, (first, first_root) in enumerate(tree_heads):
            for second, second_root in tree_heads[i:]:
                proof = queries.consistency_proof(connection, first, second)
                assert (proof.first_root, proof.second_root) == (first_root.hex(),
                                                                 second_root.hex())
                path = [bytes.fromhex(h) for h in proof.consistency_path]
                if first == 0:  # RFC 9162 has no proof from the empty tree: nothing to check
                    assert path == []
                    continue
                assert consistency_ok(first, second, first_root, second_root, path)
                if path:
                    assert not consistency_ok(first, second, second_root, first_root, path)


def test_prove_consistency_prints_the_rfc_fields(log_store: str) -> None:
    (first, first_root), *_, (second, second_root) = heads(log_store)
    proof = prove(log_store, "--consistency", str(first))
    assert (proof["first"], proof["second"]) == (first, second)
    assert (proof["first_root"], proof["second_root"]) == (first_root.hex(), second_root.hex())
    path = [bytes.fromhex(h) for h in proof["consistency_path"]]
    assert consistency_ok(first, second, first_root, second_root, path)
    middle = heads(log_store)[3][0]
    proof = prove(log_store, "--consistency", str(first), "--tree-size", str(middle))
    assert proof["second"] == middle


@pytest.mark.parametrize(("args", "message"), [
    (["--residual", "0" * 64], "no residual with residual_id"),
    (["--turn", "F" * 64], "64 lowercase hex digits"),
    (["--surface", "abc"], "64 lowercase hex digits"),
    (["--index", "-1"], "leaf index"),
    (["--index", "100000"], "leaf index"),
    (["--index", str(10**30)], "leaf index"),
    (["--index", "300", "--tree-size", "300"], "treeSize"),
    (["--index", "3", "--tree-size", "100000"], "treeSize"),
    (["--consistency", "100000"], "fromSize"),
    (["--consistency", "5", "--tree-size", "4"], "fromSize"),
])
def test_prove_errors_exit_1_with_a_message(log_store: str, args: list[str],
                                            message: str) -> None:
    result = cli("prove", "--db", log_store, *args)
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)


def test_prove_wants_exactly_one_subject(log_store: str) -> None:
    assert cli("prove", "--db", log_store).exit_code == 2
    assert cli("prove", "--db", log_store, "--index", "1", "--consistency", "1").exit_code == 2
