"""`witness serve` driven by a client written from C2SP tlog-witness's current text
(tests/tlog_witness_client.py, no core-audit code) through every status code and
Content-Type, each reply parsed as the spec says; with a 0x04 cosigning key and with a plain
0x01 Ed25519 key, and checkpoints carrying extension lines."""

from __future__ import annotations

import base64
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runs import subprocess_environ
from go_interop import go_client, run_go
from tlog_witness_client import (
    NoteKey,
    Reply,
    WitnessClient,
    add_checkpoint_body,
    checkpoint_body,
    conflict_size,
    consistency_proof,
    cosignature_lines,
    cosignature_verifies,
    leaf_hash,
    signed_checkpoint,
    tree_hash,
)

__all__ = ["go_client"]  # a fixture
ORIGIN = "log.example/witnessed"
LOG = NoteKey(ORIGIN, b"\x21" * 32)
STRANGER = NoteKey(ORIGIN, b"\x22" * 32)  # the log's name, another key
LEAVES = [leaf_hash(f"entry {i}".encode()) for i in range(50)]
EXTENSION = ("an extension line: opaque",)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(params=[0x04, 0x01], ids=["cosigning-0x04-key", "ed25519-0x01-key"])
def witness(request: pytest.FixtureRequest, tmp_path: Path
            ) -> Iterator[tuple[WitnessClient, NoteKey]]:
    key = NoteKey("witness.example/w1", b"\x23" * 32, request.param)
    # the signer key text as signed-note's Go tooling writes it: PRIVATE+KEY+name+id+type‖seed
    (tmp_path / "w.key").write_text(
        f"PRIVATE+KEY+{key.name}+{key.vkey().split('+')[1]}+"
        f"{base64.b64encode(bytes([key.signature_type]) + key.seed).decode()}\n")
    port = _free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "core-audit"), "witness", "serve", "--key",
         str(tmp_path / "w.key"), "--log", f"{ORIGIN}={LOG.vkey()}", "--state",
         str(tmp_path / "state"), "--port", str(port)],
        env=subprocess_environ(), stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and server.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            break
        except OSError:
            time.sleep(0.1)
    client = WitnessClient("127.0.0.1", port)
    try:
        yield client, key
    finally:
        client.close()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


def note(size: int, leaves: list[bytes] = LEAVES, *keys: NoteKey) -> tuple[str, str]:
    body = checkpoint_body(ORIGIN, size, tree_hash(leaves[:size]), EXTENSION)
    return body, signed_checkpoint(body, *(keys or (LOG,)))


def test_every_status_and_content_type(witness: tuple[WitnessClient, NoteKey]):
    client, key = witness
    # 200: "a sequence of one or more note signature lines"; the cosignature covers the body
    # with its extension line (tlog-cosignature: "Extension lines MAY be included in the
    # checkpoint by the log, and if present MUST be included in the cosigned message").
    body, text = note(10)
    reply = client.add_checkpoint(add_checkpoint_body(0, [], text))
    (cosigned,) = cosignature_lines(reply)
    assert cosignature_verifies(cosigned, key.name, key.public, body)
    body20, text20 = note(20)
    extended = client.add_checkpoint(add_checkpoint_body(10, consistency_proof(10, LEAVES[:20]),
                                                         text20))
    assert cosignature_verifies(cosignature_lines(extended)[0], key.name, key.public, body20)
    # 409: "If it doesn't match, the witness MUST respond with a "409 Conflict" HTTP status
    # code. ... The response MUST have a `Content-Type` of `text/x.tlog.size`."
    assert conflict_size(client.add_checkpoint(add_checkpoint_body(10, consistency_proof(
        10, LEAVES[:30]), note(30)[1]))) == 20
    # "If a client doesn't have information on the latest cosigned checkpoint, it MAY
    # initially make a request with a old size of zero to obtain it."
    assert conflict_size(client.add_checkpoint(add_checkpoint_body(0, [], note(30)[1]))) == 20
    # 400: "The old size MUST be equal to or lower than the checkpoint size. Otherwise, the
    # witness MUST respond with a "400 Bad Request" HTTP status code."
    assert client.add_checkpoint(add_checkpoint_body(25, [], note(20)[1])).status == 400
    assert client.add_checkpoint(b"old 20\n" + text20.encode()).status == 400  # no blank line
    # 404: "If the checkpoint origin is unknown, the witness MUST respond with a "404 Not
    # Found" HTTP status code."
    other = NoteKey("other.example/log", b"\x24" * 32)
    stranger_body = checkpoint_body(other.name, 3, tree_hash(LEAVES[:3]))
    assert client.add_checkpoint(add_checkpoint_body(
        0, [], signed_checkpoint(stranger_body, other))).status == 404
    # 403: "if either no signature from a trusted key for the origin is present, or a
    # signature line's key name and ID match a trusted key but the signature itself fails to
    # verify"
    assert client.add_checkpoint(add_checkpoint_body(
        20, [], signed_checkpoint(body20, STRANGER))).status == 403
    forged = text20.replace(body20, body20.replace("\n20\n", "\n21\n"), 1)
    assert client.add_checkpoint(add_checkpoint_body(20, [], forged)).status == 403
    # 422: "If the old size matches the checkpoint size, the witness MUST check that the root
    # hashes are also identical. If they don't match, the witness MUST respond with a "422
    # Unprocessable Entity" HTTP status code."
    fork = [*LEAVES[:19], leaf_hash(b"rewritten"), *LEAVES[20:]]
    assert client.add_checkpoint(add_checkpoint_body(20, [], note(20, fork)[1])).status == 422
    # "... or if a Merkle Consistency Proof doesn't verify, the witness MUST respond with a
    # "422 Unprocessable Entity" HTTP status code."
    assert client.add_checkpoint(add_checkpoint_body(
        20, consistency_proof(20, fork[:30]), note(30, fork)[1])).status == 422
    # the true extension still passes, and the same tree again is cosigned again
    assert cosignature_lines(client.add_checkpoint(add_checkpoint_body(
        20, consistency_proof(20, LEAVES[:30]), note(30)[1])))
    assert cosignature_lines(client.add_checkpoint(add_checkpoint_body(30, [], note(30)[1])))
    # monitoring: "The response body MUST be a checkpoint for the log identified by the
    # origin, and it MUST include the cosignature(s) from the witness's key(s) that were
    # returned from add-checkpoint and the cosignature from the log key(s) that the witness
    # verified." "If the witness has never cosigned a checkpoint for that log, it MUST
    # respond with a "404 Not Found" HTTP status code instead."
    served = client.monitored_checkpoint(ORIGIN)
    assert served.status == 200
    text = served.body.decode()
    body30 = note(30)[0]
    assert text.startswith(body30 + "\n" + LOG.signature_line(body30))
    witness_line = text.split("\n")[-2] + "\n"
    (line,) = cosignature_lines(Reply(200, None, witness_line.encode()))
    assert cosignature_verifies(line, key.name, key.public, body30)
    assert client.monitored_checkpoint("other.example/log").status == 404


def test_a_size_zero_checkpoint_needs_the_empty_root(witness: tuple[WitnessClient, NoteKey]):
    """tlog-witness: "A checkpoint of size zero MUST have the root hash of the empty tree ...
    Otherwise, the witness MUST respond with a "422 Unprocessable Entity" HTTP status code."
    And: "If the proof is not empty when the old size is zero ... 422"."""
    client, _ = witness
    wrong = signed_checkpoint(checkpoint_body(ORIGIN, 0, LEAVES[0]), LOG)
    assert client.add_checkpoint(add_checkpoint_body(0, [], wrong)).status == 422
    assert client.add_checkpoint(add_checkpoint_body(0, [LEAVES[1]], note(5)[1])).status == 422
    empty = signed_checkpoint(checkpoint_body(ORIGIN, 0, tree_hash([])), LOG)
    assert cosignature_lines(client.add_checkpoint(add_checkpoint_body(0, [], empty)))


@pytest.mark.slow
def test_go_checks_cosignatures_of_checkpoints_with_extension_lines(
        witness: tuple[WitnessClient, NoteKey], go_client: Path, tmp_path: Path):
    """Go's x/mod note.Open verifies the log's signature over the body with its extension
    line, and crypto/ed25519 the witness's cosignature/v1 over the same body, whether the
    witness key is given as 0x04 or as a plain 0x01 Ed25519 vkey."""
    client, key = witness
    _, text = note(12)
    reply = client.add_checkpoint(add_checkpoint_body(0, [], text))
    assert cosignature_lines(reply)
    (tmp_path / "cosigned.txt").write_bytes(text.encode() + reply.body)
    result = run_go(go_client, "-note", str(tmp_path / "cosigned.txt"), LOG.vkey(), key.vkey())
    assert result.returncode == 0, result.stderr
    assert f"checkpoint {ORIGIN} size 12 with 1 extension line(s)" in result.stdout
    assert f"cosigned by {key.name} at " in result.stdout
    edited = text.replace(EXTENSION[0], EXTENSION[0] + "!")  # the extension line is signed
    (tmp_path / "edited.txt").write_bytes(edited.encode() + reply.body)
    assert run_go(go_client, "-note", str(tmp_path / "edited.txt"), LOG.vkey(),
                  key.vkey()).returncode == 1
