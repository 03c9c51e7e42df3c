"""A verify record: the auditor's signed statement that a full `verify` recomputed a tree.

A note in the C2SP signed-note format whose text is a header line, one `derived` line per
derived table (its name, then its rows' count and column sums under the tree:
store.db.verify.derived_record), then the checkpoint body (origin, size, base64 root) of the
tree the verify recomputed from the rows; signed with the auditor's own key. The header
keeps it from ever being taken for a checkpoint signed by the same key (as the C2SP
cosignature's `cosignature/v1` line does), so only a full verify's record makes a later
`verify --checkpoint RECORD --record-key KEY` read just what came after.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from store.errors import CheckpointError, SignatureError
from store.model.checkpoint import (
    Checkpoint,
    NoteSignature,
    SignerKey,
    VerifierKey,
    parse_checkpoint,
)

RECORD_HEADER = "core-audit verified tree/v2\n"
# Written before the derived tables' sums: read still, refused by an incremental verify.
RECORD_HEADER_V1 = "core-audit verified tree/v1\n"
_DERIVED = "derived "
_TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_MAX_SUMS = 64


def is_record(text: str) -> bool:
    return text.startswith((RECORD_HEADER, RECORD_HEADER_V1))


def _derived_lines(derived: Mapping[str, Sequence[int]]) -> str:
    return "".join(f"{_DERIVED}{table} {' '.join(str(n) for n in sums)}\n"
                   for table, sums in sorted(derived.items()))


def record_note(checkpoint: Checkpoint, signer: SignerKey,
                derived: Mapping[str, Sequence[int]] | None = None) -> str:
    """The record of `checkpoint`, a tree a full verify recomputed, with the sums of the
    derived tables' rows under it, signed by `signer`."""
    text = RECORD_HEADER + _derived_lines(derived or {}) + checkpoint.body()
    signature = NoteSignature(signer.name, signer.verifier.key_hash,
                              signer.sign(text.encode()))
    return text + "\n" + signature.line()


def _parse_derived(text: str) -> tuple[dict[str, tuple[int, ...]], str]:
    """The `derived` lines at the start of `text`, and the rest."""
    derived: dict[str, tuple[int, ...]] = {}
    while text.startswith(_DERIVED):
        line, _, text = text.partition("\n")
        name, *numbers = line.removeprefix(_DERIVED).split(" ")
        if (not _TABLE_NAME.fullmatch(name) or name in derived or not numbers
                or len(numbers) > _MAX_SUMS or not all(n.isdigit() and len(n) <= 30
                                                       for n in numbers)):
            raise CheckpointError(f"record line {line[:80]!r} is not 'derived TABLE N...'")
        derived[name] = tuple(int(n) for n in numbers)
    return derived, text


def open_record(text: str, verifier: VerifierKey | None) -> Checkpoint:
    """The tree a record names; with `verifier`, only if that key signed exactly this record.
    CheckpointError (SignatureError) says what is wrong."""
    return open_record_sums(text, verifier)[0]


def open_record_sums(text: str, verifier: VerifierKey | None
                     ) -> tuple[Checkpoint, dict[str, tuple[int, ...]]]:
    """open_record, and the derived tables' sums it keeps (none in a v1 record)."""
    if not is_record(text):
        raise CheckpointError("not a verify record (a checkpoint kept otherwise?): only one "
                              "that `core-audit verify --record` wrote lets verify skip the "
                              "leaves it recomputed")
    header = RECORD_HEADER if text.startswith(RECORD_HEADER) else RECORD_HEADER_V1
    derived, rest = _parse_derived(text.removeprefix(header))
    parsed = parse_checkpoint(rest)
    signed = header + _derived_lines(derived) + parsed.text
    if verifier is None:
        return parsed.checkpoint, derived
    for signature in parsed.signatures:
        if signature.name == verifier.name and signature.key_hash == verifier.key_hash:
            if verifier.verify(signed.encode(), signature.signature):
                return parsed.checkpoint, derived
            raise SignatureError(f"the record's signature by {verifier.name} does not verify: "
                                 "it was changed after the verify wrote it")
    raise SignatureError(f"the record is not signed by key {verifier}: not one this auditor's "
                         "verify wrote")
