"""The browser's checks (store/console/static/tlog-verify.js) run under Node's WebCrypto, the
same SHA-256 and Ed25519 the browser offers: RFC 9162 inclusion and consistency proofs of every
leaf and size pair of trees up to 12 leaves (paths from the RFC's recursive definitions, written
out here), RFC 8032's Ed25519 test vector, the signed-note spec's example key and note, and
checkpoints signed and cosigned (cosignature/v1) against pinned keys and a quorum."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from store.model.checkpoint import COSIGNATURE_V1, Checkpoint, SignerKey
from store.model.cosignature import cosign

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js (Debian's nodejs)")
LIBRARY = Path(__file__).resolve().parents[2] / "store" / "console" / "static" / "tlog-verify.js"


def run_js(body: str, data: Any = None) -> Any:
    """`body` (an async function body using `V`, the library, and `D`, `data`) run by Node;
    what it returns."""
    program = (f"const V = require({json.dumps(str(LIBRARY))});\n"
               f"const D = {json.dumps(data)};\n"
               "const hashes = (list) => list.map((h) => V.fromHex(h, 'path'));\n"
               f"(async () => {{ {body} }})().then((r) => process.stdout.write(JSON.stringify(r)),"
               " (e) => { process.stdout.write(JSON.stringify({error: e.message})); });\n")
    done = subprocess.run([str(NODE), "-e", program], capture_output=True, text=True, timeout=60,
                          check=True)
    return json.loads(done.stdout)


# RFC 9162 section 2.1.1: MTH, and sections 2.1.3.1 and 2.1.4.1: PATH and PROOF, as defined.
def _leaf(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def _mth(entries: list[bytes]) -> bytes:
    if len(entries) == 1:
        return _leaf(entries[0])
    k = 1 << ((len(entries) - 1).bit_length() - 1)  # the largest power of two below n
    return hashlib.sha256(b"\x01" + _mth(entries[:k]) + _mth(entries[k:])).digest()


def _path(m: int, entries: list[bytes]) -> list[bytes]:
    if len(entries) == 1:
        return []
    k = 1 << ((len(entries) - 1).bit_length() - 1)
    if m < k:
        return [*_path(m, entries[:k]), _mth(entries[k:])]
    return [*_path(m - k, entries[k:]), _mth(entries[:k])]


def _subproof(m: int, entries: list[bytes], whole: bool) -> list[bytes]:
    n = len(entries)
    if m == n:
        return [] if whole else [_mth(entries)]
    k = 1 << ((n - 1).bit_length() - 1)
    if m <= k:
        return [*_subproof(m, entries[:k], whole), _mth(entries[k:])]
    return [*_subproof(m - k, entries[k:], False), _mth(entries[:k])]


ENTRIES = [f"entry {i}".encode() for i in range(12)]


def test_inclusion_of_every_leaf_of_trees_up_to_12_leaves() -> None:
    cases = [[i, n, ENTRIES[i].decode(), _mth(ENTRIES[:n]).hex(),
              [h.hex() for h in _path(i, ENTRIES[:n])]]
             for n in range(1, 13) for i in range(n)]
    reached = run_js(f"""
      const out = [];
      for (const [i, n, entry, root, path] of {json.dumps(cases)}) {{
        const got = await V.rootFromInclusion(BigInt(i), BigInt(n), await V.leafHash(entry),
                                              path.map((h) => V.fromHex(h, "p")));
        out.push(V.hex(got) === root);
      }}
      return out;""")
    assert reached == [True] * len(cases)


def test_a_path_one_hash_short_or_altered_fails() -> None:
    path = [h.hex() for h in _path(5, ENTRIES[:11])]
    altered = [("0" if path[0][0] != "0" else "1") + path[0][1:], *path[1:]]
    said = run_js("""
      const leaf = await V.leafHash(D.entry);
      const tries = [];
      try { await V.rootFromInclusion(5n, 11n, leaf, hashes(D.short)); tries.push("no error"); }
      catch (e) { tries.push(e.message); }
      const other = await V.rootFromInclusion(5n, 11n, leaf, hashes(D.altered));
      tries.push(V.hex(other) === D.root);
      return tries;""", {"entry": ENTRIES[5].decode(), "root": _mth(ENTRIES[:11]).hex(),
                         "short": path[:-1], "altered": altered})
    assert said == [f"the path has {len(path) - 1} hashes, fewer than leaf 5 of a tree of size "
                    "11 needs", False]


def test_consistency_between_every_pair_of_sizes_up_to_12() -> None:
    cases = [[m, n, _mth(ENTRIES[:m]).hex(), _mth(ENTRIES[:n]).hex(),
              [h.hex() for h in _subproof(m, ENTRIES[:n], True)]]
             for n in range(1, 13) for m in range(1, n + 1)]
    held = run_js(f"""
      const out = [];
      for (const [m, n, a, b, path] of {json.dumps(cases)}) {{
        try {{ await V.checkConsistency(BigInt(m), V.fromHex(a, "a"), BigInt(n), V.fromHex(b, "b"),
                                        path.map((h) => V.fromHex(h, "p"))); out.push(true); }}
        catch (e) {{ out.push(e.message); }}
      }}
      return out;""")
    assert held == [True] * len(cases)
    forked = _mth([*ENTRIES[:3], b"forked", *ENTRIES[4:7]]).hex()
    said = run_js("""
      try { await V.checkConsistency(3n, V.fromHex(D.old, "a"), 7n, V.fromHex(D.forked, "b"),
                                     hashes(D.path)); return "held"; }
      catch (e) { return e.message; }""", {
        "old": _mth(ENTRIES[:3]).hex(), "forked": forked,
        "path": [h.hex() for h in _subproof(3, ENTRIES[:7], True)]})
    assert said.startswith("the path leads to new root ")
    assert run_js("""
      try { await V.checkConsistency(4n, new Uint8Array(32), 4n, new Uint8Array(32).fill(1), []);
            return "held"; } catch (e) { return e.message; }""").startswith(
        "tree size 4 has two roots")


def test_ed25519_against_rfc_8032_test_1() -> None:
    # RFC 8032 section 7.1, TEST 1: the empty message.
    public = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
    signature = ("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
                 "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
    assert run_js(f"""
      const k = Uint8Array.from({json.dumps(list(bytes.fromhex(public)))});
      const s = Uint8Array.from({json.dumps(list(bytes.fromhex(signature)))});
      const bad = s.slice(); bad[0] ^= 1;
      return [await V.ed25519Verify(k, s, new Uint8Array(0)),
              await V.ed25519Verify(k, bad, new Uint8Array(0)),
              await V.ed25519Verify(k, s, Uint8Array.of(0))];""") == [True, False, False]


def test_the_signed_note_specs_example_key_and_note() -> None:
    # C2SP signed-note, "Verifier keys" and the example note (golang.org/x/mod/sumdb/note's).
    key = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
    text = ("If you think cryptography is the answer to your problem,\n"
            "then you don't know what your problem is.\n")
    line = ("x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6Ryy"
            "BwJnAM=")
    result = run_js("""
      const key = await V.parseVerifierKey(D.key);
      const blob = V.fromBase64(D.line, "sig");
      const text = new TextEncoder().encode(D.text);
      return [key.name, key.type, V.hex(key.keyHash), V.hex(blob.slice(0, 4)),
              await V.ed25519Verify(key.publicKey, blob.slice(4), text)];""",
                    {"key": key, "line": line, "text": text})
    assert result == ["PeterNeumann", 1, "c74f20a3", "c74f20a3", True]
    wrong_hash = key.replace("c74f20a3", "c74f20a4")
    assert run_js(f"""try {{ await V.parseVerifierKey({json.dumps(wrong_hash)}); return "parsed"; }}
                      catch (e) {{ return e.message; }}""") == (
        "key hash c74f20a4 does not match its name and key")


LOG = SignerKey("audit.example/log", b"\x03" * 32)
OTHER_LOG = SignerKey("audit.example/log", b"\x04" * 32)
W1 = SignerKey("w1.example", b"\x07" * 32, COSIGNATURE_V1)
W2 = SignerKey("w2.example", b"\x08" * 32)  # a standard Ed25519 (0x01) witness key


def _signed(checkpoint: Checkpoint, log: SignerKey, *, witnesses: tuple[SignerKey, ...] = (),
            extension: str = "") -> str:
    body = checkpoint.body() + extension
    lines = [f"\u2014 {log.name} "
             + base64.b64encode(log.verifier.key_hash + log.sign(body.encode())).decode()]
    for witness in witnesses:
        if witness.key_type == COSIGNATURE_V1:
            lines.append(cosign(body, witness, 1700000000).line().rstrip("\n"))
        else:
            lines.append(f"\u2014 {witness.name} " + base64.b64encode(
                witness.verifier.key_hash + witness.sign(body.encode())).decode())
    return body + "\n" + "".join(line + "\n" for line in lines)


def _verify(note: str, logs: list[SignerKey], witnesses: list[SignerKey], quorum: int) -> Any:
    return run_js("""
      const logs = await Promise.all(D.logs.map(V.parseVerifierKey));
      const ws = await Promise.all(D.witnesses.map(V.parseVerifierKey));
      try {
        const r = await V.verifyCheckpoint(D.note, logs, ws, D.quorum);
        const time = (w) => (w.time === null ? null : String(w.time));
        return {size: String(r.checkpoint.size), root: V.hex(r.checkpoint.root),
                signer: r.signer.name, witnesses: r.witnesses.map((w) => [w.key.name, time(w)])};
      } catch (e) { return {error: e.message}; }""", {
        "logs": [str(k.verifier) for k in logs], "note": note, "quorum": quorum,
        "witnesses": [str(k.verifier) for k in witnesses]})


CHECKPOINT = Checkpoint("audit.example/log", 83, bytes(range(32)))


def test_a_checkpoint_signed_by_the_pinned_key_and_cosigned_to_quorum_verifies() -> None:
    note = _signed(CHECKPOINT, LOG, witnesses=(W1, W2), extension="an extension line\n")
    assert _verify(note, [OTHER_LOG, LOG], [W1, W2], 2) == {
        "size": "83", "root": bytes(range(32)).hex(), "signer": "audit.example/log",
        "witnesses": [["w1.example", "1700000000"], ["w2.example", None]]}


def test_what_fails_says_why() -> None:
    note = _signed(CHECKPOINT, LOG, witnesses=(W1,))
    assert _verify(note, [OTHER_LOG], [], 0)["error"].startswith(
        "the checkpoint carries no valid signature by the pinned key audit.example/log")
    renamed = SignerKey("audit.example/other", b"\x03" * 32)
    assert _verify(note, [renamed], [], 0) == {
        "error": 'no pinned log key is named "audit.example/log", the checkpoint\'s origin'}
    assert _verify(note, [LOG], [W1, W2], 2) == {
        "error": "1 of the pinned witnesses cosigned it (w1.example); the quorum you set is 2"}
    # The same witness key pinned twice counts once.
    assert _verify(note, [LOG], [W1, W1], 2)["error"].startswith("1 of the pinned witnesses")
    root_line = base64.b64encode(bytes(range(32))).decode()
    tampered = note.replace(root_line, base64.b64encode(bytes(32)).decode())
    assert _verify(tampered, [LOG], [], 0)["error"].startswith(
        "the checkpoint carries no valid signature")
    moved = note.replace("\n83\n", "\n84\n")
    assert _verify(moved, [LOG], [], 0)["error"].startswith(
        "the checkpoint carries no valid signature")
    # A cosignature copied onto another checkpoint does not count.
    other = _signed(Checkpoint("audit.example/log", 84, bytes(32)), LOG)
    copied = other + note.splitlines(keepends=True)[-1]
    assert _verify(copied, [LOG], [W1], 1)["error"].startswith("0 of the pinned witnesses")
