"""Offline proof bundles in the C2SP tlog-proof format: one text file holding the entry's
index, its RFC 9162 inclusion path and the (cosigned) checkpoint, checkable with no store and
no network against a policy of trusted log and witness keys.

    c2sp.org/tlog-proof@v1
    extra <base64 of the entry>
    index <leaf index>
    <base64 hash, leaf side first> ...

    <the checkpoint note, verbatim>

The format's optional `extra` line carries the log entry itself (the canonical JSON of the
row): unauthenticated on its own, it is bound to the log by hashing to the proven leaf.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass

from store.errors import CheckpointError, ProofError
from store.model.merkle import HASH_SIZE, leaf_hash, verify_inclusion
from store.model.witness_policy import WitnessPolicy

HEADER = "c2sp.org/tlog-proof@v1"
SUFFIX = ".tlog-proof"  # the spec's recommended file extension
MAX_INCLUSION_LINES = 63  # a path in a tree of fewer than 2**63 leaves
_DECIMAL = re.compile(r"0|[1-9][0-9]*", re.ASCII)


@dataclass(frozen=True, slots=True)
class ProofBundle:
    index: int
    inclusion_path: tuple[bytes, ...]
    note: str
    entry: bytes | None  # the `extra` data: this log puts the entry there


def write_bundle(index: int, inclusion_path: Sequence[bytes], note: str,
                 entry: bytes | None) -> str:
    """The tlog-proof text of leaf `index` (its `entry` as extra data) in `note`'s tree."""
    lines = [HEADER]
    if entry is not None:
        lines.append("extra " + base64.b64encode(entry).decode("ascii"))
    lines.append(f"index {index}")
    lines.extend(base64.b64encode(node).decode("ascii") for node in inclusion_path)
    return "\n".join(lines) + "\n\n" + note


def is_bundle(data: bytes) -> bool:
    return data.startswith(HEADER.encode() + b"\n")


def _b64(text: str, what: str) -> bytes:
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error):
        raise ProofError(f"{what} is not base64: {text[:80]!r}") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise ProofError(f"{what} is not canonical base64: {text[:80]!r}")
    return raw


def parse_bundle(text: str) -> ProofBundle:
    """A tlog-proof parsed strictly; the checkpoint's signatures are not checked here."""
    head, blank, note = text.partition("\n\n")
    if not blank:
        raise ProofError("proof has no blank line before its checkpoint")
    lines = head.split("\n")
    if lines[0] != HEADER:
        raise ProofError(f"proof does not start with {HEADER!r}: {lines[0][:80]!r}")
    rest = lines[1:]
    entry = None
    if rest and rest[0].startswith("extra "):
        entry = _b64(rest.pop(0)[len("extra "):], "extra data")
    if not rest or not rest[0].startswith("index "):
        raise ProofError("proof has no 'index N' line after its header")
    index_text = rest.pop(0)[len("index "):]
    if not _DECIMAL.fullmatch(index_text) or len(index_text) > 19:
        raise ProofError(f"index {index_text[:80]!r} is not a decimal below 2**63")
    if len(rest) > MAX_INCLUSION_LINES:
        raise ProofError(f"inclusion proof has {len(rest)} lines, more than "
                         f"{MAX_INCLUSION_LINES}")
    path = []
    for number, line in enumerate(rest):
        node = _b64(line, f"inclusion proof line {number + 1}")
        if len(node) != HASH_SIZE:
            raise ProofError(f"inclusion proof line {number + 1} is {len(node)} bytes, not 32")
        path.append(node)
    return ProofBundle(int(index_text), tuple(path), note, entry)


def check_bundle(text: str, policy: WitnessPolicy) -> str:
    """What a tlog-proof shows, checked against `policy` (a listed log signed the checkpoint,
    the witness quorum cosigned it) and the entry it carries; ProofError or SignatureError
    saying what does not hold."""
    bundle = parse_bundle(text)
    try:
        checked = policy.check(bundle.note)
    except CheckpointError as exc:
        raise type(exc)(f"the proof's checkpoint: {exc}") from exc
    checkpoint = checked.checkpoint
    if bundle.entry is None:
        raise ProofError("proof carries no entry (no 'extra' line): nothing to check it against")
    if bundle.index >= checkpoint.size:
        raise ProofError(f"index {bundle.index} is not in the checkpoint's tree of size "
                         f"{checkpoint.size}")
    try:
        verify_inclusion(bundle.index, checkpoint.size, leaf_hash(bundle.entry),
                         list(bundle.inclusion_path), checkpoint.root)
    except ProofError as exc:
        raise ProofError(f"the entry is not leaf {bundle.index} of the checkpoint's tree: "
                         f"{exc}") from exc
    return (f"leaf {bundle.index} is in the tree of size {checkpoint.size}, root "
            f"{checkpoint.root.hex()} ({checkpoint.origin}); {checked.signed_by}")
