"""A verify record: the auditor's signed statement that a full `verify` recomputed a tree.

A note in the C2SP signed-note format whose text is a header line, then the checkpoint body
(origin, size, base64 root) of the tree the verify recomputed from the rows; signed with the
auditor's own key. The header keeps it from ever being taken for a checkpoint signed by the
same key (as the C2SP cosignature's `cosignature/v1` line does), so only a full verify's
record makes a later `verify --checkpoint RECORD --record-key KEY` read just what came after.
"""

from __future__ import annotations

from store.errors import CheckpointError, SignatureError
from store.model.checkpoint import (
    Checkpoint,
    NoteSignature,
    SignerKey,
    VerifierKey,
    parse_checkpoint,
)

RECORD_HEADER = "core-audit verified tree/v1\n"


def is_record(text: str) -> bool:
    return text.startswith(RECORD_HEADER)


def record_note(checkpoint: Checkpoint, signer: SignerKey) -> str:
    """The record of `checkpoint`, a tree a full verify recomputed, signed by `signer`."""
    text = RECORD_HEADER + checkpoint.body()
    signature = NoteSignature(signer.name, signer.verifier.key_hash,
                              signer.sign(text.encode()))
    return text + "\n" + signature.line()


def open_record(text: str, verifier: VerifierKey | None) -> Checkpoint:
    """The tree a record names; with `verifier`, only if that key signed exactly this record.
    CheckpointError (SignatureError) says what is wrong."""
    if not is_record(text):
        raise CheckpointError("not a verify record (a checkpoint kept otherwise?): only one "
                              "that `core-audit verify --record` wrote lets verify skip the "
                              "leaves it recomputed")
    parsed = parse_checkpoint(text.removeprefix(RECORD_HEADER))
    if verifier is None:
        return parsed.checkpoint
    for signature in parsed.signatures:
        if signature.name == verifier.name and signature.key_hash == verifier.key_hash:
            if verifier.verify((RECORD_HEADER + parsed.text).encode(), signature.signature):
                return parsed.checkpoint
            raise SignatureError(f"the record's signature by {verifier.name} does not verify: "
                                 "it was changed after the verify wrote it")
    raise SignatureError(f"the record is not signed by key {verifier}: not one this auditor's "
                         "verify wrote")
