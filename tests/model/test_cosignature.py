"""C2SP tlog-cosignature (cosignature/v1), checkpoints with several log signatures, witness
quorums (tlog-policy), and tlog-proof bundles: the specs' examples, round trips, refusals."""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from store import CheckpointError, ProofError, SignatureError
from store.model.checkpoint import (
    COSIGNATURE_V1,
    Checkpoint,
    SignerKey,
    VerifierKey,
    generate_key,
    parse_checkpoint,
    sign,
)
from store.model.cosignature import add_signature_lines, check_note, cosign, cosigned_message
from store.model.merkle import inclusion_path, leaf_hash, root_hash
from store.model.proof_bundle import check_bundle, parse_bundle, write_bundle
from store.model.witness_policy import WitnessPolicy

ORIGIN = "audit.example/log"
# The tlog-cosignature spec's example checkpoint and its witness line.
SPEC_BODY = ("example.com/behind-the-sofa\n20852163\n"
             "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n")
SPEC_WITNESS_LINE = ("— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5O"
                     "WXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n")
SPEC_MESSAGE = ("cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\n"
                "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n")


def _key(name: str, seed_byte: int, key_type: int = 0x01) -> SignerKey:
    return SignerKey(name, bytes([seed_byte]) * 32, key_type)


LOG = _key(ORIGIN, 1)
LOG_NEXT = _key(ORIGIN, 2)
W1, W2, W3 = (_key(f"witness{i}.example", 10 + i, COSIGNATURE_V1) for i in (1, 2, 3))
CHECKPOINT = Checkpoint(ORIGIN, 3, root_hash([leaf_hash(b"a"), leaf_hash(b"b"), leaf_hash(b"c")]))


def _cosigned(*witnesses: SignerKey, note: str | None = None, timestamp: int = 1700000000) -> str:
    note = note or sign(CHECKPOINT, LOG)
    return add_signature_lines(note, [cosign(CHECKPOINT.body(), w, timestamp) for w in witnesses])


def test_the_spec_message_and_timestamp_layout():
    assert cosigned_message(SPEC_BODY, 1679315147) == SPEC_MESSAGE.encode()
    parsed = parse_checkpoint(SPEC_BODY + "\n" + SPEC_WITNESS_LINE)
    (line,) = parsed.signatures
    assert line.name == "witness.example.com/w1" and line.key_hash.hex() == "8d66cf3f"
    assert int.from_bytes(line.signature[:8], "big") == 1679315147  # the time line's value
    assert len(line.signature) == 8 + 64


def test_a_witness_key_hash_uses_type_0x04():
    verifier = W1.verifier
    expected = hashlib.sha256(b"witness1.example\n\x04" + verifier.public_key).digest()[:4]
    assert verifier.key_hash == expected
    text = str(verifier)
    assert base64.b64decode(text.split("+", 2)[2])[0] == 0x04
    assert VerifierKey.parse(text) == verifier
    assert SignerKey.parse(str(W1)) == W1
    signer_text, verifier_text = generate_key("w.example", COSIGNATURE_V1)
    assert SignerKey.parse(signer_text).verifier == VerifierKey.parse(verifier_text)


def test_a_cosignature_is_ed25519_over_the_v1_message():
    line = cosign(CHECKPOINT.body(), W1, 1700000000)
    assert line.key_hash == W1.verifier.key_hash
    assert line.signature[:8] == (1700000000).to_bytes(8, "big")
    # checked with the cryptography package directly, not through the store's verifier
    Ed25519PublicKey.from_public_bytes(W1.verifier.public_key).verify(
        line.signature[8:], b"cosignature/v1\ntime 1700000000\n" + CHECKPOINT.body().encode())


def test_check_note_says_which_log_key_and_witnesses_signed():
    note = _cosigned(W1, W2, note=sign(CHECKPOINT, LOG, LOG_NEXT))
    checked = check_note(note, [LOG_NEXT.verifier], [W1.verifier, W2.verifier, W3.verifier])
    assert checked.checkpoint == CHECKPOINT
    assert checked.log_signers == (LOG_NEXT.verifier,)
    assert [(c.witness, c.timestamp) for c in checked.cosigners] == [
        ("witness1.example", 1700000000), ("witness2.example", 1700000000)]
    # key rotation: either listed key is enough, and both are named when both signed
    assert check_note(note, [LOG.verifier, LOG_NEXT.verifier]).log_signers == (
        LOG.verifier, LOG_NEXT.verifier)
    with pytest.raises(SignatureError, match="not signed by key "):
        check_note(sign(CHECKPOINT, LOG), [LOG_NEXT.verifier])


def test_a_changed_cosignature_is_refused():
    note = _cosigned(W1)
    tampered = note.replace(cosign(CHECKPOINT.body(), W1, 1700000000).line(),
                            cosign(CHECKPOINT.body(), W1, 1700000001).line()[:-10] + "AAAAAAAAA\n")
    with pytest.raises(CheckpointError):
        check_note(tampered, [LOG.verifier], [W1.verifier])
    other_body = Checkpoint(ORIGIN, 4, CHECKPOINT.root).body()
    forged = add_signature_lines(sign(CHECKPOINT, LOG), [cosign(other_body, W1, 5)])
    with pytest.raises(SignatureError, match=r"cosignature by witness1\.example does not verify"):
        check_note(forged, [LOG.verifier], [W1.verifier])


def test_a_quorum_of_two_passes_with_two_and_fails_with_one():
    policy = WitnessPolicy.of_keys([LOG.verifier], [W1.verifier, W2.verifier, W3.verifier], 2)
    assert len(policy.check(_cosigned(W1, W3)).cosigners) == 2
    with pytest.raises(SignatureError, match=r"short of the witness quorum \(2 of witness1"
                       r".*\): cosigned by witness2.example; not by witness1.example, "
                       r"witness3.example"):
        policy.check(_cosigned(W2))
    assert WitnessPolicy.of_keys([LOG.verifier], []).check(sign(CHECKPOINT, LOG))
    with pytest.raises(CheckpointError, match="quorum 3: must be between 0 and the 2"):
        WitnessPolicy.of_keys([LOG.verifier], [W1.verifier, W2.verifier], 3)
    with pytest.raises(CheckpointError, match="a log cannot witness itself"):
        WitnessPolicy.of_keys([LOG.verifier], [LOG.verifier], 1)


def test_the_spec_policy_file_with_groups():
    x1, x2, x3, y1, y2, y3 = (_key(f"{g}{i}.example", 40 + n, COSIGNATURE_V1)
                              for n, (g, i) in enumerate((g, i) for g in "xy" for i in (1, 2, 3)))
    text = (f"log {LOG.verifier}\n\n"
            f"witness X1 {x1.verifier}\nwitness X2 {x2.verifier}\nwitness X3 {x3.verifier}\n"
            "group X-witnesses 2 X1 X2 X3\n\n"
            f"witness Y1 {y1.verifier}\nwitness Y2 {y2.verifier}\n"
            f"\twitness Y3 {y3.verifier} https://y3.example/\n"
            "group Y-witnesses any Y1 Y2 Y3\n\n"
            "# both organisations\ngroup X-and-Y all X-witnesses Y-witnesses\nquorum X-and-Y\n")
    policy = WitnessPolicy.parse(text)
    assert policy.check(_cosigned(x1, x3, y2))
    with pytest.raises(SignatureError, match="short of the witness quorum"):
        policy.check(_cosigned(x1, y1, y2, y3))


@pytest.mark.parametrize(("text", "message"), [
    ("", "no quorum line"),
    ("quorum w\n", "quorum w is not defined above"),
    ("quorum none\nquorum none\n", "line 2: a second quorum line"),
    ("group g 1 a\nquorum none\n", "members must be defined above"),
    ("witness w {w}\ngroup g 2 w\nquorum g\n", "threshold '2' is not all, any or 1..1"),
    ("witness w {w}\nwitness w {w}\nquorum none\n", "line 2: name w is defined twice"),
    ("witness w {log}\nlog {log}\nquorum none\n", "a log cannot witness itself"),
    ("log {w}\nquorum none\n", "not a note signing key"),
    ("frobnicate\nquorum none\n", "line 1: not a log, witness, group or quorum line"),
])
def test_bad_policies_are_refused_naming_the_line(text: str, message: str):
    text = text.format(w=W1.verifier, log=LOG.verifier)
    with pytest.raises(CheckpointError, match=message):
        WitnessPolicy.parse(text)


def test_the_spec_proof_example_parses():
    text = ("c2sp.org/tlog-proof@v1\n"
            "extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ\n"
            "index 73894\n"
            "gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\n"
            "B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=\n"
            "EKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=\n"
            "RoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=\n"
            "AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=\n"
            "\n"
            "example.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=\n\n")
    bundle = parse_bundle(text)
    assert bundle.index == 73894 and len(bundle.inclusion_path) == 5
    assert bundle.entry is not None and bundle.entry.startswith(b"age-v1.2.1-darwin-arm64.tar.gz")
    assert bundle.note.startswith("example.com/fancylog\n109482\n")
    assert write_bundle(bundle.index, bundle.inclusion_path, bundle.note, bundle.entry) == text


def _bundle(index: int = 1, note: str | None = None) -> str:
    leaves = [leaf_hash(e) for e in (b"a", b"b", b"c")]
    path = inclusion_path(index, 3, lambda s, e: root_hash(leaves[s:e]))
    return write_bundle(index, path, note or _cosigned(W1, W2), b"abc"[index:index + 1])


def test_a_bundle_verifies_offline_against_a_policy():
    policy = WitnessPolicy.of_keys([LOG.verifier], [W1.verifier, W2.verifier], 2)
    assert check_bundle(_bundle(), policy) == (
        f"leaf 1 is in the tree of size 3, root {CHECKPOINT.root.hex()} ({ORIGIN}); signed by "
        f"{LOG.verifier}; cosigned by witness1.example, witness2.example")
    with pytest.raises(SignatureError, match="the proof's checkpoint: checkpoint is short"):
        check_bundle(_bundle(note=_cosigned(W1)), policy)
    wrong_entry = _bundle().replace("extra Yg==", "extra Yw==")
    with pytest.raises(ProofError, match="the entry is not leaf 1"):
        check_bundle(wrong_entry, policy)
    with pytest.raises(ProofError, match="index 5 is not in the checkpoint's tree of size 3"):
        check_bundle(_bundle().replace("index 1", "index 5"), policy)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace("c2sp.org/tlog-proof@v1", "c2sp.org/tlog-proof@v2"), "does not start"),
    (lambda t: t.replace("index 1\n", ""), "no 'index N' line"),
    (lambda t: t.replace("index 1", "index 01"), "not a decimal"),
    (lambda t: t.replace("\n\n", "\n"), "no blank line"),
    (lambda t: t.replace("index 1\n", "index 1\nAAAA\n"), "line 1 is 3 bytes"),
    (lambda t: t.replace("index 1\n", "index 1\n" + "AA==\n" * 64), "more than 63"),
])
def test_malformed_bundles_are_refused(edit, message):
    with pytest.raises(ProofError, match=message):
        parse_bundle(edit(_bundle()))


# --- issue 31: extension lines, 0x01 witness keys, quorums by key ---------------------------

def test_extension_lines_are_kept_signed_and_cosigned():
    """tlog-checkpoint: "Any following lines are extension lines, opaque and OPTIONAL";
    tlog-cosignature: "Extension lines MAY be included in the checkpoint by the log, and if
    present MUST be included in the cosigned message"."""
    extended = Checkpoint(ORIGIN, 3, CHECKPOINT.root, ("ext one", "ext two"))
    note = sign(extended, LOG)
    assert note.startswith(CHECKPOINT.body() + "ext one\next two\n\n")
    assert parse_checkpoint(note).checkpoint == extended
    line = cosign(extended.body(), W1, 1700000000)
    assert line.signature[8:] == W1.sign(cosigned_message(extended.body(), 1700000000))
    checked = check_note(add_signature_lines(note, [line]), [LOG.verifier], [W1.verifier])
    assert [c.witness for c in checked.cosigners] == ["witness1.example"]
    dropped = sign(CHECKPOINT, LOG) + line.line()  # the same cosignature on the body without
    with pytest.raises(SignatureError, match=r"cosignature by witness1\.example does not verify"):
        check_note(dropped, [LOG.verifier], [W1.verifier])


def test_a_witness_given_by_a_plain_ed25519_key():
    """A 0x01 vkey names the witness's Ed25519 key: its cosignature/v1 lines carry the key ID
    over 0x04 ("SHA-256(<name> || "\\n" || 0x04 || 32-byte Ed25519 cosigner public key)[:4]");
    a plain Ed25519 note signature by it (key ID over 0x01) counts too."""
    plain = _key("witness9.example", 19)  # type 0x01
    expected_id = hashlib.sha256(b"witness9.example\n\x04" + plain.verifier.public_key
                                 ).digest()[:4]
    line = cosign(CHECKPOINT.body(), plain, 1700000000)
    assert line.key_hash == expected_id
    note = sign(CHECKPOINT, LOG)
    policy = WitnessPolicy.of_keys([LOG.verifier], [plain.verifier], 1)
    assert policy.check(add_signature_lines(note, [line])).cosigners[0].timestamp == 1700000000
    from store.model.checkpoint import NoteSignature

    old_style = NoteSignature(plain.name, plain.verifier.key_hash,
                              plain.sign(CHECKPOINT.body().encode()))
    assert policy.check(add_signature_lines(note, [old_style])).cosigners[0].timestamp == 0
    text = f"log {LOG.verifier}\nwitness p {plain.verifier}\nquorum p\n"
    assert WitnessPolicy.parse(text).check(add_signature_lines(note, [line]))


def test_a_quorum_counts_keys_and_refuses_one_key_twice():
    """tlog-policy: "Duplicate witnesses, i.e., multiple witness lines with the same public
    key, are not allowed." Two keys under one name: only the key that cosigned counts."""
    evil = _key("witness1.example", 77, COSIGNATURE_V1)
    policy = WitnessPolicy.parse(f"log {LOG.verifier}\nwitness real {W1.verifier}\n"
                                 f"witness evil {evil.verifier}\nquorum real\n")
    with pytest.raises(SignatureError, match="cosigned by evil; not by real"):
        policy.check(_cosigned(evil))
    assert policy.check(_cosigned(W1))
    as_plain = VerifierKey(W1.name + "-again", W1.verifier.public_key)  # same key, 0x01
    with pytest.raises(CheckpointError, match="key is listed twice"):
        WitnessPolicy.parse(f"log {LOG.verifier}\nwitness a {W1.verifier}\n"
                            f"witness b {as_plain}\nquorum a\n")
    with pytest.raises(CheckpointError, match="key is listed twice"):
        WitnessPolicy.of_keys([LOG.verifier], [W1.verifier, as_plain])
