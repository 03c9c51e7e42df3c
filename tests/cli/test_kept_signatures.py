"""`verify --key/--witness-key/--policy` checks every signature the store kept (issue 31): a
checkpoint row signed by another key under the log's name, a witness's cosignature copied onto
another checkpoint, an old checkpoint appended again as the newest, and the origin rewritten in
place are each named; the log never serves the copied old checkpoint as current."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES, raw_query
from cli_runs import cli
from sqlalchemy import create_engine, text
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore
from store.model.checkpoint import COSIGNATURE_V1, Checkpoint, SignerKey, parse_checkpoint, sign
from store.model.cosignature import cosign

ORIGIN = "audit.example/log"
LOG = SignerKey(ORIGIN, b"\x01" * 32)
FORGER = SignerKey(ORIGIN, b"\x09" * 32)  # the log's name, another key
W1 = SignerKey("w1.example", b"\x05" * 32, COSIGNATURE_V1)
W2 = SignerKey("w2.example", b"\x06" * 32, COSIGNATURE_V1)


def ok(*args: str | Path) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def raw_execute(url: str, *statements: str) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            for sql in statements:
                connection.execute(text(sql))
    finally:
        engine.dispose()


@pytest.fixture
def signed(backend_url: str, tmp_path: Path) -> dict[str, object]:
    """Two kept checkpoints, each cosigned by w1 and w2; the keys as files."""
    for name, key in (("log", LOG), ("w1", W1), ("w2", W2)):
        (tmp_path / f"{name}.pub").write_text(str(key.verifier) + "\n")
        (tmp_path / f"{name}.key").write_text(str(key) + "\n")
    ok("ingest", "--db", backend_url, EXAMPLE_FILES[0])
    ok("checkpoint", "--db", backend_url, "--key", tmp_path / "log.key", "--origin", ORIGIN)
    ok("ingest", "--db", backend_url, EXAMPLE_FILES[1])
    ok("checkpoint", "--db", backend_url, "--key", tmp_path / "log.key")
    with AuditStore.open(backend_url) as store:
        for checkpoint_id in (1, 2):
            note = raw_query(backend_url, f"SELECT note FROM checkpoints WHERE checkpoint_id = "
                                          f"{checkpoint_id}")[0][0]
            body = parse_checkpoint(str(note)).text
            store.add_cosignatures(checkpoint_id, [cosign(body, W1, 1700000000 + checkpoint_id),
                                                   cosign(body, W2, 1700000000 + checkpoint_id)],
                                   [W1.verifier, W2.verifier])
    return {"db": backend_url, "dir": tmp_path}


def _verify(signed: dict[str, object], *more: str):
    folder: Path = signed["dir"]  # type: ignore[assignment]
    return cli("verify", "--db", str(signed["db"]), "--key", folder / "log.pub",
               "--witness-key", folder / "w1.pub", "--witness-key", folder / "w2.pub", *more)


def test_every_kept_signature_verifies_and_the_output_says_so(signed: dict[str, object]):
    result = _verify(signed)
    assert result.exit_code == 0, result.output
    assert ("2 kept checkpoint(s) signed by the log key given and their cosignatures by the "
            "witnesses given verified") in result.stdout


def test_a_checkpoint_row_signed_by_another_key_under_the_logs_name_is_named(
        signed: dict[str, object]):
    db = str(signed["db"])
    size, root = raw_query(db, "SELECT tree_size, root_hash FROM checkpoints WHERE "
                               "checkpoint_id = 2")[0]
    forged = sign(Checkpoint(ORIGIN, int(str(size)), bytes.fromhex(str(root))), FORGER)
    raw_execute(db, f"INSERT INTO checkpoints VALUES (3, {size}, '{root}', '{ORIGIN}', "
                    f"'{forged}')")
    assert cli("verify", "--db", db).exit_code == 0  # no key: nothing says it is forged
    result = _verify(signed)
    assert result.exit_code == 1
    assert ("NOT intact: first problem at checkpoints checkpoint 3: not signed by a key given: "
            f"checkpoint is not signed by key {LOG.verifier}; its signature lines are by "
            "audit.example/log") in result.stderr


def test_a_cosignature_copied_onto_another_checkpoint_is_named(signed: dict[str, object]):
    db = str(signed["db"])
    line = raw_query(db, "SELECT line FROM checkpoint_cosignatures WHERE checkpoint_id = 1 "
                         "AND witness = 'w2.example'")[0][0]
    size, root, note = raw_query(db, "SELECT tree_size, root_hash, note FROM checkpoints "
                                     "WHERE checkpoint_id = 2")[0]
    raw_execute(db, f"INSERT INTO checkpoints VALUES (3, {size}, '{root}', '{ORIGIN}', "
                    f"'{note}')",
                f"INSERT INTO checkpoint_cosignatures VALUES (3, 'w2.example', '{line}')")
    result = _verify(signed, "--json")
    assert result.exit_code == 1
    problems = json.loads(result.stdout)["problems"]
    assert problems == ["checkpoint_cosignatures checkpoint 3 witness w2.example: cosignature "
                        "by w2.example does not verify: the checkpoint was changed after "
                        "cosigning, or it is not this witness's"]


def test_an_old_checkpoint_appended_as_the_newest_is_named_and_never_served(
        signed: dict[str, object]):
    db = str(signed["db"])
    old_size, root, signers, note = raw_query(
        db, "SELECT tree_size, root_hash, signers, note FROM checkpoints WHERE "
            "checkpoint_id = 1")[0]
    new_size = int(str(raw_query(db, "SELECT tree_size FROM checkpoints WHERE "
                                     "checkpoint_id = 2")[0][0]))
    raw_execute(db, f"INSERT INTO checkpoints VALUES (3, {old_size}, '{root}', '{signers}', "
                    f"'{note}')")
    result = cli("verify", "--db", db)  # no key needed: a signature checks nothing here
    assert result.exit_code == 1
    assert (f"NOT intact: first problem at checkpoints checkpoint 3: tree size {old_size} is "
            f"below the {new_size} of earlier checkpoint 2: kept checkpoints must grow") \
        in result.stderr
    with AuditStore.open(db, read_only=True) as store, \
            TestClient(create_app(store), base_url="http://127.0.0.1") as client:
        served = client.get("/log/checkpoint").text
    assert served.split("\n")[1] == str(new_size)  # the largest, not the newest row
    bundle = Path(str(signed["dir"])) / "b.tlog-proof"
    ok("prove", "--db", db, "--index", str(new_size - 1), "--bundle", bundle)


def test_the_origin_rewritten_in_place_is_found(signed: dict[str, object]):
    """The choice is a leaf (batch record type log-origin): rewriting log_origin with its
    guard dropped and recreated is found by verify, with or without keys."""
    db = str(signed["db"])
    logged = raw_query(db, "SELECT source, record_type FROM ingest_batches WHERE "
                           "record_type = 'log-origin'")
    assert logged == [(ORIGIN, "log-origin")]
    if db.startswith("sqlite"):
        (guard,) = raw_query(db, "SELECT sql FROM sqlite_master WHERE name = "
                                 "'log_origin_append_only_update'")[0]
        raw_execute(db, "DROP TRIGGER log_origin_append_only_update",
                    "UPDATE log_origin SET origin = 'evil.example/log'", str(guard))
    else:
        raw_execute(db, "ALTER TABLE log_origin DISABLE TRIGGER USER",
                    "UPDATE log_origin SET origin = 'evil.example/log'",
                    "ALTER TABLE log_origin ENABLE TRIGGER USER")
    result = cli("verify", "--db", db, "--json")
    assert result.exit_code == 1
    assert ("log_origin 'evil.example/log': the origin chosen in the log (batch 2) is "
            "'audit.example/log', log_origin holds 'evil.example/log' (rewritten out of "
            "band)") in json.loads(result.stdout)["problems"]


def test_a_policy_counts_keys_not_names(signed: dict[str, object], tmp_path: Path):
    """Two keys named w1.example: the evil one's cosignature must not count for the real
    one. tlog-policy: "Duplicate witnesses, i.e., multiple witness lines with the same public
    key, are not allowed." """
    folder: Path = signed["dir"]  # type: ignore[assignment]
    evil = SignerKey("w1.example", b"\x07" * 32, COSIGNATURE_V1)
    note = ok("checkpoint", "--db", str(signed["db"]))  # unsigned body of the newest head
    checkpoint = parse_checkpoint(note).checkpoint
    text = sign(checkpoint, LOG) + cosign(checkpoint.body(), evil, 1700000100).line()
    (tmp_path / "evil.txt").write_text(text)
    policy = tmp_path / "policy.txt"
    policy.write_text(f"log {LOG.verifier}\nwitness real {W1.verifier}\nwitness fake "
                      f"{evil.verifier}\ngroup both all real fake\nquorum real\n")
    bundle = tmp_path / "b.tlog-proof"
    ok("prove", "--db", str(signed["db"]), "--index", "0", "--bundle", bundle)
    proof_lines = bundle.read_text().split("\n\n")[0]
    bundle.write_text(proof_lines + "\n\n" + text)  # the same proof, the evil cosignature
    refused = cli("verify-proof", bundle, "--policy", policy)
    assert refused.exit_code == 1
    assert ("short of the witness quorum (real must cosign): cosigned by fake; not by real"
            in refused.stderr)
    twice = tmp_path / "twice.txt"
    twice.write_text(f"log {LOG.verifier}\nwitness a {W1.verifier}\nwitness b {W1.verifier}\n"
                     "quorum a\n")
    result = cli("verify-proof", bundle, "--policy", twice)
    assert result.exit_code == 1
    assert "policy line 3: witness b's key is listed twice: it is also witness a's" in \
        result.stderr
    same = cli("verify", "--db", str(signed["db"]), "--key", folder / "log.pub",
               "--witness-key", str(W1.verifier), "--witness-key",
               str(SignerKey("w9.example", b"\x05" * 32, COSIGNATURE_V1).verifier))
    assert same.exit_code == 1 and "key is listed twice" in same.stderr


def test_kept_cosignatures_of_a_plain_ed25519_witness_key(tmp_path: Path):
    """add_cosignatures takes a 0x01 witness key's lines (cosignature/v1 and plain Ed25519),
    and verify --witness-key checks them against that key."""
    db = f"sqlite:///{tmp_path / 'audit.db'}"
    plain = SignerKey("w3.example", b"\x0b" * 32)  # type 0x01
    (tmp_path / "log.key").write_text(str(LOG) + "\n")
    (tmp_path / "log.pub").write_text(str(LOG.verifier) + "\n")
    ok("ingest", "--db", db, EXAMPLE_FILES[0])
    ok("checkpoint", "--db", db, "--key", tmp_path / "log.key", "--origin", ORIGIN)
    from store.model.checkpoint import NoteSignature

    with AuditStore.open(db) as store:
        note = str(raw_query(db, "SELECT note FROM checkpoints")[0][0])
        body = parse_checkpoint(note).text
        kept = store.add_cosignatures(1, [cosign(body, plain, 1700000000)], [plain.verifier])
        assert kept.cosigners == ("w3.example",)
    good = cli("verify", "--db", db, "--key", tmp_path / "log.pub", "--witness-key",
               str(plain.verifier))
    assert good.exit_code == 0, good.output
    other = SignerKey("w3.example", b"\x0c" * 32)
    bad = cli("verify", "--db", db, "--key", tmp_path / "log.pub", "--witness-key",
              str(other.verifier))
    assert bad.exit_code == 1 and "is not witness w3.example's key given" in bad.stderr
    db2 = f"sqlite:///{tmp_path / 'two.db'}"
    ok("ingest", "--db", db2, EXAMPLE_FILES[0])
    ok("checkpoint", "--db", db2, "--key", tmp_path / "log.key", "--origin", ORIGIN)
    with AuditStore.open(db2) as store:
        note = str(raw_query(db2, "SELECT note FROM checkpoints")[0][0])
        body = parse_checkpoint(note).text
        line = NoteSignature(plain.name, plain.verifier.key_hash, plain.sign(body.encode()))
        assert store.add_cosignatures(1, [line], [plain.verifier]).cosigners == ("w3.example",)
