"""A proof file: one record's inclusion proof with the checkpoint it reaches, in one JSON
document (the console's "download proof"), which `core-audit verify-proof` checks offline.

    {"format": "core-audit-proof/1", "proof": {<as `core-audit prove` prints it>},
     "checkpoint": "<the C2SP checkpoint note>"}

The checkpoint inside says which tree the server claimed; an auditor compares its root with
one kept elsewhere (or passes that one as --checkpoint, which then decides).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from store.errors import ProofError
from store.model.checkpoint import Checkpoint

FORMAT = "core-audit-proof/1"
FIELDS = frozenset({"format", "proof", "checkpoint"})


def checkpoint_note(origin: str, size: int, root_hex: str) -> str:
    """The tree head as an unsigned C2SP checkpoint note (the store's origin, or before one
    is chosen its provisional origin: queries.ledger.note_origin)."""
    return Checkpoint(origin=origin, size=size, root=bytes.fromhex(root_hex)).unsigned_note()


def proof_file(proof: Mapping[str, Any], checkpoint_note: str) -> bytes:
    """The file's bytes: UTF-8 JSON, keys in a fixed order, a final newline."""
    document = {"format": FORMAT, "proof": dict(proof), "checkpoint": checkpoint_note}
    return (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def is_proof_file(document: Mapping[str, Any]) -> bool:
    return document.get("format") == FORMAT


def open_proof_file(document: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """(the proof, the checkpoint note) of a proof file; ProofError naming what is wrong."""
    if document.keys() != FIELDS:
        raise ProofError(f"a {FORMAT} file has exactly the keys checkpoint, format, proof; "
                         f"this one has {', '.join(sorted(document))}")
    proof, note = document["proof"], document["checkpoint"]
    if not isinstance(proof, dict):
        raise ProofError("proof is not a JSON object")
    if not isinstance(note, str):
        raise ProofError("checkpoint is not a string (a C2SP checkpoint note)")
    return proof, note
