"""Checking a `core-audit prove` proof (JSON) against a checkpoint, offline, without a store.

The tree size and root always come from the checkpoint: a proof only says how to reach them.
`check_proof` says what the proof shows, or raises `ProofError` saying what does not hold.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from store.errors import ProofError
from store.model.checkpoint import MAX_TREE_SIZE, Checkpoint
from store.model.merkle import digest_from_hex, leaf_hash, verify_consistency, verify_inclusion

MAX_PROOF_BYTES = 64 << 20  # an entry holds a record's verbatim line; this stops a hostile file
MAX_PATH = 128  # RFC 9162 paths of a 2**63 tree: at most 63 (inclusion), 126 (consistency)
INCLUSION_FIELDS = frozenset({"leaf_index", "tree_size", "entry", "leaf_hash",
                              "inclusion_path", "root_hash"})
CONSISTENCY_FIELDS = frozenset({"first", "second", "first_root", "second_root",
                                "consistency_path"})


def read_proof(data: bytes, where: str = "proof") -> dict[str, Any]:
    """A proof document from its bytes (UTF-8 JSON, one object, at most MAX_PROOF_BYTES)."""
    if len(data) > MAX_PROOF_BYTES:
        raise ProofError(f"{where}: larger than {MAX_PROOF_BYTES} bytes")
    try:
        proof = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # ValueError: huge ints too
        raise ProofError(f"{where}: not a JSON document: {exc}") from exc
    if not isinstance(proof, dict):
        raise ProofError(f"{where}: not a JSON object")
    return proof


def _size(proof: Mapping[str, Any], name: str) -> int:
    value = proof[name]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TREE_SIZE:
        raise ProofError(f"{name} is not an integer in [0, 2**63): {str(value)[:80]}")
    return value


def _digest(proof: Mapping[str, Any], name: str) -> bytes:
    try:
        return digest_from_hex(proof[name], name)
    except ValueError as exc:
        raise ProofError(str(exc)) from exc


def _path(proof: Mapping[str, Any], name: str) -> list[bytes]:
    path = proof[name]
    if not isinstance(path, list) or len(path) > MAX_PATH:
        raise ProofError(f"{name} is not a list of at most {MAX_PATH} hashes")
    try:
        return [digest_from_hex(node, f"{name}[{i}]") for i, node in enumerate(path)]
    except ValueError as exc:
        raise ProofError(str(exc)) from exc


def _holds(verify: Callable[[], None], claim: str) -> None:
    """`verify()`, its ProofError prefixed with the claim it refutes."""
    try:
        verify()
    except ProofError as exc:
        raise ProofError(f"{claim}: {exc}") from exc


def _check_inclusion(proof: Mapping[str, Any], checkpoint: Checkpoint) -> str:
    index, size = _size(proof, "leaf_index"), _size(proof, "tree_size")
    leaf, root = _digest(proof, "leaf_hash"), _digest(proof, "root_hash")
    path = _path(proof, "inclusion_path")
    entry = proof["entry"]
    if not isinstance(entry, str):
        raise ProofError("entry is not a string")
    try:
        entry_bytes = entry.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate escape
        raise ProofError("entry is not valid Unicode text") from exc
    if size != checkpoint.size or root != checkpoint.root:
        raise ProofError(f"the proof is for the tree of size {size}, root {root.hex()}; the "
                         f"checkpoint is size {checkpoint.size}, root {checkpoint.root.hex()}")
    if leaf_hash(entry_bytes) != leaf:
        raise ProofError("leaf_hash is not SHA-256(0x00 ‖ entry)")
    _holds(lambda: verify_inclusion(index, checkpoint.size, leaf, path, checkpoint.root),
           f"the path does not lead from leaf {index} to the checkpoint's root")
    return (f"leaf {index} is in the tree of size {checkpoint.size}, root "
            f"{checkpoint.root.hex()} ({checkpoint.origin})")


def _check_consistency(proof: Mapping[str, Any], checkpoint: Checkpoint) -> str:
    first, second = _size(proof, "first"), _size(proof, "second")
    first_root, second_root = _digest(proof, "first_root"), _digest(proof, "second_root")
    path = _path(proof, "consistency_path")
    if second != checkpoint.size or second_root != checkpoint.root:
        raise ProofError(f"the proof is to the tree of size {second}, root "
                         f"{second_root.hex()}; the checkpoint is size {checkpoint.size}, "
                         f"root {checkpoint.root.hex()}")
    _holds(lambda: verify_consistency(first, checkpoint.size, first_root, checkpoint.root, path),
           f"the path does not show the tree of size {checkpoint.size} extends the tree of "
           f"size {first}, root {first_root.hex()}")
    return (f"the tree of size {checkpoint.size}, root {checkpoint.root.hex()} "
            f"({checkpoint.origin}) extends the tree of size {first}, root {first_root.hex()}")


def check_proof(proof: Mapping[str, Any], checkpoint: Checkpoint) -> str:
    """What the proof shows about the checkpoint's tree; ProofError when it shows nothing."""
    if proof.keys() == INCLUSION_FIELDS:
        return _check_inclusion(proof, checkpoint)
    if proof.keys() == CONSISTENCY_FIELDS:
        return _check_consistency(proof, checkpoint)
    raise ProofError(f"not an inclusion proof ({', '.join(sorted(INCLUSION_FIELDS))}) nor a "
                     f"consistency proof ({', '.join(sorted(CONSISTENCY_FIELDS))})")
