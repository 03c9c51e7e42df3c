"""Asking a C2SP tlog-witness to cosign a checkpoint: POST add-checkpoint with a consistency
proof from the size the witness holds (learnt from a 409 when the guess is wrong), and the
returned cosignature checked before it is kept."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable

from store.errors import CheckpointError, VerificationError
from store.model.checkpoint import NoteSignature, VerifierKey, parse_checkpoint
from store.model.cosignature import cosignature_time, is_witness_line
from store.model.witness import request_body

TIMEOUT = 30.0
MAX_RESPONSE_BYTES = 64 << 10


class WitnessError(VerificationError):
    """A witness did not cosign: unreachable, refused, or answered something else."""


def _post(url: str, body: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "text/plain; charset=utf-8"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return int(response.status), response.read(MAX_RESPONSE_BYTES)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(MAX_RESPONSE_BYTES)
    except (urllib.error.URLError, OSError) as exc:
        raise WitnessError(f"witness {url}: unreachable: {exc}") from exc


def request_cosignature(base_url: str, witness: VerifierKey, note: str,
                        consistency: Callable[[int], list[bytes]], old_size: int = 0
                        ) -> NoteSignature:
    """`witness`'s cosignature of the signed `note`; `consistency(old)` gives the proof from
    a size the witness holds to the note's size."""
    url = base_url.rstrip("/") + "/add-checkpoint"
    parsed = parse_checkpoint(note)
    size = parsed.checkpoint.size
    for _ in range(2):  # a 409 says which size the witness holds: one retry from there
        proof = consistency(old_size) if 0 < old_size < size else []
        status, answer = _post(url, request_body(old_size, proof, note))
        text = answer.decode("utf-8", "replace")
        if status == 409 and text.strip().isdigit() and int(text) == old_size:
            raise WitnessError(f"witness {witness.name} refused (409): it cosigned another "
                               f"tree of {old_size} leaves for {parsed.checkpoint.origin}: "
                               "this checkpoint is not consistent with what it saw (a fork)")
        if status == 409 and text.strip().isdigit():
            held = int(text)
            if held > size:
                raise WitnessError(f"witness {witness.name} holds a tree of {held} leaves, "
                                   f"larger than this checkpoint's {size}: a rollback")
            old_size = held
            continue
        if status != 200:
            raise WitnessError(f"witness {witness.name} refused ({status}): "
                               f"{text.strip()[:200]}")
        try:
            lines = parse_checkpoint(note + text).signatures[len(parsed.signatures):]
        except CheckpointError as exc:
            raise WitnessError(f"witness {witness.name} answered no signature lines: "
                               f"{exc}") from exc
        for line in lines:
            if is_witness_line(line, witness):
                cosignature_time(line, parsed.text, witness)  # SignatureError if forged
                return line
        raise WitnessError(f"witness {witness.name} answered no cosignature by its key")
    raise WitnessError(f"witness {witness.name} keeps answering 409 (size it holds changed)")
