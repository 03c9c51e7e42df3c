"""The C2SP tlog-witness: it cosigns a checkpoint shown to extend the last one it cosigned,
refuses rollbacks, forks, bad proofs, unknown logs and bad signatures (each its status), and
keeps its state across restarts; `checkpoint --witness` gets two witnesses' cosignatures,
`verify --quorum 2` passes and one short of it fails; bundles verify offline."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runs import cli, subprocess_environ
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from free_ports import free_port
from go_interop import go_client, run_go, serving
from rfc9162_reference import leaf, mth
from starlette.testclient import TestClient

from store.api.witness_server import Witness, WitnessState, create_witness_app
from store.model.checkpoint import COSIGNATURE_V1, Checkpoint, SignerKey, sign
from store.model.merkle import consistency_path
from store.model.witness import request_body

__all__ = ["go_client"]  # a fixture
ORIGIN = "audit.example/log"
LOG = SignerKey(ORIGIN, b"\x01" * 32)
OTHER = SignerKey(ORIGIN, b"\x09" * 32)  # the same name, another key: a forger
W = SignerKey("w.example", b"\x05" * 32, COSIGNATURE_V1)
LEAVES = [leaf(f"entry {i}".encode()) for i in range(40)]


def note(size: int, leaves: list[bytes] = LEAVES, key: SignerKey = LOG) -> str:
    return sign(Checkpoint(ORIGIN, size, mth(leaves[:size])), key)


def proof(old: int, new: int, leaves: list[bytes] = LEAVES) -> list[bytes]:
    return consistency_path(old, new, lambda s, e: mth(leaves[s:e])) if old else []


@pytest.fixture
def witness(tmp_path: Path) -> Iterator[TestClient]:
    app = create_witness_app(Witness(W, {ORIGIN: [LOG.verifier]}, WitnessState(tmp_path),
                                     clock=lambda: 1700000000))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client


def add(client: TestClient, old: int, new: int, *, leaves: list[bytes] = LEAVES,
        text: str | None = None, path: list[bytes] | None = None):
    body = request_body(old, proof(old, new, leaves) if path is None else path,
                        text or note(new, leaves))
    return client.post("/add-checkpoint", content=body)


def test_a_cosignature_is_cosignature_v1_by_the_witness_key(witness: TestClient):
    answer = add(witness, 0, 10)
    assert answer.status_code == 200
    name, blob = answer.text.removeprefix("— ").removesuffix("\n").split(" ")
    raw = base64.b64decode(blob)
    assert name == "w.example" and raw[:4] == W.verifier.key_hash and len(raw) == 76
    assert int.from_bytes(raw[4:12], "big") == 1700000000
    body = f"{ORIGIN}\n10\n{base64.b64encode(mth(LEAVES[:10])).decode()}\n"
    Ed25519PublicKey.from_public_bytes(W.verifier.public_key).verify(
        raw[12:], f"cosignature/v1\ntime 1700000000\n{body}".encode())
    assert add(witness, 10, 25).status_code == 200
    assert add(witness, 25, 25).status_code == 200  # the same tree again: cosigned again


def test_a_rollback_is_refused_with_the_size_held(witness: TestClient):
    """tlog-witness: "The response body MUST consist of the tree size of the latest cosigned
    checkpoint in decimal, followed by a newline (U+000A). The response MUST have a
    `Content-Type` of `text/x.tlog.size`." """
    assert add(witness, 0, 20).status_code == 200
    stale = add(witness, 0, 10)
    assert (stale.status_code, stale.content) == (409, b"20\n")
    assert stale.headers["content-type"] == "text/x.tlog.size"  # no "; charset=utf-8"
    assert add(witness, 20, 10, path=[]).status_code == 400  # old size above the new one


def test_a_fork_at_the_same_size_is_refused(witness: TestClient):
    """tlog-witness: "If the old size matches the checkpoint size, the witness MUST check that
    the root hashes are also identical. If they don't match, the witness MUST respond with a
    "422 Unprocessable Entity" HTTP status code." """
    assert add(witness, 0, 20).status_code == 200
    forked = [*LEAVES[:19], leaf(b"rewritten")]
    answer = add(witness, 20, 20, leaves=forked)
    assert answer.status_code == 422 and "a fork: size 20 was cosigned with root" in answer.text


def test_a_bad_consistency_proof_is_refused(witness: TestClient):
    assert add(witness, 0, 20).status_code == 200
    forked = [*LEAVES[:5], leaf(b"rewritten"), *LEAVES[6:]]
    assert add(witness, 20, 30, leaves=forked).status_code == 422
    wrong = add(witness, 20, 30, path=proof(20, 30)[:-1])
    assert wrong.status_code == 422 and "not shown to extend" in wrong.text
    assert add(witness, 20, 30).status_code == 200  # the true extension still passes


def test_an_unknown_log_and_a_bad_signature_are_refused(witness: TestClient):
    stranger = sign(Checkpoint("other.example/log", 3, mth(LEAVES[:3])),
                    SignerKey("other.example/log", b"\x03" * 32))
    assert add(witness, 0, 3, text=stranger).status_code == 404
    assert add(witness, 0, 3, text=note(3, key=OTHER)).status_code == 403
    tampered = note(3).replace("\n3\n", "\n4\n")
    assert add(witness, 0, 4, text=tampered).status_code == 403
    for body in (b"old 01\n\n" + note(3).encode(), b"new 0\n\n" + note(3).encode(),
                 b"old 0\nnot base64!\n\n" + note(3).encode(), b"old 0\n" + note(3).encode()):
        assert witness.post("/add-checkpoint", content=body).status_code == 400


def test_the_state_survives_a_restart(tmp_path: Path):
    first = Witness(W, {ORIGIN: [LOG.verifier]}, WitnessState(tmp_path))
    first.add_checkpoint(request_body(0, [], note(20)))
    again = create_witness_app(Witness(W, {ORIGIN: [LOG.verifier]}, WitnessState(tmp_path)))
    with TestClient(again, base_url="http://127.0.0.1") as client:
        assert add(client, 0, 10).text == "20\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


# --- the commands, end to end: two `witness serve` processes --------------------------------


@pytest.fixture
def witnessed(tmp_path: Path) -> Iterator[dict[str, object]]:
    def ok(*args: str | Path) -> str:
        result = cli(*args)
        assert result.exit_code == 0, result.output
        return result.stdout

    ok("keygen", ORIGIN, "--out", tmp_path / "log")
    servers, urls = [], []
    for name in ("w1.example", "w2.example"):
        ok("keygen", name, "--witness", "--out", tmp_path / name)
        port = free_port()
        servers.append(subprocess.Popen(
            [str(Path(sys.executable).parent / "core-audit"), "witness", "serve", "--key",
             str(tmp_path / f"{name}.key"), "--log", f"{ORIGIN}={tmp_path / 'log.pub'}",
             "--state", str(tmp_path / f"{name}.state"), "--port", str(port)],
            env=subprocess_environ(), stderr=subprocess.PIPE))
        urls.append(f"http://127.0.0.1:{port}")
    for url, server in zip(urls, servers, strict=True):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), 1).close()
                break
            except OSError:
                time.sleep(0.1)
    try:
        yield {"dir": tmp_path, "urls": urls, "ok": ok, "servers": servers}
    finally:
        for server in servers:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)


def test_two_witnesses_cosign_and_the_quorum_decides(witnessed: dict[str, object]):
    folder: Path = witnessed["dir"]  # type: ignore[assignment]
    ok = witnessed["ok"]
    w1, w2 = (folder / "w1.example.pub", folder / "w2.example.pub")
    urls: list[str] = witnessed["urls"]  # type: ignore[assignment]
    db = folder / "audit.db"
    examples = Path(__file__).resolve().parents[2] / "examples"
    ok("ingest", "--db", db, examples / "adr_0225_frames.jsonl")
    ok("checkpoint", "--db", db, "--key", folder / "log.key", "--origin", ORIGIN,
       "--witness", f"{urls[0]}={w1}", "--witness", f"{urls[1]}={w2}")
    ok("ingest", "--db", db, examples / "core_frames_families.jsonl")
    both = ok("checkpoint", "--db", db, "--key", folder / "log.key",  # type: ignore[operator]
              "--witness", f"{urls[0]}={w1}", "--witness", f"{urls[1]}={w2}")
    assert both.count("\n— w1.example ") == 1 and both.count("\n— w2.example ") == 1
    (folder / "both.txt").write_text(both, encoding="utf-8")
    verified = ok("verify", "--db", db, "--checkpoint", folder / "both.txt", "--key",
                  folder / "log.pub", "--witness-key", w1, "--witness-key", w2, "--quorum", "2")
    assert "cosigned by w1.example, w2.example; extends the checkpoint" in verified
    kept = json.loads(ok("checkpoints", "--db", db, "--json").splitlines()[0])
    assert kept["cosigners"] == ["w1.example", "w2.example"] and kept["note"] == both
    # one witness short of the quorum
    short = both.split("— w2.example ")[0]
    (folder / "short.txt").write_text(short, encoding="utf-8")
    refused = cli("verify", "--db", db, "--checkpoint", folder / "short.txt", "--key",
                  folder / "log.pub", "--witness-key", w1, "--witness-key", w2,
                  "--quorum", "2")
    assert refused.exit_code == 1
    assert ("checkpoint is short of the witness quorum (2 of w1.example, w2.example): "
            "cosigned by w1.example; not by w2.example") in refused.stderr
    # an offline bundle of a record, against the cosigned checkpoint
    said = ok("prove", "--db", db, "--index", "3", "--bundle", folder / "leaf.tlog-proof")
    assert said.startswith(f"wrote {folder / 'leaf.tlog-proof'}: leaf 3")
    assert (folder / "leaf.tlog-proof").read_text().endswith(both)
    valid = ok("verify-proof", folder / "leaf.tlog-proof", "--key", folder / "log.pub",
               "--witness-key", w1, "--witness-key", w2, "--quorum", "2")
    assert valid.startswith("valid: leaf 3 is in the tree of size ")
    assert valid.rstrip().endswith("cosigned by w1.example, w2.example")
    unsigned = cli("verify-proof", folder / "leaf.tlog-proof")
    assert unsigned.exit_code == 1 and "nothing authenticates the checkpoint" in unsigned.stderr
    for server in witnessed["servers"]:  # type: ignore[attr-defined]
        server.send_signal(signal.SIGKILL)  # a crash: the state on disk must hold
        server.wait(timeout=30)
    state = json.loads(next((folder / "w1.example.state").glob("*.json")).read_text())
    assert state["size"] == int(both.split("\n")[1]) and state["origin"] == ORIGIN
    assert os.listdir(folder / "w2.example.state") != []


@pytest.mark.slow
def test_go_checks_the_witnesses_cosignatures(witnessed: dict[str, object], go_client: Path):
    """The cosignatures `witness serve` made, checked by Go's crypto/ed25519 over the
    cosignature/v1 message, on the checkpoint the log serves at /log/checkpoint."""
    folder: Path = witnessed["dir"]  # type: ignore[assignment]
    ok = witnessed["ok"]
    urls: list[str] = witnessed["urls"]  # type: ignore[assignment]
    db = folder / "audit.db"
    examples = Path(__file__).resolve().parents[2] / "examples"
    ok("ingest", "--db", db, examples / "adr_0225_frames.jsonl")  # type: ignore[operator]
    ok("checkpoint", "--db", db, "--key", folder / "log.key", "--origin", ORIGIN,  # type: ignore[operator]
       "--witness", f"{urls[0]}={folder / 'w1.example.pub'}",
       "--witness", f"{urls[1]}={folder / 'w2.example.pub'}")
    keys = [(folder / f"{n}.pub").read_text().strip() for n in ("log", "w1.example",
                                                                  "w2.example")]
    with serving(db) as url:
        result = run_go(go_client, f"{url}/log", *keys)
    assert result.returncode == 0, result.stderr
    assert "cosigned by w1.example at " in result.stdout
    assert "cosigned by w2.example at " in result.stdout
    tampered = keys[1][:-8] + ("A" if keys[1][-8] != "A" else "B") + keys[1][-7:]
    with serving(db) as url:
        refused = run_go(go_client, f"{url}/log", keys[0], tampered)
    assert refused.returncode == 1


def test_racing_requests_never_roll_the_witness_back(tmp_path: Path):
    """Checking the old size and keeping the new one happen under one lock: of two requests
    from the same size, one is cosigned and the other told the size it now holds."""
    from concurrent.futures import ThreadPoolExecutor

    from store.model.witness import WitnessRefusal

    witness = Witness(W, {ORIGIN: [LOG.verifier]}, WitnessState(tmp_path))
    witness.add_checkpoint(request_body(0, [], note(10)))
    bodies = [request_body(10, proof(10, new), note(new)) for new in (15, 30)] * 4

    def attempt(body: bytes) -> str:
        try:
            witness.add_checkpoint(body)
            return "cosigned"
        except WitnessRefusal as refusal:
            return f"{refusal.status} {refusal.size}"

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(attempt, bodies))
    held = witness.state.held(ORIGIN)
    assert held is not None and held.size in (15, 30)
    assert outcomes.count("cosigned") == 1
    assert sorted(set(outcomes) - {"cosigned"}) == [f"409 {held.size}"]
