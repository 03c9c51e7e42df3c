"""Kept checkpoints: `checkpoint --key` keeps what it signs, `checkpoints` lists them, GraphQL
serves them, `verify` holds the store to each, and the database refuses to change one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES, raw_query
from cli_runs import cli
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from store.db.audit_store import AuditStore
from store.model.checkpoint import COSIGNATURE_V1, SignerKey, VerifierKey
from store.model.cosignature import check_note, cosign

ORIGIN = "audit.example/log"


def ok(*args: str | Path) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def raw_execute(url: str, sql: str) -> None:
    engine = create_engine(url if "://" in url else f"sqlite:///{url}")
    try:
        with engine.begin() as connection:
            connection.execute(text(sql))
    finally:
        engine.dispose()


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Path]:
    ok("keygen", ORIGIN, "--out", tmp_path / "log")
    ok("keygen", ORIGIN, "--out", tmp_path / "next")
    return {"key": tmp_path / "log.key", "pub": tmp_path / "log.pub",
            "next_key": tmp_path / "next.key", "next_pub": tmp_path / "next.pub"}


@pytest.fixture
def store(backend_url: str) -> str:
    ok("ingest", "--db", backend_url, EXAMPLE_FILES[0])
    return backend_url


def test_a_signed_checkpoint_is_kept_and_listed(store: str, keys: dict[str, Path]):
    first = ok("checkpoint", "--db", store, "--key", keys["key"], "--origin", ORIGIN)
    ok("ingest", "--db", store, EXAMPLE_FILES[1])
    second = ok("checkpoint", "--db", store, "--key", keys["key"], "--key", keys["next_key"])
    unsigned = ok("checkpoint", "--db", store)  # printed, not kept: nobody vouched for it
    assert "\n—" not in unsigned
    rows = raw_query(store, "SELECT checkpoint_id, tree_size, signers, note FROM checkpoints "
                            "ORDER BY checkpoint_id")
    size_1, size_2 = int(first.split("\n")[1]), int(second.split("\n")[1])
    assert rows == [(1, size_1, ORIGIN, first), (2, size_2, f"{ORIGIN} {ORIGIN}", second)]
    assert size_1 < size_2
    listed = [json.loads(line) for line in ok("checkpoints", "--db", store, "--json")
              .splitlines()]
    assert [(c["checkpoint_id"], c["tree_size"], c["note"]) for c in listed] == [
        (2, size_2, second), (1, size_1, first)]
    text_listing = ok("checkpoints", "--db", store, "--limit", "1")
    assert text_listing.startswith(f"2\tsize {size_2}\t") and "cosigned by none" in text_listing
    # key rotation: the note carries both log signatures; either key verifies it
    new = VerifierKey.parse(keys["next_pub"].read_text())
    old = VerifierKey.parse(keys["pub"].read_text())
    assert check_note(second, [new]).log_signers == (new,)
    assert check_note(second, [old, new]).log_signers == (old, new)
    assert ok("verify", "--db", store).startswith(f"intact: {size_2} leaves")


def test_graphql_lists_kept_checkpoints_up_to_the_head_asked(store: str, keys: dict[str, Path]):
    ok("checkpoint", "--db", store, "--key", keys["key"], "--origin", ORIGIN)
    size = int(raw_query(store, "SELECT tree_size FROM checkpoints")[0][0])  # type: ignore[call-overload]
    ok("ingest", "--db", store, EXAMPLE_FILES[1])
    ok("checkpoint", "--db", store, "--key", keys["key"])
    query = ("query($at: LogIndex) { ledger(asOf: $at) { checkpoints(first: 10) { checkpointId "
             "treeSize signers cosigners note } } }")
    newest = json.loads(ok("query", "--db", store, query))["data"]["ledger"]["checkpoints"]
    assert [c["checkpointId"] for c in newest] == [2, 1]
    assert newest[1]["treeSize"] == size and newest[1]["signers"] == [ORIGIN]
    at_first = json.loads(ok("query", "--db", store, query, "--variables",
                             json.dumps({"at": size})))["data"]["ledger"]["checkpoints"]
    assert [c["checkpointId"] for c in at_first] == [1]
    too_many = cli("query", "--db", store, "{ ledger { checkpoints(first: 101) { note } } }")
    assert too_many.exit_code == 1 and "first: must be between 0 and 100" in too_many.stdout


def test_a_kept_checkpoint_cannot_be_changed_or_removed(store: str, keys: dict[str, Path]):
    ok("checkpoint", "--db", store, "--key", keys["key"], "--origin", ORIGIN)
    witness = SignerKey("w.example", b"\x07" * 32, COSIGNATURE_V1)
    with AuditStore.open(store) as opened:
        kept = opened.add_cosignatures(1, [cosign(
            opened.checkpoint().body(), witness, 1700000000)], [witness.verifier])
    assert kept.cosigners == ("w.example",)
    before = raw_query(store, "SELECT * FROM checkpoints") + raw_query(
        store, "SELECT * FROM checkpoint_cosignatures")
    statements = ["UPDATE checkpoints SET tree_size = 1", "DELETE FROM checkpoints",
                  "UPDATE checkpoint_cosignatures SET line = 'x'",
                  "DELETE FROM checkpoint_cosignatures"]
    statements += (["REPLACE INTO checkpoints VALUES (1, 1, 'x', 'x', 'x')",
                    "REPLACE INTO checkpoint_cosignatures VALUES (1, 'w.example', 'x')",
                    "REPLACE INTO checkpoint_cosignatures (rowid, checkpoint_id, witness, line) "
                    "VALUES (1, 1, 'other', 'x')"]
                   if "postgresql" not in store else
                   ["TRUNCATE checkpoints CASCADE", "TRUNCATE checkpoint_cosignatures"])
    for statement in statements:
        with pytest.raises(DBAPIError, match="append-only"):
            raw_execute(store, statement)
    assert raw_query(store, "SELECT * FROM checkpoints") + raw_query(
        store, "SELECT * FROM checkpoint_cosignatures") == before


def test_verify_refuses_a_store_that_contradicts_a_kept_checkpoint(
        backend_url: str, keys: dict[str, Path], tmp_path: Path):
    ok("ingest", "--db", backend_url, EXAMPLE_FILES[0])
    ok("checkpoint", "--db", backend_url, "--key", keys["key"], "--origin", ORIGIN)
    # Another history under the same origin, with the first store's checkpoint planted in it.
    other = tmp_path / "other.db"
    ok("ingest", "--db", other, EXAMPLE_FILES[1])
    ok("ingest", "--db", other, EXAMPLE_FILES[0])
    ok("checkpoint", "--db", other, "--origin", ORIGIN)
    (row,) = raw_query(backend_url, "SELECT tree_size, root_hash, signers, note FROM checkpoints")
    size, root, signers, note = (str(v) for v in row)
    raw_execute(str(other), f"INSERT INTO checkpoints VALUES (1, {size}, '{root}', '{signers}', "
                            f"'{note}')")
    result = cli("verify", "--db", other)
    assert result.exit_code == 1
    assert ("NOT intact: first problem at checkpoints checkpoint 1: the store does not extend "
            "the checkpoint's tree (history was rewritten)") in result.stderr
    # a row whose note is not its own
    raw_execute(backend_url, f"INSERT INTO checkpoints VALUES (2, 3, '{root}', '{signers}', "
                             f"'{note}')")
    result = cli("verify", "--db", backend_url, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["problems"] == [
        f"checkpoints checkpoint 2: tree size 3 is below the {size} of earlier checkpoint 1: "
        "kept checkpoints must grow (an old checkpoint appended again?)",
        f"checkpoints checkpoint 2: kept note (origin '{ORIGIN}', size {size}, signed by "
        f"{ORIGIN}) is not its row's (origin '{ORIGIN}', size 3, signed by {ORIGIN})"]


def test_verify_accepts_any_listed_log_key_and_says_which_signed(store: str,
                                                                  keys: dict[str, Path],
                                                                  tmp_path: Path):
    note = ok("checkpoint", "--db", store, "--key", keys["next_key"], "--origin", ORIGIN)
    (tmp_path / "cp.txt").write_text(note, encoding="utf-8")
    new = keys["next_pub"].read_text().strip()
    said = ok("verify", "--db", store, "--checkpoint", tmp_path / "cp.txt", "--key", keys["pub"],
              "--key", keys["next_pub"])
    assert f"checkpoint signed by {new}; cosigned by no witness; extends" in said
    refused = cli("verify", "--db", store, "--checkpoint", tmp_path / "cp.txt", "--key",
                  keys["pub"])
    assert refused.exit_code == 1 and "not signed by key " in refused.stderr


def test_copy_carries_the_kept_checkpoints_and_their_cosignatures(store: str,
                                                                  keys: dict[str, Path],
                                                                  tmp_path: Path):
    ok("checkpoint", "--db", store, "--key", keys["key"], "--origin", ORIGIN)
    witness = SignerKey("w.example", b"\x07" * 32, COSIGNATURE_V1)
    with AuditStore.open(store) as opened:
        opened.add_cosignatures(1, [cosign(opened.checkpoint().body(), witness, 1700000000)],
                                [witness.verifier])
    ok("ingest", "--db", store, EXAMPLE_FILES[1])
    second = ok("checkpoint", "--db", store, "--key", keys["key"])
    target = tmp_path / "copy.db"
    ok("copy", "--from", store, "--to", target)
    ok("copy", "--from", store, "--to", target)  # again: nothing doubles
    copied = [json.loads(line) for line in ok("checkpoints", "--db", target, "--json")
              .splitlines()]
    source = [json.loads(line) for line in ok("checkpoints", "--db", store, "--json")
              .splitlines()]
    assert copied == source and copied[0]["note"] == second
    assert copied[1]["cosigners"] == ["w.example"]
    assert ok("verify", "--db", target).startswith("intact: ")
