"""`core-audit verify-proof`: check a `prove` proof against a checkpoint, offline, no store
(the checking itself is `store.model.proofs`, importable as `store.check_proof`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from store.cli.verify import load_checkpoint
from store.errors import ProofError
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
