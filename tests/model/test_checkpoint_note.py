"""C2SP tlog-checkpoint and signed-note: reference vectors, round trips, tampering, strict parsing.

The PeterNeumann key and note are the published example of golang.org/x/mod/sumdb/note (its
note_test.go and package documentation); the example.com/foo note is the C2SP signed-note example
as repeated by other implementations. Ed25519 is deterministic, so signing must reproduce them.
"""

from __future__ import annotations

import base64
import hashlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store import CheckpointError, SignatureError
from store.model.checkpoint import (
    MAX_NOTE_BYTES,
    MAX_SIGNATURES,
    Checkpoint,
    NoteSignature,
    SignerKey,
    VerifierKey,
    generate_key,
    key_hash,
    parse_checkpoint,
    sign,
    verify_note,
)
from store.model.merkle import EMPTY_ROOT, leaf_hash

GO_SIGNER = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
GO_VERIFIER = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
GO_TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
GO_SIGNATURE = (
    "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM="
)
FOO_VERIFIER = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
FOO_TEXT = "This is an example message.\n"
FOO_SIGNATURE = (
    "Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM="
)
ROOT = leaf_hash(b"some entry")
ORIGIN = "audit.example/log"


@pytest.fixture(scope="module")
def keys() -> tuple[SignerKey, VerifierKey]:
    signer_text, verifier_text = generate_key(ORIGIN)
    return SignerKey.parse(signer_text), VerifierKey.parse(verifier_text)


def test_key_hash_is_the_c2sp_definition():
    public = base64.b64decode(GO_VERIFIER.split("+", 2)[2])[1:]
    by_definition = hashlib.sha256(b"PeterNeumann\n\x01" + public).digest()[:4]
    assert key_hash("PeterNeumann", public) == by_definition == bytes.fromhex("c74f20a3")


def test_reference_keys_round_trip_and_match():
    signer = SignerKey.parse(GO_SIGNER)
    verifier = VerifierKey.parse(GO_VERIFIER)
    assert str(signer) == GO_SIGNER and str(verifier) == GO_VERIFIER
    assert signer.verifier == verifier
    assert "AYEK" not in repr(signer)


def test_signing_reproduces_the_reference_note_signature():
    signer = SignerKey.parse(GO_SIGNER)
    line = NoteSignature(signer.name, signer.verifier.key_hash, signer.sign(GO_TEXT.encode()))
    assert line.line() == f"— PeterNeumann {GO_SIGNATURE}\n"


@pytest.mark.parametrize(
    ("verifier", "text", "blob"),
    [(GO_VERIFIER, GO_TEXT, GO_SIGNATURE), (FOO_VERIFIER, FOO_TEXT, FOO_SIGNATURE)],
)
def test_reference_signatures_verify(verifier: str, text: str, blob: str):
    key = VerifierKey.parse(verifier)
    raw = base64.b64decode(blob)
    assert raw[:4] == key.key_hash
    assert key.verify(text.encode(), raw[4:])
    assert not key.verify(text.replace("a", "A", 1).encode(), raw[4:])


def test_generated_keys_have_the_c2sp_formats(keys: tuple[SignerKey, VerifierKey]):
    signer_text, verifier_text = generate_key("example.org/log")
    assert re.fullmatch(
        r"PRIVATE\+KEY\+example\.org/log\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}", signer_text
    )
    assert re.fullmatch(r"example\.org/log\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}", verifier_text)
    signer, verifier = SignerKey.parse(signer_text), VerifierKey.parse(verifier_text)
    assert str(signer) == signer_text and str(verifier) == verifier_text
    assert signer.verifier == verifier
    assert signer_text.split("+")[3] == verifier_text.split("+")[1] == verifier.key_hash.hex()
    assert base64.b64decode(verifier_text.split("+", 2)[2])[0] == 0x01
    assert VerifierKey.parse(verifier_text + "\n") == verifier  # as read from a .pub file


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "does not match"),
        ("PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "lowercase hex"),
        ("Peter+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "does not match"),
        ("PeterNeumann+c74f20a3+Alpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "Ed25519"),
        ("PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10", "base64"),
        ("PeterNeumann+c74f20a3", "<name>+<hash>+<base64 key>"),
        ("Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "no space"),
        (GO_SIGNER, "this is a signer key"),  # given where a verifier key belongs
    ],
)
def test_malformed_verifier_keys_are_refused(text: str, message: str):
    with pytest.raises(CheckpointError, match=re.escape(message)):
        VerifierKey.parse(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GO_SIGNER.replace("c74f20a3", "c74f20a4"), "does not match"),
        (GO_SIGNER.replace("PRIVATE+KEY+", "PRIVATE+"), "PRIVATE+KEY+"),
        (GO_VERIFIER, "PRIVATE+KEY+"),
        (GO_SIGNER[:-4], "not an Ed25519 key"),
    ],
)
def test_malformed_signer_keys_are_refused(text: str, message: str):
    with pytest.raises(CheckpointError, match=re.escape(message)):
        SignerKey.parse(text)


def test_checkpoint_body_is_the_c2sp_layout():
    body = Checkpoint(ORIGIN, 7, ROOT).body()
    assert body == f"{ORIGIN}\n7\n{base64.b64encode(ROOT).decode()}\n"
    assert Checkpoint(ORIGIN, 7, ROOT).unsigned_note() == body + "\n"


def test_signed_checkpoint_round_trips(keys: tuple[SignerKey, VerifierKey]):
    signer, verifier = keys
    checkpoint = Checkpoint(ORIGIN, 1234, ROOT)
    note = sign(checkpoint, signer)
    assert note.startswith(checkpoint.body() + "\n— " + ORIGIN + " ")
    assert verify_note(note, verifier) == checkpoint
    parsed = parse_checkpoint(note)
    assert parsed.checkpoint == checkpoint and parsed.text == checkpoint.body()
    assert [(s.name, s.key_hash) for s in parsed.signatures] == [(ORIGIN, verifier.key_hash)]


@given(
    st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "S"]), min_size=1, max_size=40),
    st.integers(0, 2**63 - 1),
    st.binary(min_size=32, max_size=32),
)
def test_any_checkpoint_round_trips(origin: str, size: int, root: bytes):
    signer = SignerKey.parse(GO_SIGNER)
    checkpoint = Checkpoint(origin, size, root)
    assert parse_checkpoint(checkpoint.unsigned_note()).checkpoint == checkpoint
    assert verify_note(sign(checkpoint, signer), signer.verifier) == checkpoint


def test_the_empty_tree_is_a_valid_checkpoint(keys: tuple[SignerKey, VerifierKey]):
    empty = Checkpoint(ORIGIN, 0, EMPTY_ROOT)
    assert parse_checkpoint(empty.unsigned_note()).signatures == ()
    assert parse_checkpoint(empty.unsigned_note()).checkpoint == empty
    assert verify_note(sign(empty, keys[0]), keys[1]) == empty


@pytest.mark.parametrize(
    "edit",
    [
        lambda note: note.replace("\n1234\n", "\n1235\n", 1),
        lambda note: note.replace(ORIGIN + "\n", "audit.example/other\n", 1),
        lambda note: note.replace(
            base64.b64encode(ROOT).decode(), base64.b64encode(leaf_hash(b"x")).decode(), 1
        ),
    ],
    ids=["size", "origin", "root"],
)
def test_a_checkpoint_edited_after_signing_is_refused(keys, edit):
    note = sign(Checkpoint(ORIGIN, 1234, ROOT), keys[0])
    edited = edit(note)
    assert edited != note
    parse_checkpoint(edited)  # still well-formed: only the signature can tell
    with pytest.raises(SignatureError, match="changed after signing"):
        verify_note(edited, keys[1])


def test_a_note_signed_by_another_key_is_refused(keys: tuple[SignerKey, VerifierKey]):
    checkpoint = Checkpoint(ORIGIN, 3, ROOT)
    impostor = SignerKey.parse(generate_key(ORIGIN)[0])  # same name, different key
    with pytest.raises(SignatureError, match="not signed by key"):
        verify_note(sign(checkpoint, impostor), keys[1])
    stranger = SignerKey.parse(GO_SIGNER)
    with pytest.raises(SignatureError, match="not signed by key"):
        verify_note(sign(checkpoint, stranger), keys[1])
    with pytest.raises(SignatureError, match="not signed by key"):
        verify_note(checkpoint.unsigned_note(), keys[1])


def test_a_forged_line_with_the_right_key_hash_is_refused(keys: tuple[SignerKey, VerifierKey]):
    checkpoint = Checkpoint(ORIGIN, 3, ROOT)
    forged = NoteSignature(ORIGIN, keys[1].key_hash, SignerKey.parse(GO_SIGNER).sign(b"x"))
    with pytest.raises(SignatureError, match="does not verify"):
        verify_note(checkpoint.body() + "\n" + forged.line(), keys[1])


def test_signatures_by_unknown_keys_are_ignored(keys: tuple[SignerKey, VerifierKey]):
    checkpoint = Checkpoint(ORIGIN, 3, ROOT)
    other = SignerKey.parse(GO_SIGNER)
    cosigned = sign(checkpoint, other) + sign(checkpoint, keys[0]).split("\n\n", 1)[1]
    assert len(parse_checkpoint(cosigned).signatures) == 2
    assert verify_note(cosigned, keys[1]) == checkpoint
    assert verify_note(cosigned, other.verifier) == checkpoint


BODY = Checkpoint(ORIGIN, 5, ROOT).body()
HEX_ROOT = f"{ORIGIN}\n5\n{ROOT.hex()}\n\n"


MALFORMED = [
    (HEX_ROOT, "root hash is 48 bytes, not 32"),
    (BODY.replace(base64.b64encode(ROOT).decode(), "zz!") + "\n", "root hash is not base64"),
    (BODY.replace("=\n", "\n") + "\n", "root hash is not base64"),
    (f"{ORIGIN}\n5\n{base64.b64encode(ROOT[:31]).decode()}\n\n", "31 bytes, not 32"),
    (BODY.replace("\n5\n", f"\n{2**64}\n") + "\n", "not below 2**63"),
    (BODY.replace("\n5\n", f"\n{2**63}\n") + "\n", "not below 2**63"),
    (BODY.replace("\n5\n", "\n" + "9" * 5000 + "\n") + "\n", "not below 2**63"),
    (BODY.replace("\n5\n", "\n05\n") + "\n", "not a decimal without leading zeros"),
    (BODY.replace("\n5\n", "\n+5\n") + "\n", "not a decimal"),
    (BODY.replace("\n5\n", "\n-1\n") + "\n", "not a decimal"),
    (BODY.replace("\n5\n", "\n５\n") + "\n", "not a decimal"),
    (BODY.replace("\n5\n", "\n\n"), "body lines"),
    (BODY, "no blank line"),
    (BODY + "\n" + "— x AAAA", "does not end with a newline"),
    ("\n" + BODY + "\n", "origin line"),
    ("audit\texample\n" + BODY.split("\n", 1)[1] + "\n", "control or non-printable"),
    (BODY.replace("\n5\n", "\n5\r\n") + "\n", "control or non-printable"),
    (BODY + "\nextension line\n\n", "empty extension line"),
    (BODY + "\n-- name AAAAAAAA\n", "does not start with '— '"),
    (BODY + "\n— name\n", "is not '— <name> <base64>'"),
    (BODY + "\n— na+me AAAAAAAA\n", "no space or '+'"),
    (BODY + "\n— name AAAA\n", "too short"),
    (BODY + "\n— name AAAAAAAA==\n", "not canonical base64"),
    (BODY + "\n" + f"— n {FOO_SIGNATURE}\n" * (MAX_SIGNATURES + 1), "more than 100"),
    (BODY + "\n" + "x" * MAX_NOTE_BYTES + "\n", "larger than 1048576 bytes"),
]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(text, message, id=f"{n}-{message}")
        for n, (text, message) in enumerate(MALFORMED)
    ],
)
def test_malformed_checkpoints_are_refused_clearly(text: str, message: str):
    with pytest.raises(CheckpointError, match=re.escape(message)):
        parse_checkpoint(text)


@pytest.mark.parametrize(
    ("origin", "size", "root"),
    [("", 0, EMPTY_ROOT), ("a\nb", 0, EMPTY_ROOT), ("o", -1, EMPTY_ROOT), ("o", 2**63, EMPTY_ROOT),
     ("o", True, EMPTY_ROOT), ("o", 1, EMPTY_ROOT[:31]), ("o", 1, EMPTY_ROOT.hex())],
)  # fmt: skip
def test_an_impossible_checkpoint_cannot_be_built(origin, size, root):
    with pytest.raises(CheckpointError):
        Checkpoint(origin, size, root)


def test_errors_are_value_errors():
    assert issubclass(CheckpointError, ValueError) and issubclass(SignatureError, ValueError)
    with pytest.raises(CheckpointError, match="key name"):
        generate_key("has space")
