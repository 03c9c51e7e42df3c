"""`core-audit verify-proof`: check a `prove` proof against a checkpoint, offline, no store.

The tree size and root always come from the checkpoint: a proof only says how to reach them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from store.cli.verify import load_checkpoint
from store.model.checkpoint import MAX_TREE_SIZE, Checkpoint
from store.model.merkle import digest_from_hex, leaf_hash, verify_consistency, verify_inclusion

MAX_PROOF_BYTES = 64 << 20  # an entry holds a record's verbatim line; this stops a hostile file
MAX_PATH = 128  # RFC 9162 paths of a 2**63 tree: at most 63 (inclusion), 126 (consistency)
INCLUSION_FIELDS = frozenset({"leaf_index", "tree_size", "entry", "leaf_hash",
                              "inclusion_path", "root_hash"})
CONSISTENCY_FIELDS = frozenset({"first", "second", "first_root", "second_root",
                                "consistency_path"})
_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


class ProofError(ValueError):
    """The proof is malformed or does not prove its claim against the checkpoint."""


def _read_proof(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_PROOF_BYTES + 1)
    except OSError as exc:
        raise ProofError(f"{path}: cannot read: {exc.strerror}") from exc
    if len(data) > MAX_PROOF_BYTES:
        raise ProofError(f"{path}: larger than {MAX_PROOF_BYTES} bytes")
    try:
        proof = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # ValueError: huge ints too
        raise ProofError(f"{path}: not a JSON document: {exc}") from exc
    if not isinstance(proof, dict):
        raise ProofError(f"{path}: not a JSON object")
    return proof


def _size(proof: dict[str, Any], name: str) -> int:
    value = proof[name]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TREE_SIZE:
        raise ProofError(f"{name} is not an integer in [0, 2**63): {str(value)[:80]}")
    return value


def _digest(proof: dict[str, Any], name: str) -> bytes:
    try:
        return digest_from_hex(proof[name], name)
    except ValueError as exc:
        raise ProofError(str(exc)) from exc


def _path(proof: dict[str, Any], name: str) -> list[bytes]:
    path = proof[name]
    if not isinstance(path, list) or len(path) > MAX_PATH:
        raise ProofError(f"{name} is not a list of at most {MAX_PATH} hashes")
    try:
        return [digest_from_hex(node, f"{name}[{i}]") for i, node in enumerate(path)]
    except ValueError as exc:
        raise ProofError(str(exc)) from exc


def _check_inclusion(proof: dict[str, Any], checkpoint: Checkpoint) -> str:
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
    if not verify_inclusion(index, checkpoint.size, leaf, path, checkpoint.root):
        raise ProofError(f"the path does not lead from leaf {index} to the checkpoint's root")
    return (f"leaf {index} is in the tree of size {checkpoint.size}, root "
            f"{checkpoint.root.hex()} ({checkpoint.origin})")


def _check_consistency(proof: dict[str, Any], checkpoint: Checkpoint) -> str:
    first, second = _size(proof, "first"), _size(proof, "second")
    first_root, second_root = _digest(proof, "first_root"), _digest(proof, "second_root")
    path = _path(proof, "consistency_path")
    if second != checkpoint.size or second_root != checkpoint.root:
        raise ProofError(f"the proof is to the tree of size {second}, root "
                         f"{second_root.hex()}; the checkpoint is size {checkpoint.size}, "
                         f"root {checkpoint.root.hex()}")
    if not verify_consistency(first, checkpoint.size, first_root, checkpoint.root, path):
        raise ProofError(f"the path does not show the tree of size {checkpoint.size} extends "
                         f"the tree of size {first}, root {first_root.hex()}")
    return (f"the tree of size {checkpoint.size}, root {checkpoint.root.hex()} "
            f"({checkpoint.origin}) extends the tree of size {first}, root {first_root.hex()}")


def check_proof(proof: dict[str, Any], checkpoint: Checkpoint) -> str:
    """What the proof shows about the checkpoint's tree; ProofError when it shows nothing."""
    if proof.keys() == INCLUSION_FIELDS:
        return _check_inclusion(proof, checkpoint)
    if proof.keys() == CONSISTENCY_FIELDS:
        return _check_consistency(proof, checkpoint)
    raise ProofError(f"not an inclusion proof ({', '.join(sorted(INCLUSION_FIELDS))}) nor a "
                     f"consistency proof ({', '.join(sorted(CONSISTENCY_FIELDS))})")


@click.command("verify-proof")
@click.argument("proof_file", metavar="PROOF.json", type=_FILE)
@click.option("--checkpoint", "checkpoint_file", type=_FILE, required=True, metavar="FILE",
              help="The C2SP checkpoint whose tree the proof must reach.")
@click.option("--key", type=_FILE, metavar="PREFIX.pub",
              help="Verifier key: the checkpoint must carry its valid signature.")
def verify_proof(proof_file: Path, checkpoint_file: Path, key: Path | None) -> None:
    """Check a `core-audit prove` proof against a checkpoint, offline (no store): inclusion of
    an entry in, or consistency of an older tree with, the checkpoint's tree. Exit 1 if not.

    The tree size and root come from the checkpoint (its signature checked with --key),
    never from the proof. Prints `valid: ...`, or `invalid: REASON` with exit 1.
    """
    try:
        checkpoint = load_checkpoint(checkpoint_file, key)
        message = check_proof(_read_proof(proof_file), checkpoint)
    except (click.ClickException, ProofError) as exc:
        text = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
        click.echo(f"invalid: {text}", err=True)
        sys.exit(1)
    click.echo(f"valid: {message}")
