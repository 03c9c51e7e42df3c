"""`core-audit verify-proof`: check a `prove` proof against a checkpoint, offline, no store
(the checking itself is `store.model.proofs`, importable as `store.check_proof`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from store.cli.verify import load_checkpoint, read_small_text
from store.errors import CheckpointError, ProofError
from store.model.checkpoint import Checkpoint, open_checkpoint
from store.model.proof_file import is_proof_file, open_proof_file
from store.model.proofs import MAX_PROOF_BYTES, check_proof, read_proof

__all__ = ["ProofError", "check_proof", "verify_proof"]  # the first two for earlier callers

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _read_proof(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_PROOF_BYTES + 1)
    except OSError as exc:
        raise ProofError(f"{path}: cannot read: {exc.strerror}") from exc
    return read_proof(data, str(path))


@click.command("verify-proof")
@click.argument("proof_file", metavar="PROOF.json", type=_FILE)
@click.option("--checkpoint", "checkpoint_file", type=_FILE, metavar="FILE",
              help="The C2SP checkpoint whose tree the proof must reach (required unless "
                   "PROOF.json is a proof file holding one).")
@click.option("--key", type=_FILE, metavar="PREFIX.pub",
              help="Verifier key: the checkpoint must carry its valid signature.")
def verify_proof(proof_file: Path, checkpoint_file: Path | None, key: Path | None) -> None:
    """Check a `core-audit prove` proof against a checkpoint, offline (no store): inclusion of
    an entry in, or consistency of an older tree with, the checkpoint's tree. Exit 1 if not.

    The tree size and root come from the checkpoint (its signature checked with --key),
    never from the proof. PROOF.json may also be a console "download proof" file (format
    core-audit-proof/1: the proof and the checkpoint it reaches); without --checkpoint the
    file's own checkpoint is used, and the output says so: compare its root with one you
    kept. Prints `valid: ...`, or `invalid: REASON` with exit 1.
    """
    try:
        proof = _read_proof(proof_file)
        inside: str | None = None
        if is_proof_file(proof):
            proof, inside = open_proof_file(proof)
        if checkpoint_file is not None:
            checkpoint = load_checkpoint(checkpoint_file, key)
            against = ""
        elif inside is not None:
            checkpoint = _inside_checkpoint(proof_file, inside, key)
            against = (" — against the checkpoint inside the file: compare its root with a "
                       "checkpoint you kept, or pass that one with --checkpoint")
        else:
            raise click.UsageError("--checkpoint is required: this proof holds no checkpoint")
        message = check_proof(proof, checkpoint)
    except click.UsageError:
        raise
    except (click.ClickException, ProofError) as exc:
        text = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
        click.echo(f"invalid: {text}", err=True)
        sys.exit(1)
    click.echo(f"valid: {message}{against}")


def _inside_checkpoint(path: Path, note: str, key: Path | None) -> Checkpoint:
    verifier = None if key is None else read_small_text(key, "verifier key")
    try:
        return open_checkpoint(note, verifier)
    except (CheckpointError, ValueError) as exc:
        raise ProofError(f"{path}: its checkpoint: {exc}") from exc
