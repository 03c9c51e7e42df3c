"""A C2SP tlog-witness client written from the specs' text (tlog-witness, tlog-cosignature,
tlog-checkpoint, signed-note; C2SP main), sharing no code with core-audit: it builds
add-checkpoint requests, signs checkpoints with its own Ed25519 keys, computes RFC 6962
consistency proofs itself, and parses every reply as the spec says a client must."""

from __future__ import annotations

import base64
import hashlib
import http.client
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

EM_DASH = "\u2014"


def key_id(name: str, signature_type: int, public_key: bytes) -> bytes:
    """signed-note: "key ID = SHA-256(key name || 0x0A || signature type || public key)[:4]"."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([signature_type]) + public_key).digest()[:4]


@dataclass
class NoteKey:
    """An Ed25519 key of signed-note type `signature_type` (0x01 note, 0x04 cosignature)."""

    name: str
    seed: bytes
    signature_type: int = 0x01

    @property
    def private(self) -> Ed25519PrivateKey:
        return Ed25519PrivateKey.from_private_bytes(self.seed)

    @property
    def public(self) -> bytes:
        return self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def vkey(self) -> str:
        """signed-note: "<key name>+hex(32-bit key ID)+base64(signature type || public key)"."""
        blob = base64.b64encode(bytes([self.signature_type]) + self.public).decode()
        return f"{self.name}+{key_id(self.name, self.signature_type, self.public).hex()}+{blob}"

    def signature_line(self, text: str) -> str:
        """signed-note: "— <key name> base64(32-bit key ID || signature)" over the note text."""
        blob = key_id(self.name, 0x01, self.public) + self.private.sign(text.encode())
        return f"{EM_DASH} {self.name} {base64.b64encode(blob).decode()}\n"


def leaf_hash(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def tree_hash(leaves: Sequence[bytes]) -> bytes:
    """RFC 6962 section 2.1 MTH over leaf hashes; the empty tree is SHA-256 of nothing."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + tree_hash(leaves[:k]) + tree_hash(leaves[k:])).digest()


def _subproof(m: int, leaves: Sequence[bytes], whole: bool) -> list[bytes]:
    """RFC 6962 section 2.1.2 SUBPROOF(m, D[n], b)."""
    n = len(leaves)
    if m == n:
        return [] if whole else [tree_hash(leaves)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return [*_subproof(m, leaves[:k], whole), tree_hash(leaves[k:])]
    return [*_subproof(m - k, leaves[k:], False), tree_hash(leaves[:k])]


def consistency_proof(m: int, leaves: Sequence[bytes]) -> list[bytes]:
    """RFC 6962 PROOF(m, D[n]); empty when m is 0 or n."""
    return [] if m in (0, len(leaves)) else _subproof(m, leaves, True)


def checkpoint_body(origin: str, size: int, root: bytes, extensions: Sequence[str] = ()) -> str:
    """tlog-checkpoint: origin, decimal size, base64 root hash, then any extension lines."""
    lines = [origin, str(size), base64.b64encode(root).decode(), *extensions]
    return "".join(f"{line}\n" for line in lines)


def signed_checkpoint(body: str, *keys: NoteKey) -> str:
    return body + "\n" + "".join(key.signature_line(body) for key in keys)


def add_checkpoint_body(old_size: int, proof: Sequence[bytes], checkpoint: str) -> bytes:
    """tlog-witness: "an old size line, zero or more consistency proof lines, and an empty
    line, followed by a checkpoint"; "Each line MUST terminate in a newline character"."""
    lines = [f"old {old_size}\n", *(base64.b64encode(h).decode() + "\n" for h in proof), "\n"]
    return ("".join(lines) + checkpoint).encode()


@dataclass(frozen=True)
class Reply:
    status: int
    content_type: str | None
    body: bytes


class WitnessClient:
    """One keep-alive connection ("Clients SHOULD use ... HTTP keep-alive")."""

    def __init__(self, host: str, port: int) -> None:
        self.connection = http.client.HTTPConnection(host, port, timeout=30)

    def close(self) -> None:
        self.connection.close()

    def _request(self, method: str, path: str, body: bytes | None = None) -> Reply:
        self.connection.request(method, path, body=body)
        response = self.connection.getresponse()
        return Reply(response.status, response.getheader("Content-Type"), response.read())

    def add_checkpoint(self, body: bytes) -> Reply:
        return self._request("POST", "/add-checkpoint", body)

    def monitored_checkpoint(self, origin: str) -> Reply:
        """tlog-witness: GET <monitoring prefix>/<origin hash>/checkpoint, the origin hash
        "the SHA-256 hash of the log's origin, hex encoded, in lowercase"."""
        return self._request("GET", f"/{hashlib.sha256(origin.encode()).hexdigest()}/checkpoint")


class ReplyError(AssertionError):
    """A reply that is not what the spec says it must be."""


def conflict_size(reply: Reply) -> int:
    """A 409's size: "The response body MUST consist of the tree size of the latest cosigned
    checkpoint in decimal, followed by a newline (U+000A). The response MUST have a
    `Content-Type` of `text/x.tlog.size`." """
    if reply.status != 409:
        raise ReplyError(f"status {reply.status}, not 409")
    if reply.content_type != "text/x.tlog.size":
        raise ReplyError(f"409 Content-Type {reply.content_type!r}, not 'text/x.tlog.size'")
    text = reply.body.decode("ascii")
    digits = text[:-1]
    if not text.endswith("\n") or not digits.isdigit() or (digits != "0" and digits[0] == "0"):
        raise ReplyError(f"409 body {reply.body!r} is not a decimal and a newline")
    return int(digits)


@dataclass(frozen=True)
class Cosignature:
    name: str
    key_id: bytes
    timestamp: int
    signature: bytes


def cosignature_lines(reply: Reply) -> list[Cosignature]:
    """A 200's body: "a sequence of one or more note signature lines, each starting with the
    `—` character (U+2014) and ending with a newline character (U+000A)"; each a
    tlog-cosignature `timestamped_signature` (u64 big-endian timestamp, 64-byte Ed25519)."""
    if reply.status != 200:
        raise ReplyError(f"status {reply.status}, not 200")
    text = reply.body.decode("utf-8")
    if not text.endswith("\n"):
        raise ReplyError("the cosignature lines do not end with a newline")
    found = []
    for line in text[:-1].split("\n"):
        if not line.startswith(EM_DASH + " "):
            raise ReplyError(f"line {line!r} does not start with '— '")
        name, blob64 = line[2:].split(" ")
        blob = base64.b64decode(blob64, validate=True)
        if len(blob) != 4 + 8 + 64:
            raise ReplyError(f"cosignature of {len(blob)} bytes, not 76")
        timestamp = int.from_bytes(blob[4:12], "big")
        if timestamp == 0 or timestamp > (1 << 63) - 1:
            raise ReplyError(f"timestamp {timestamp}: must not be zero nor above 2^63 - 1")
        found.append(Cosignature(name, blob[:4], timestamp, blob[12:]))
    return found


def cosignature_verifies(cosignature: Cosignature, name: str, public_key: bytes,
                         body: str) -> bool:
    """tlog-cosignature: the key ID over 0x04, the signed message "cosignature/v1", "time
    <timestamp>", then "the whole note body of the cosigned checkpoint"."""
    if cosignature.name != name or cosignature.key_id != key_id(name, 0x04, public_key):
        return False
    message = f"cosignature/v1\ntime {cosignature.timestamp}\n{body}".encode()
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(cosignature.signature, message)
    except InvalidSignature:
        return False
    return True
