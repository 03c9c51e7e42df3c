"""C2SP tlog-witness `add-checkpoint`: the request body, and the witness's decision.

A witness keeps, per log origin, the size and root it last cosigned. It cosigns a new
checkpoint only if a trusted key of the log signed it and a consistency proof shows it extends
that tree; it answers 404 (unknown log), 403 (no trusted signature), 400 (malformed, or an old
size above the new), 409 (old size not the one it holds, with that size), 422 (the proof does
not verify; or the same size with another root: a fork; or an empty tree's root not the
empty hash).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from store.errors import CheckpointError, ProofError, SignatureError, VerificationError
from store.model.checkpoint import Checkpoint, VerifierKey, parse_checkpoint
from store.model.cosignature import check_note
from store.model.merkle import EMPTY_ROOT, verify_consistency

MAX_PROOF_LINES = 63  # the spec's bound on consistency proof lines
MAX_REQUEST_BYTES = 64 << 10
SIZE_CONTENT_TYPE = "text/x.tlog.size"
_OLD = re.compile(r"old (0|[1-9][0-9]{0,18})", re.ASCII)


class WitnessRefusal(VerificationError):
    """Why the witness will not cosign: an HTTP status and a reason (409: the size it holds)."""

    def __init__(self, status: int, reason: str, size: int | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.size = size


@dataclass(frozen=True, slots=True)
class AddCheckpoint:
    old_size: int
    proof: tuple[bytes, ...]
    note: str


@dataclass(frozen=True, slots=True)
class WitnessedHead:
    """What a witness holds for one log: the tree it last cosigned."""

    size: int
    root: bytes


def request_body(old_size: int, proof: Sequence[bytes], note: str) -> bytes:
    """An add-checkpoint body: `old N`, the proof's hashes in base64, a blank line, the note."""
    lines = [f"old {old_size}", *(base64.b64encode(h).decode("ascii") for h in proof)]
    return ("\n".join(lines) + "\n\n" + note).encode("utf-8")


def parse_request(body: bytes) -> AddCheckpoint:
    """The request, or WitnessRefusal(400) saying what is malformed."""
    if len(body) > MAX_REQUEST_BYTES:
        raise WitnessRefusal(400, f"request is larger than {MAX_REQUEST_BYTES} bytes")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise WitnessRefusal(400, "request is not UTF-8") from None
    head, blank, note = text.partition("\n\n")
    if not blank:
        raise WitnessRefusal(400, "request has no blank line before the checkpoint")
    lines = head.split("\n")
    match = _OLD.fullmatch(lines[0])
    if match is None:
        raise WitnessRefusal(400, f"first line is not 'old <size>': {lines[0][:80]!r}")
    if len(lines) - 1 > MAX_PROOF_LINES:
        raise WitnessRefusal(400, f"more than {MAX_PROOF_LINES} consistency proof lines")
    proof = []
    for number, line in enumerate(lines[1:], 1):
        try:
            node = base64.b64decode(line.encode("ascii"), validate=True)
        except (UnicodeEncodeError, binascii.Error):
            raise WitnessRefusal(400, f"proof line {number} is not base64") from None
        if len(node) != 32:
            raise WitnessRefusal(400, f"proof line {number} is {len(node)} bytes, not 32")
        proof.append(node)
    return AddCheckpoint(int(match[1]), tuple(proof), note)


def decide(request: AddCheckpoint, logs: Mapping[str, Sequence[VerifierKey]],
           held: WitnessedHead | None) -> Checkpoint:
    """The checkpoint to cosign, checked against what the witness holds for its log (None:
    nothing yet); WitnessRefusal otherwise. The caller persists the result atomically with
    the read of `held`."""
    try:
        origin = parse_checkpoint(request.note).checkpoint.origin
    except CheckpointError as exc:
        raise WitnessRefusal(400, f"not a checkpoint: {exc}") from exc
    keys = logs.get(origin)
    if not keys:
        raise WitnessRefusal(404, f"unknown log {origin!r}")
    try:
        checkpoint = check_note(request.note, keys).checkpoint
    except SignatureError as exc:
        raise WitnessRefusal(403, f"not signed by a key of {origin}: {exc}") from exc
    old = request.old_size
    if old > checkpoint.size:
        raise WitnessRefusal(400, f"old size {old} is above the checkpoint's {checkpoint.size}")
    held_size = 0 if held is None else held.size
    if old != held_size:
        raise WitnessRefusal(409, f"old size {old} is not the size {held_size} this witness "
                                  "cosigned last", held_size)
    if checkpoint.size == 0 and checkpoint.root != EMPTY_ROOT:
        raise WitnessRefusal(422, "an empty tree's root must be SHA-256 of nothing")
    if held is not None and old == checkpoint.size:
        if checkpoint.root != held.root:  # tlog-witness: "If they don't match ... 422"
            raise WitnessRefusal(422, f"a fork: size {old} was cosigned with root "
                                      f"{held.root.hex()}, not {checkpoint.root.hex()}")
        if request.proof:
            raise WitnessRefusal(422, "same size: the consistency proof must be empty")
        return checkpoint
    if old == 0:
        if request.proof:
            raise WitnessRefusal(422, "old size 0: the consistency proof must be empty")
        return checkpoint
    assert held is not None
    try:
        verify_consistency(old, checkpoint.size, held.root, checkpoint.root,
                           list(request.proof))
    except ProofError as exc:
        raise WitnessRefusal(422, f"the tree of size {checkpoint.size} is not shown to extend "
                                  f"the one of size {old} this witness cosigned: {exc}") from exc
    return checkpoint
