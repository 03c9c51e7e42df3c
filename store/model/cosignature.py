"""C2SP tlog-cosignature (Ed25519, cosignature/v1) and checking a whole checkpoint note: the
log's signatures (any listed key, several during a key rotation) and witnesses' cosignatures.

A cosignature line is `— <witness name> base64(key hash ‖ u64 big-endian timestamp ‖ Ed25519
signature)`, the key hash over type 0x04, the signature over
"cosignature/v1\\ntime <timestamp>\\n" followed by the checkpoint's body.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from store.errors import CheckpointError, SignatureError
from store.model.checkpoint import (
    COSIGNATURE_V1,
    ED25519,
    Checkpoint,
    NoteSignature,
    SignerKey,
    VerifierKey,
    parse_checkpoint,
)

COSIGNATURE_HEADER = "cosignature/v1"
MAX_TIMESTAMP = (1 << 63) - 1  # the spec's bound on timestamped_signature.timestamp
_TIMESTAMP = struct.Struct(">Q")


def cosigned_message(body: str, timestamp: int) -> bytes:
    """What a cosignature/v1 signs: header line, time line, then the checkpoint body."""
    return f"{COSIGNATURE_HEADER}\ntime {timestamp}\n{body}".encode()


def cosign(body: str, witness: SignerKey, timestamp: int) -> NoteSignature:
    """`witness`'s cosignature/v1 of the checkpoint body `body` at POSIX time `timestamp`."""
    if witness.key_type != COSIGNATURE_V1:
        raise CheckpointError(f"key {witness.name} is not a witness's cosigning key (type 0x04)")
    if not 0 <= timestamp <= MAX_TIMESTAMP:
        raise CheckpointError(f"cosignature timestamp {timestamp} is not in [0, 2**63)")
    signature = witness.sign(cosigned_message(body, timestamp))
    return NoteSignature(witness.name, witness.verifier.key_hash,
                         _TIMESTAMP.pack(timestamp) + signature)


def cosignature_time(line: NoteSignature, body: str, witness: VerifierKey) -> int:
    """The timestamp of `line`, a cosignature by `witness` of `body`; SignatureError if it is
    not one."""
    blob = line.signature
    if len(blob) != 8 + 64:
        raise SignatureError(f"cosignature by {witness.name} is {len(blob)} bytes after its key "
                             "hash, not 72 (timestamp and Ed25519 signature)")
    timestamp = int.from_bytes(blob[:8], "big")
    if timestamp > MAX_TIMESTAMP:
        raise SignatureError(f"cosignature by {witness.name} has timestamp {timestamp} >= 2**63")
    if not witness.verify(cosigned_message(body, timestamp), blob[8:]):
        raise SignatureError(f"cosignature by {witness.name} does not verify: the checkpoint "
                             "was changed after cosigning, or it is not this witness's")
    return timestamp


@dataclass(frozen=True, slots=True)
class Cosigned:
    """A witness whose cosignature verified: its key name and when it cosigned."""

    witness: str
    timestamp: int


@dataclass(frozen=True, slots=True)
class CheckedCheckpoint:
    """A checkpoint note whose signatures were checked: which log keys signed it (at least
    one) and which known witnesses cosigned it."""

    checkpoint: Checkpoint
    log_signers: tuple[VerifierKey, ...]
    cosigners: tuple[Cosigned, ...]

    @property
    def signed_by(self) -> str:
        """'log key a, b; cosigned by w1, w2' for a person to read."""
        logs = ", ".join(str(k) for k in self.log_signers)
        witnesses = ", ".join(c.witness for c in self.cosigners) or "no witness"
        return f"signed by {logs}; cosigned by {witnesses}"


def _lines_of(signatures: Sequence[NoteSignature], key: VerifierKey) -> list[NoteSignature]:
    return [s for s in signatures if s.name == key.name and s.key_hash == key.key_hash]


def check_note(text: str, log_keys: Sequence[VerifierKey],
               witness_keys: Sequence[VerifierKey] = ()) -> CheckedCheckpoint:
    """The checkpoint in `text` if at least one of `log_keys` signed exactly its text, with
    the cosignatures of `witness_keys` it carries. A line of a listed key that does not
    verify is refused (as golang.org/x/mod/sumdb/note does); lines of other keys are ignored.
    Whether enough witnesses cosigned is the policy's question (`WitnessPolicy.check`)."""
    if not log_keys:
        raise SignatureError("no log verifier key given to check the checkpoint with")
    parsed = parse_checkpoint(text)
    signers = []
    for key in log_keys:
        if key.key_type != ED25519:
            raise SignatureError(f"key {key.name} is a witness's cosigning key (type 0x04), "
                                 "not a log's verifier key")
        lines = _lines_of(parsed.signatures, key)
        if not lines:
            continue
        if not key.verify(parsed.text.encode(), lines[0].signature):
            raise SignatureError(f"signature by {key.name} does not verify: the checkpoint was "
                                 "changed after signing, or the signature is not this key's")
        signers.append(key)
    if not signers:
        names = ", ".join(s.name for s in parsed.signatures) or "nobody"
        which = (f"key {log_keys[0]}" if len(log_keys) == 1 else
                 f"any log key given ({', '.join(str(k) for k in log_keys)})")
        raise SignatureError(f"checkpoint is not signed by {which}; its signature lines are "
                             f"by {names}")
    cosigners = []
    for witness in witness_keys:
        if witness.key_type != COSIGNATURE_V1:
            raise SignatureError(f"witness key {witness.name} is not a cosigning key (type 0x04)")
        lines = _lines_of(parsed.signatures, witness)
        if lines:
            cosigners.append(Cosigned(witness.name,
                                      cosignature_time(lines[0], parsed.text, witness)))
    return CheckedCheckpoint(parsed.checkpoint, tuple(signers), tuple(cosigners))


def add_signature_lines(note: str, lines: Sequence[NoteSignature]) -> str:
    """`note` with `lines` appended, skipping a key (name and hash) it already carries."""
    parsed = parse_checkpoint(note)
    have = {(s.name, s.key_hash) for s in parsed.signatures}
    extra = []
    for line in lines:
        if (line.name, line.key_hash) not in have:
            have.add((line.name, line.key_hash))
            extra.append(line.line())
    return note + "".join(extra)
