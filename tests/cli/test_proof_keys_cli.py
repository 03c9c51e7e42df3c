"""`keygen`, signed checkpoints and `verify-proof`: what an auditor does offline with a proof."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from cli_runs import cli

from store.model.checkpoint import SignerKey, VerifierKey, key_hash, parse_checkpoint, sign

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.jsonl"))
VERIFIER = re.compile(r"auditor\+([0-9a-f]{8})\+([A-Za-z0-9+/]{44})\n")
SIGNER = re.compile(r"PRIVATE\+KEY\+auditor\+([0-9a-f]{8})\+([A-Za-z0-9+/]{44})\n")


def ok(*args: str | Path) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A store of the examples, a key pair, a checkpoint it signed and proofs against it."""
    folder = tmp_path_factory.mktemp("signed")
    db = folder / "audit.db"
    for path in EXAMPLES:
        ok("ingest", "--db", db, path)
    ok("keygen", "auditor", "--out", folder / "auditor")
    ok("keygen", "other", "--out", folder / "other")
    files = {"db": db, "key": folder / "auditor.key", "pub": folder / "auditor.pub",
             "other_pub": folder / "other.pub"}
    # chosen once; a log key names its log (tlog-policy: "This name MUST correspond to the
    # log's origin line"), so the origin is the key's name
    ok("checkpoint", "--db", db, "--origin", "auditor")
    files["checkpoint"] = folder / "checkpoint.txt"
    note = ok("checkpoint", "--db", db, "--key", files["key"])
    files["checkpoint"].write_text(note, encoding="utf-8")
    # the same head signed by another key, outside the store (the store keeps only its own)
    other = SignerKey.parse((folder / "other.key").read_text())
    files["other_checkpoint"] = folder / "other_checkpoint.txt"
    files["other_checkpoint"].write_text(sign(parse_checkpoint(note).checkpoint, other),
                                         encoding="utf-8")
    residual = str(json.loads(ok("query", "--db", db, "{ residuals(first: 1) { nodes { "
                                 "residualId } } }"))["data"]["residuals"]["nodes"][0]
                   ["residualId"])
    files["inclusion"] = folder / "inclusion.json"
    files["inclusion"].write_text(ok("prove", "--db", db, "--residual", residual))
    files["consistency"] = folder / "consistency.json"
    files["consistency"].write_text(ok("prove", "--db", db, "--consistency", "5"))
    return files


# --- keygen -------------------------------------------------------------------------------

def test_keygen_writes_the_signed_note_formats_with_their_modes(tmp_path: Path) -> None:
    old = os.umask(0)  # even with no umask the signer key is never readable by others
    try:
        ok("keygen", "auditor", "--out", tmp_path / "k")
    finally:
        os.umask(old)
    key, pub = tmp_path / "k.key", tmp_path / "k.pub"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(pub.stat().st_mode) == 0o644
    signer_match = SIGNER.fullmatch(key.read_text())
    verifier_match = VERIFIER.fullmatch(pub.read_text())
    assert signer_match and verifier_match
    assert signer_match.group(1) == verifier_match.group(1)
    public = base64.b64decode(verifier_match.group(2))
    assert public[0] == 0x01 and len(public) == 33
    assert key_hash("auditor", public[1:]).hex() == verifier_match.group(1)
    assert str(SignerKey.parse(key.read_text()).verifier) == str(VerifierKey.parse(
        pub.read_text()))


@pytest.mark.parametrize("existing", ["k.key", "k.pub"])
def test_keygen_refuses_to_overwrite(tmp_path: Path, existing: str) -> None:
    (tmp_path / existing).write_text("keep me\n")
    result = cli("keygen", "auditor", "--out", tmp_path / "k")
    assert result.exit_code == 1 and "not overwriting" in result.output
    assert (tmp_path / existing).read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [existing]


def test_keygen_refuses_a_bad_name(tmp_path: Path) -> None:
    result = cli("keygen", "a+b", "--out", tmp_path / "k")
    assert result.exit_code == 1 and "'+'" in result.output
    assert list(tmp_path.iterdir()) == []


# --- signed checkpoints -------------------------------------------------------------------

def verify_proof(proof: Path, checkpoint: Path, key: Path | None) -> tuple[int, str]:
    result = cli("verify-proof", proof, "--checkpoint", checkpoint,
                 *(["--key", key] if key else []))
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit | None)
    return result.exit_code, result.output


def test_a_signed_checkpoint_verifies_with_verify_and_verify_proof(signed: dict[str, Path]
                                                                   ) -> None:
    assert ok("verify", "--db", signed["db"], "--checkpoint", signed["checkpoint"], "--key",
              signed["pub"]).startswith("intact:")
    for proof in ("inclusion", "consistency"):
        code, output = verify_proof(signed[proof], signed["checkpoint"], signed["pub"])
        assert (code, output[:7]) == (0, "valid: "), output
        code, output = verify_proof(signed[proof], signed["checkpoint"], None)  # no key
        assert code == 1 and "nothing authenticates the checkpoint" in output, output
        alone = cli("verify-proof", signed[proof], "--checkpoint", signed["checkpoint"],
                    "--consistency-only")
        assert alone.exit_code == 0 and "nothing vouches for the checkpoint" in alone.stdout


def test_verify_proof_refuses_a_log_key_not_named_for_the_origin(signed: dict[str, Path],
                                                                tmp_path: Path) -> None:
    """C2SP tlog-policy: "The log's vkey includes a "key name". This name MUST correspond to
    the log's origin line, representing the identity of the log." """
    ok("keygen", "someone.else", "--out", tmp_path / "else")
    db = tmp_path / "audit.db"
    ok("ingest", "--db", db, EXAMPLES[0])
    ok("checkpoint", "--db", db, "--origin", "audit.example.org/core")
    note = tmp_path / "c.txt"
    note.write_text(ok("checkpoint", "--db", db, "--key", tmp_path / "else.key"))
    proof = tmp_path / "p.json"
    proof.write_text(ok("prove", "--db", db, "--consistency", "0"))
    result = cli("verify-proof", proof, "--checkpoint", note, "--key", tmp_path / "else.pub")
    assert result.exit_code == 1
    assert ("checkpoint of origin 'audit.example.org/core' is signed by log key someone.else, "
            "whose name is not its origin") in result.stderr


def edit(text: str, line: int, value: str) -> str:
    lines = text.split("\n")
    lines[line] = value
    return "\n".join(lines)


@pytest.mark.parametrize("change", ["size", "root", "origin"])
def test_a_checkpoint_edited_after_signing_is_refused(signed: dict[str, Path], tmp_path: Path,
                                                     change: str) -> None:
    text = signed["checkpoint"].read_text()
    origin, size, _root = text.split("\n")[:3]
    edited = {"size": edit(text, 1, str(int(size) - 1)),
              "root": edit(text, 2, base64.b64encode(b"\x01" * 32).decode()),
              "origin": edit(text, 0, origin + "x")}[change]
    forged = tmp_path / "forged.txt"
    forged.write_text(edited)
    result = cli("verify", "--db", signed["db"], "--checkpoint", forged, "--key", signed["pub"])
    assert result.exit_code == 1 and "does not verify" in result.output
    code, output = verify_proof(signed["inclusion"], forged, signed["pub"])
    assert code == 1 and output.startswith("invalid: ") and "does not verify" in output


def test_the_signer_key_given_as_verifier_key_is_named(signed: dict[str, Path]) -> None:
    code, output = verify_proof(signed["inclusion"], signed["checkpoint"], signed["key"])
    assert code == 1
    assert ("this is a signer key (PREFIX.key, secret): check with its verifier key, "
            "PREFIX.pub") in output
    result = cli("verify", "--db", signed["db"], "--checkpoint", signed["checkpoint"],
                 "--key", signed["key"])
    assert result.exit_code == 1 and "this is a signer key" in result.output


def test_a_checkpoint_signed_by_another_key_is_refused(signed: dict[str, Path]) -> None:
    result = cli("verify", "--db", signed["db"], "--checkpoint", signed["other_checkpoint"],
                 "--key", signed["pub"])
    assert result.exit_code == 1 and "not signed by" in result.output
    code, output = verify_proof(signed["inclusion"], signed["other_checkpoint"], signed["pub"])
    assert code == 1 and "not signed by" in output


# --- tampered and malformed proofs --------------------------------------------------------

def tampered(proof: dict[str, Any], change: str) -> dict[str, Any]:
    proof = dict(proof)
    if change == "path element":
        path = list(proof["inclusion_path"])
        path[0] = ("0" if path[0][0] != "0" else "1") + path[0][1:]
        proof["inclusion_path"] = path
    elif change == "index":
        proof["leaf_index"] += 1
    elif change == "entry":
        proof["entry"] = proof["entry"].replace("unbound", "bound", 1)
    elif change == "entry and leaf hash":
        proof["entry"] = proof["entry"].replace("unbound", "bound", 1)
        proof["leaf_hash"] = hashlib.sha256(b"\x00" + proof["entry"].encode()).hexdigest()
    elif change == "tree size":
        proof["tree_size"] -= 1
    elif change == "dropped node":
        proof["inclusion_path"] = proof["inclusion_path"][:-1]
    return proof


@pytest.mark.parametrize("change", ["path element", "index", "entry", "entry and leaf hash",
                                    "tree size", "dropped node"])
def test_a_tampered_inclusion_proof_is_invalid(signed: dict[str, Path], tmp_path: Path,
                                               change: str) -> None:
    proof = tampered(json.loads(signed["inclusion"].read_text()), change)
    (tmp_path / "p.json").write_text(json.dumps(proof))
    code, output = verify_proof(tmp_path / "p.json", signed["checkpoint"], signed["pub"])
    assert code == 1 and output.startswith("invalid: "), output


def test_a_tampered_consistency_proof_is_invalid(signed: dict[str, Path], tmp_path: Path) -> None:
    original = json.loads(signed["consistency"].read_text())
    for change in ({"first": original["first"] + 1}, {"first_root": "ab" * 32},
                   {"second": original["second"] - 1},
                   {"consistency_path": original["consistency_path"][1:]}):
        (tmp_path / "c.json").write_text(json.dumps({**original, **change}))
        code, output = verify_proof(tmp_path / "c.json", signed["checkpoint"], signed["pub"])
        assert code == 1 and output.startswith("invalid: "), change


def consistency_json(**fields: Any) -> str:
    return json.dumps({"first": 1, "second": 1, "first_root": "ab" * 32,
                       "second_root": "ab" * 32, "consistency_path": [], **fields})


@pytest.mark.parametrize("text", [
    "", "not json", "[]", '{"leaf_index": 0}', "[" * 100_000, "\xff",
    consistency_json(first_root="AB" * 32), consistency_json(first=True),
    consistency_json(first=-1), consistency_json(consistency_path={}),
    consistency_json(consistency_path=["ab" * 32] * 200), consistency_json(second=1 << 63),
    consistency_json().replace('"first": 1', '"first": 1' + "0" * 5000),
    consistency_json(extra=1),
])
def test_a_malformed_proof_is_invalid_without_a_traceback(signed: dict[str, Path],
                                                          tmp_path: Path, text: str) -> None:
    (tmp_path / "p.json").write_text(text)
    code, output = verify_proof(tmp_path / "p.json", signed["checkpoint"], None)
    assert code == 1 and output.startswith("invalid: "), output


def test_a_proof_of_another_tree_is_not_valid_for_this_checkpoint(signed: dict[str, Path],
                                                                  tmp_path: Path) -> None:
    proof = json.loads(ok("prove", "--db", signed["db"], "--index", "3", "--tree-size", "40"))
    (tmp_path / "p.json").write_text(json.dumps(proof))
    code, output = verify_proof(tmp_path / "p.json", signed["checkpoint"], signed["pub"])
    assert code == 1 and "the checkpoint is size" in output


# --- proof files (the console's "download proof") -------------------------------------------


def test_a_proof_file_holds_the_proof_and_its_checkpoint(signed: dict[str, Path],
                                                         tmp_path: Path) -> None:
    residual = json.loads(signed["inclusion"].read_text())["entry"]
    residual_id = json.loads(residual)["row"]["residual_id"]
    proof_file = tmp_path / "proof.json"
    proof_file.write_bytes(cli("prove", "--db", signed["db"], "--residual", residual_id,
                               "--with-checkpoint").stdout_bytes)
    document = json.loads(proof_file.read_text())
    assert document["format"] == "core-audit-proof/1"
    assert document["proof"] == json.loads(signed["inclusion"].read_text())
    checkpoint_body = signed["checkpoint"].read_text().split("\n\n", 1)[0] + "\n\n"
    assert document["checkpoint"] == checkpoint_body  # the same head, unsigned
    assert cli("verify-proof", proof_file).exit_code == 1  # nothing authenticates it
    alone = cli("verify-proof", proof_file, "--consistency-only")
    assert alone.exit_code == 0 and "against the checkpoint inside the file" in alone.stdout
    # A kept, signed checkpoint decides; the file's own unsigned one cannot pass --key.
    assert verify_proof(proof_file, signed["checkpoint"], signed["pub"])[0] == 0
    refused = cli("verify-proof", proof_file, "--key", signed["pub"])
    assert refused.exit_code == 1
    assert "its checkpoint: checkpoint is not signed by key auditor+" in refused.stderr


def test_a_proof_file_against_another_tree_is_invalid(signed: dict[str, Path],
                                                      tmp_path: Path) -> None:
    document = {"format": "core-audit-proof/1",
                "proof": json.loads(signed["inclusion"].read_text()),
                "checkpoint": "core-audit/x\n5\n" + "A" * 43 + "=\n\n"}
    proof_file = tmp_path / "proof.json"
    proof_file.write_text(json.dumps(document))
    result = cli("verify-proof", proof_file, "--consistency-only")
    assert result.exit_code == 1
    assert "the checkpoint is size 5, root " + "00" * 32 in result.stderr
    proof_file.write_text(json.dumps({**document, "extra": 1}))
    assert "has exactly the keys checkpoint, format, proof" in cli(
        "verify-proof", proof_file, "--consistency-only").stderr
    assert cli("prove", "--db", signed["db"], "--consistency", "5",
               "--with-checkpoint").exit_code == 2
