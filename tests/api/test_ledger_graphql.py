"""The transparency log over GraphQL: tree head, checkpoint, inclusion and consistency proofs.

Every proof is checked by the independent RFC 9162 verifier of tests/test_log_cli.py, on both
backends, against the tree heads as stored (read raw, outside the store's code).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import raw_query
from cli_runs import cli
from graphql_requests import graphql_data, post_graphql
from rfc9162_reference import consistency_ok, inclusion_ok, leaf
from starlette.testclient import TestClient

from store.api.app import create_app
from store.api.schema import MASKED_MESSAGE
from store.db.audit_store import AuditStore

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.jsonl"))  # surfaces, frames, families, turns
PROOF_FIELDS = "leafIndex treeSize entry leafHash inclusionPath rootHash"
RECORDS = {"residuals": "residualId", "assessments": "assessmentId", "surfaces": "surfaceId",
           "turns": "turnKey"}
ENTRY_KEYS = {"residualId": "residual_id", "assessmentId": "assessment_id",
              "surfaceId": "surface_id", "turnKey": "turn_key"}


@pytest.fixture
def store_url(backend_url: str) -> str:
    for path in EXAMPLES:
        result = cli("ingest", "--db", backend_url, path)
        assert result.exit_code == 0, result.output
    return backend_url


@pytest.fixture
def client(store_url: str) -> Iterator[TestClient]:
    db = AuditStore.open(store_url, read_only=True)
    try:
        with TestClient(create_app(db, close_db_on_shutdown=False),
                        base_url="http://127.0.0.1") as test_client:
            yield test_client
    finally:
        db.close()


def heads(url: str) -> list[tuple[int, bytes]]:
    return [(int(size), bytes.fromhex(str(root))) for size, root in raw_query(
        url, "SELECT tree_size, root_hash FROM tree_heads ORDER BY tree_size")]


def check_inclusion(proof: dict[str, Any], root: bytes) -> None:
    entry = proof["entry"].encode("utf-8")
    assert proof["leafHash"] == leaf(entry).hex() and proof["rootHash"] == root.hex()
    path = [bytes.fromhex(h) for h in proof["inclusionPath"]]
    assert inclusion_ok(proof["leafIndex"], proof["treeSize"], leaf(entry), path, root)


def test_ledger_head_and_checkpoint_without_writing_an_origin(client: TestClient,
                                                              store_url: str) -> None:
    query = "{ ledger { treeSize rootHash origin checkpoint } }"
    ledger = graphql_data(client, query)["ledger"]
    size, root = heads(store_url)[-1]
    assert (ledger["treeSize"], ledger["rootHash"]) == (size, root.hex())
    assert ledger["origin"] is None and ledger["checkpoint"] is None
    with AuditStore.open(store_url, read_only=True) as store:
        assert store.origin() is None  # the read-only server chose no origin
    result = cli("checkpoint", "--db", store_url, "--origin", "example.org/audit")
    assert result.exit_code == 0, result.output
    ledger = graphql_data(client, query)["ledger"]
    assert ledger["origin"] == "example.org/audit"
    assert ledger["checkpoint"] == result.stdout


@pytest.mark.parametrize("records", sorted(RECORDS))
def test_inclusion_proofs_of_each_record_kind(client: TestClient, store_url: str,
                                              records: str) -> None:
    id_field = RECORDS[records]
    query = (f"query($size: LogIndex) {{ {records}(first: 3) {{ nodes {{ {id_field} "
             f"newest: inclusionProof {{ {PROOF_FIELDS} }} "
             f"old: inclusionProof(treeSize: $size) {{ {PROOF_FIELDS} }} }} }} }}")
    tree_heads = heads(store_url)
    newest_size, newest_root = tree_heads[-1]
    nodes = graphql_data(client, query, size=newest_size)[records]["nodes"]
    assert nodes
    for node in nodes:
        check_inclusion(node["newest"], newest_root)
        row = json.loads(node["newest"]["entry"])["row"]
        assert row[ENTRY_KEYS[id_field]] == node[id_field]
        index = node["newest"]["leafIndex"]
        # the first tree head holding the record: the smallest tree it can be proven in
        size, root = next((s, r) for s, r in tree_heads if s > index)
        proof = graphql_data(client, query, size=size)[records]["nodes"]
        old = next(n["old"] for n in proof if n[id_field] == node[id_field])
        assert old["treeSize"] == size
        check_inclusion(old, root)


def test_consistency_between_every_pair_of_tree_heads(client: TestClient,
                                                      store_url: str) -> None:
    tree_heads = heads(store_url)
    newest_size, newest_root = tree_heads[-1]
    query = ("query($from: LogIndex!) { ledger { consistencyProof(fromSize: $from) { "
             "first second firstRoot secondRoot consistencyPath } } }")
    for first, first_root in tree_heads:
        proof = graphql_data(client, query, **{"from": first})["ledger"]["consistencyProof"]
        assert (proof["first"], proof["second"]) == (first, newest_size)
        assert (proof["firstRoot"], proof["secondRoot"]) == (first_root.hex(), newest_root.hex())
        path = [bytes.fromhex(h) for h in proof["consistencyPath"]]
        assert consistency_ok(first, newest_size, first_root, newest_root, path)


@pytest.mark.parametrize("size", [0, 100_000, 2**31 - 1, 2**53])
def test_an_out_of_range_tree_size_is_a_query_error(client: TestClient, size: int) -> None:
    body = post_graphql(client, "query($size: LogIndex) { ledger { treeSize } residuals(first: 2) "
                                "{ nodes { residualId inclusionProof(treeSize: $size) "
                                "{ leafIndex } } } }", size=size)
    assert body["errors"] and all(e["message"] != MASKED_MESSAGE for e in body["errors"])
    assert all("treeSize" in e["message"] for e in body["errors"])
    nodes = body["data"]["residuals"]["nodes"]  # the error stays on its field
    assert [n["inclusionProof"] for n in nodes] == [None, None]
    assert body["data"]["ledger"]["treeSize"] > 0


def test_a_negative_size_is_refused_before_execution(client: TestClient) -> None:
    # A LogIndex holds 0..2^53: -1 (or 2^53 + 1) is a variable that does not coerce.
    for size in (-1, 2**53 + 1):
        body = post_graphql(client, "query($from: LogIndex!) { ledger { treeSize "
                                    "consistencyProof(fromSize: $from) { first } } }",
                            **{"from": size})
        assert "data" not in body
        assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]
        assert f"LogIndex must be between 0 and 2^53 (9007199254740992), got {size}" in (
            body["errors"][0]["message"])


@pytest.mark.parametrize("first", [100_000, 2**53])
def test_an_out_of_range_from_size_is_a_query_error(client: TestClient, first: int) -> None:
    body = post_graphql(client, "query($from: LogIndex!) { ledger { treeSize consistencyProof("
                                "fromSize: $from) { first } } }", **{"from": first})
    assert [e["message"][:9] for e in body["errors"]] == ["fromSize:"]
    assert body["data"]["ledger"]["consistencyProof"] is None
