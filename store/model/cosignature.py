"""C2SP tlog-cosignature (Ed25519, cosignature/v1) and checking a whole checkpoint note: the
log's signatures (any listed key, several during a key rotation) and witnesses' cosignatures.

A cosignature line is `— <witness name> base64(key hash ‖ u64 big-endian timestamp ‖ Ed25519
signature)`, the key hash over type 0x04, the signature over
"cosignature/v1\\ntime <timestamp>\\n" followed by the checkpoint's body (extension lines
included: C2SP tlog-cosignature, "if present MUST be included in the cosigned message").

A witness is known by its Ed25519 public key, given as a type 0x04 verifier key (the
cosignature/v1 form tlog-cosignature describes) or as a standard type 0x01 one (signed-note's
Ed25519 vkey, which witnesses also publish): either way its cosignature/v1 lines carry the key
ID over 0x04; with a 0x01 key, a plain Ed25519 note signature line (key ID over 0x01, no
timestamp) is accepted too, as older witnesses wrote.
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
    key_hash,
    parse_checkpoint,
)

COSIGNATURE_HEADER = "cosignature/v1"
MAX_TIMESTAMP = (1 << 63) - 1  # the spec's bound on timestamped_signature.timestamp
_TIMESTAMP = struct.Struct(">Q")


def cosigned_message(body: str, timestamp: int) -> bytes:
    """What a cosignature/v1 signs: header line, time line, then the checkpoint body."""
    return f"{COSIGNATURE_HEADER}\ntime {timestamp}\n{body}".encode()


def cosigner_key_hash(witness: VerifierKey) -> bytes:
    """The key ID of `witness`'s cosignature/v1 lines: over type 0x04, whichever type its
    verifier key was given as."""
    return key_hash(witness.name, witness.public_key, COSIGNATURE_V1)


def is_witness_line(line: NoteSignature, witness: VerifierKey) -> bool:
    """Whether `line` is by `witness`: its name and a key ID of its key (0x04; with a type
    0x01 key also the plain Ed25519 note signature's)."""
    return line.name == witness.name and (
        line.key_hash == cosigner_key_hash(witness)
        or (witness.key_type == ED25519 and line.key_hash == witness.key_hash))


def cosign(body: str, witness: SignerKey, timestamp: int) -> NoteSignature:
    """`witness`'s cosignature/v1 of the checkpoint body `body` at POSIX time `timestamp` (its
    key ID over 0x04, whether the key was made as type 0x04 or as a plain 0x01 Ed25519 key)."""
    if not 0 <= timestamp <= MAX_TIMESTAMP:
        raise CheckpointError(f"cosignature timestamp {timestamp} is not in [0, 2**63)")
    signature = witness.sign(cosigned_message(body, timestamp))
    return NoteSignature(witness.name, cosigner_key_hash(witness.verifier),
                         _TIMESTAMP.pack(timestamp) + signature)


def cosignature_time(line: NoteSignature, body: str, witness: VerifierKey) -> int:
    """The timestamp of `line`, a cosignature by `witness` of `body` (0 for a plain Ed25519
    note signature by a type 0x01 witness key, which has none); SignatureError if it is not
    one."""
    if line.name != witness.name:
        raise SignatureError(f"line by {line.name} is not by witness {witness.name}")
    if line.key_hash != cosigner_key_hash(witness):
        if witness.key_type == ED25519 and line.key_hash == witness.key_hash:
            if not witness.verify(body.encode(), line.signature):
                raise SignatureError(f"signature by witness {witness.name} does not verify: "
                                     "the checkpoint was changed after signing, or it is not "
                                     "this witness's")
            return 0
        raise SignatureError(f"line by {line.name} has key ID {line.key_hash.hex()}, not "
                             f"witness key {witness}'s")
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
    public_key: bytes = b""  # the witness's Ed25519 key: a quorum counts keys, not names


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


def witness_lines(signatures: Sequence[NoteSignature], witness: VerifierKey
                  ) -> list[NoteSignature]:
    """The lines of `signatures` by `witness` (is_witness_line), in order."""
    return [s for s in signatures if is_witness_line(s, witness)]


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
        if witness.key_type not in (COSIGNATURE_V1, ED25519):
            raise SignatureError(f"witness key {witness.name} is not an Ed25519 key")
        lines = witness_lines(parsed.signatures, witness)
        if lines:
            cosigners.append(Cosigned(witness.name,
                                      cosignature_time(lines[0], parsed.text, witness),
                                      witness.public_key))
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
