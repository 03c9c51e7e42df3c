"""C2SP tlog-checkpoint bodies in C2SP signed notes, with Ed25519 keys in the signed-note formats.

A note is its text (ending in "\\n"), a blank line, then signature lines
"— <name> <base64(4-byte key hash ‖ signature)>"; the signature covers the text only. An unsigned
checkpoint is the text and the blank line with no signature lines.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

# Raised here, defined with every other error; still importable from this module.
from store.errors import CheckpointError as CheckpointError
from store.errors import SignatureError as SignatureError

if TYPE_CHECKING:
    # cryptography is imported where a key signs or verifies: an ingest or a server that
    # signs nothing would hold its ~6 MiB for the Checkpoint type alone.
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

MAX_NOTE_BYTES = 1 << 20  # a checkpoint is ~100 bytes; this only stops a hostile file early
MAX_SIGNATURES = 100  # golang.org/x/mod/sumdb/note refuses more, so do we
MAX_TREE_SIZE = (1 << 63) - 1  # sizes travel as signed 64-bit integers in SQL and most tooling
ED25519 = 0x01  # the signed-note signature type byte for Ed25519
COSIGNATURE_V1 = 0x04  # C2SP tlog-cosignature: an Ed25519 witness key, cosignature/v1 lines
KEY_TYPES = {ED25519: "Ed25519", COSIGNATURE_V1: "Ed25519 cosignature/v1"}
SIGNATURE_PREFIX = "\u2014 "  # em dash, space
_DECIMAL = re.compile(r"0|[1-9][0-9]*", re.ASCII)
_KEY_HASH = re.compile(r"[0-9a-f]{8}", re.ASCII)


def _b64decode(text: str, what: str) -> bytes:
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error):
        raise CheckpointError(f"{what} is not base64: {text[:80]!r}") from None
    if base64.b64encode(raw).decode("ascii") != text:  # one spelling per value: no stray padding
        raise CheckpointError(f"{what} is not canonical base64: {text[:80]!r}")
    return raw


def _check_name(name: str, what: str) -> str:
    if not name or "+" in name or not name.isprintable() or any(c.isspace() for c in name):
        raise CheckpointError(f"{what} {name[:80]!r} must be non-empty, printable, no space or '+'")
    return name


def key_hash(name: str, public_key: bytes, key_type: int = ED25519) -> bytes:
    """C2SP signed-note key hash: SHA-256(name ‖ "\\n" ‖ type ‖ public key)[:4] (type 0x01 for
    a log's note signatures, 0x04 for a witness's cosignature/v1)."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([key_type]) + public_key).digest()[:4]


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A tree head: the log's origin, its size in leaves and its RFC 9162 root hash, and any
    extension lines after them (C2SP tlog-checkpoint: "opaque and OPTIONAL"; kept as read, and
    part of the signed and cosigned body; this log writes none)."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.origin or not self.origin.isprintable():
            raise CheckpointError(f"origin {self.origin[:80]!r} must be non-empty and printable")
        if isinstance(self.size, bool) or not 0 <= self.size <= MAX_TREE_SIZE:
            raise CheckpointError(f"tree size {self.size} is not in [0, 2**63)")
        if not isinstance(self.root, bytes) or len(self.root) != 32:
            raise CheckpointError(f"root hash is {len(self.root)} bytes, not 32")
        for line in self.extensions:
            if not line or "\n" in line or not line.isprintable():
                raise CheckpointError(f"extension line {line[:80]!r} must be non-empty and "
                                      "printable")

    def body(self) -> str:
        """The signed text: origin, decimal size, base64 root, then any extension lines, one
        per line."""
        extra = "".join(f"{line}\n" for line in self.extensions)
        return (f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode('ascii')}\n"
                + extra)

    def unsigned_note(self) -> str:
        """The checkpoint as a note with no signature lines (body, blank line)."""
        return self.body() + "\n"

    def __str__(self) -> str:
        """What `print` shows: the body, as a C2SP note spells it (origin, size, base64
        root), not the dataclass with its raw root bytes."""
        return self.body().removesuffix("\n")


@dataclass(frozen=True, slots=True)
class NoteSignature:
    """One signature line as written; unverified."""

    name: str
    key_hash: bytes
    signature: bytes

    def line(self) -> str:
        blob = base64.b64encode(self.key_hash + self.signature).decode("ascii")
        return f"{SIGNATURE_PREFIX}{self.name} {blob}\n"


@dataclass(frozen=True, slots=True)
class SignedCheckpoint:
    """A parsed checkpoint note: the checkpoint and its signature lines, none verified yet."""

    checkpoint: Checkpoint
    signatures: tuple[NoteSignature, ...]
    text: str  # the signed text exactly as read


def _parse_body(body: str) -> Checkpoint:
    lines = body.split("\n")[:-1]  # body ends in "\n" by construction
    if len(lines) < 3:
        raise CheckpointError(f"checkpoint has {len(lines)} body lines, needs origin, size, root")
    origin, size, root = lines[:3]
    if not origin or not origin.isprintable():
        raise CheckpointError(f"origin line {origin[:80]!r} must be non-empty and printable")
    if not _DECIMAL.fullmatch(size):
        raise CheckpointError(f"tree size {size[:80]!r} is not a decimal without leading zeros")
    if len(size) > 19 or int(size) > MAX_TREE_SIZE:  # length first: int() of a huge string
        raise CheckpointError(f"tree size {size} is not below 2**63")
    raw_root = _b64decode(root, "root hash")
    if len(raw_root) != 32:
        raise CheckpointError(f"root hash is {len(raw_root)} bytes, not 32")
    extensions = tuple(lines[3:])  # C2SP: "opaque and OPTIONAL", "MUST be non-empty"
    for number, line in enumerate(extensions, 4):
        if not line:
            raise CheckpointError(f"checkpoint line {number} is an empty extension line")
    return Checkpoint(origin, int(size), raw_root, extensions)


def _parse_signature(line: str) -> NoteSignature:
    if not line.startswith(SIGNATURE_PREFIX):
        raise CheckpointError(f"signature line does not start with '— ': {line[:80]!r}")
    parts = line[len(SIGNATURE_PREFIX) :].split(" ")
    if len(parts) != 2:
        raise CheckpointError(f"signature line is not '— <name> <base64>': {line[:80]!r}")
    name = _check_name(parts[0], "signer name")
    blob = _b64decode(parts[1], "signature")
    if len(blob) < 5:
        raise CheckpointError(f"signature by {name!r} is {len(blob)} bytes, too short")
    return NoteSignature(name, blob[:4], blob[4:])


def _split_note(text: str) -> tuple[str, str]:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_NOTE_BYTES:
        raise CheckpointError(f"checkpoint is larger than {MAX_NOTE_BYTES} bytes")
    if not text.endswith("\n"):
        raise CheckpointError("checkpoint does not end with a newline")
    cut = text.rfind("\n\n")
    if cut < 0:
        raise CheckpointError("checkpoint has no blank line after its body")
    return text[: cut + 1], text[cut + 2 :]


def parse_checkpoint(text: str) -> SignedCheckpoint:
    """Parse a checkpoint note strictly; signatures are parsed but not verified."""
    body, signature_text = _split_note(text)
    if any(c != "\n" and not c.isprintable() for c in body):
        raise CheckpointError("checkpoint body has a control or non-printable character")
    checkpoint = _parse_body(body)
    lines = signature_text.split("\n")[:-1]
    if len(lines) > MAX_SIGNATURES:
        raise CheckpointError(f"checkpoint has {len(lines)} signatures, more than {MAX_SIGNATURES}")
    signatures = tuple(_parse_signature(line) for line in lines)
    return SignedCheckpoint(checkpoint, signatures, body)


@dataclass(frozen=True, slots=True)
class VerifierKey:
    """A public key as `<name>+<key hash hex>+<base64(type ‖ 32-byte public key)>`: type 0x01
    signs notes (a log's checkpoints), 0x04 cosigns them (a witness, C2SP tlog-cosignature)."""

    name: str
    public_key: bytes
    key_type: int = ED25519

    @property
    def key_hash(self) -> bytes:
        return key_hash(self.name, self.public_key, self.key_type)

    @property
    def is_cosigner(self) -> bool:
        return self.key_type == COSIGNATURE_V1

    def __str__(self) -> str:
        blob = base64.b64encode(bytes([self.key_type]) + self.public_key).decode("ascii")
        return f"{self.name}+{self.key_hash.hex()}+{blob}"

    @classmethod
    def parse(cls, text: str) -> VerifierKey:
        if text.strip().startswith("PRIVATE+KEY+"):
            raise CheckpointError("this is a signer key (PREFIX.key, secret): check with its "
                                  "verifier key, PREFIX.pub, and keep the signer key private")
        parts = text.strip().split("+", 2)  # the base64 key may itself contain '+'
        if len(parts) != 3:
            raise CheckpointError("verifier key is not '<name>+<hash>+<base64 key>'")
        return cls(*_parse_key_parts(*parts, what="verifier key"))

    def verify(self, message: bytes, signature: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        try:
            Ed25519PublicKey.from_public_bytes(self.public_key).verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True


@dataclass(frozen=True, slots=True)
class SignerKey:
    """A private key as `PRIVATE+KEY+<name>+<key hash hex>+<base64(type ‖ 32-byte seed)>`; the
    hash is its verifier key's (type 0x01: a log's key; 0x04: a witness's cosigning key)."""

    name: str
    seed: bytes
    key_type: int = ED25519

    def __repr__(self) -> str:  # keep the seed out of logs and tracebacks
        return f"SignerKey(name={self.name!r})"

    def _private(self) -> Ed25519PrivateKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return Ed25519PrivateKey.from_private_bytes(self.seed)

    @property
    def verifier(self) -> VerifierKey:
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        public = self._private().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        return VerifierKey(self.name, public, self.key_type)

    def __str__(self) -> str:
        blob = base64.b64encode(bytes([self.key_type]) + self.seed).decode("ascii")
        return f"PRIVATE+KEY+{self.name}+{self.verifier.key_hash.hex()}+{blob}"

    @classmethod
    def parse(cls, text: str) -> SignerKey:
        parts = text.strip().split("+", 4)
        if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
            raise CheckpointError("signer key is not 'PRIVATE+KEY+<name>+<hash>+<base64 key>'")
        name, seed, key_type = _parse_key_parts(*parts[2:], what="signer key", public=False)
        return cls(name, seed, key_type)

    def sign(self, message: bytes) -> bytes:
        return self._private().sign(message)


def _parse_key_parts(
    name: str, hash_hex: str, blob: str, *, what: str, public: bool = True
) -> tuple[str, bytes, int]:
    _check_name(name, f"{what} name")
    if not _KEY_HASH.fullmatch(hash_hex):
        raise CheckpointError(f"{what} hash {hash_hex[:80]!r} is not 8 lowercase hex digits")
    raw = _b64decode(blob, f"{what} material")
    if len(raw) != 33 or raw[0] not in KEY_TYPES:
        raise CheckpointError(f"{what} is not an Ed25519 key (type 0x01 or 0x04, and 32 bytes)")
    key_type, key = raw[0], raw[1:]
    public_key = key if public else SignerKey(name, key).verifier.public_key
    if key_hash(name, public_key, key_type).hex() != hash_hex:
        raise CheckpointError(f"{what} hash {hash_hex} does not match its name and key")
    return name, key, key_type


def generate_key(name: str, key_type: int = ED25519) -> tuple[str, str]:
    """A new Ed25519 key named `name`: (signer key text, verifier key text). `key_type`
    COSIGNATURE_V1 makes a witness's cosigning key."""
    _check_name(name, "key name")
    if key_type not in KEY_TYPES:
        raise CheckpointError(f"key type {key_type:#04x} is not 0x01 or 0x04")
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    seed = Ed25519PrivateKey.generate().private_bytes_raw()
    signer = SignerKey(name, seed, key_type)
    return str(signer), str(signer.verifier)


def sign(checkpoint: Checkpoint, signer: SignerKey, *more: SignerKey) -> str:
    """The checkpoint as a signed note with one signature line by each log key, in order
    (several while a log rotates its key: verifiers accept any of them)."""
    body = checkpoint.body()
    lines = []
    for key in (signer, *more):
        if key.key_type != ED25519:
            raise CheckpointError(f"key {key.name} is a witness's cosigning key, not a log's")
        lines.append(NoteSignature(key.name, key.verifier.key_hash,
                                   key.sign(body.encode())).line())
    return body + "\n" + "".join(lines)


def verify_note(text: str, verifier: VerifierKey) -> Checkpoint:
    """The checkpoint in `text` if `verifier` signed exactly its text; raise otherwise."""
    parsed = parse_checkpoint(text)
    if verifier.is_cosigner:
        raise SignatureError(f"key {verifier.name} is a witness's cosigning key (type 0x04): "
                             "give the log's verifier key")
    for signature in parsed.signatures:
        if signature.name == verifier.name and signature.key_hash == verifier.key_hash:
            # the first line for this key decides, as in the Go reference implementation
            if verifier.verify(parsed.text.encode(), signature.signature):
                return parsed.checkpoint
            raise SignatureError(
                f"signature by {verifier.name} does not verify: the checkpoint was changed"
                " after signing, or the signature is not this key's"
            )
    raise SignatureError(f"checkpoint is not signed by key {verifier}")


def open_checkpoint(note: str, verifier: VerifierKey | str | None = None) -> Checkpoint:
    """The checkpoint a note holds, checked: with a verifier key (or its text), only if that
    key signed exactly this text. CheckpointError (SignatureError) says what is wrong."""
    if verifier is None:
        return parse_checkpoint(note).checkpoint
    key = verifier if isinstance(verifier, VerifierKey) else VerifierKey.parse(verifier.strip())
    return verify_note(note, key)
