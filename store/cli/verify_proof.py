"""`core-audit verify-proof`: check a `prove` proof against a checkpoint, offline, no store
or a C2SP tlog-proof bundle (the checking itself is `store.model.proofs`, importable as
`store.check_proof`, and `store.model.proof_bundle`)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click

from store.cli.verify import build_policy, load_checkpoint, policy_options
from store.errors import CheckpointError, ProofError, VerificationError
from store.model.checkpoint import Checkpoint
from store.model.proof_bundle import check_bundle, is_bundle
from store.model.proof_file import is_proof_file, open_proof_file
from store.model.proofs import MAX_PROOF_BYTES, check_proof, read_proof
from store.model.since_proof import check_since, is_since_proof
from store.model.witness_policy import WitnessPolicy, checkpoint_under

__all__ = ["ProofError", "check_proof", "verify_proof"]  # the first two for earlier callers

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _read_bytes(path: Path) -> bytes:
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_PROOF_BYTES + 1)
    except OSError as exc:
        raise ProofError(f"{path}: cannot read: {exc.strerror}") from exc
    if len(data) > MAX_PROOF_BYTES:
        raise ProofError(f"{path}: larger than {MAX_PROOF_BYTES} bytes")
    return data


def _text(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProofError(f"{path}: not UTF-8 text") from None


@click.command("verify-proof")
@click.argument("proof_file", metavar="PROOF", type=_FILE)
@click.option("--checkpoint", "checkpoint_file", type=_FILE, metavar="FILE",
              help="The C2SP checkpoint whose tree a JSON proof must reach (required unless "
                   "PROOF is a proof file or a .tlog-proof bundle holding one).")
@policy_options
@click.option("--records", "records_file", type=_FILE, metavar="EXPORT.jsonl",
              help="With an `export --since N --proof FILE` proof: the export's JSONL, "
                   "checked to be exactly the leaves of its table between the two trees.")
@click.option("--consistency-only", is_flag=True,
              help="Check the proof against the checkpoint with no key: says only that the "
                   "proof and the checkpoint agree, not who vouches for the checkpoint.")
def verify_proof(proof_file: Path, checkpoint_file: Path | None, keys: tuple[Path, ...],
                 witness_keys: tuple[str, ...], quorum: int | None,
                 policy_file: Path | None, records_file: Path | None,
                 consistency_only: bool) -> None:
    """Check a `core-audit prove` proof, offline (no store, no network): a JSON proof against
    --checkpoint (inclusion of an entry in, or consistency of an older tree with, its tree),
    or a C2SP tlog-proof bundle (`prove --bundle`) against the keys given. Exit 1 if not.

    The tree size and root come from the checkpoint, never from the proof; --key (or
    --policy) checks who signed it and that the witness quorum cosigned it. A bundle needs
    --key or --policy: its checkpoint is worth only its signatures. PROOF may also be a
    console "download proof" file (format core-audit-proof/1: the proof and the checkpoint
    it reaches); without --checkpoint the file's own checkpoint is used, and the output says
    so: compare its root with one you kept. Prints `valid: ...`, or `invalid: REASON` with
    exit 1.

    Nothing but a key authenticates a checkpoint: without --key or --policy the command
    refuses (exit 1), unless --consistency-only asks for the proof checked against the
    checkpoint alone (the output then says nothing vouches for it). The log key's name must
    be the checkpoint's origin (C2SP tlog-policy).
    """
    policy = build_policy(keys, witness_keys, quorum, policy_file)
    if consistency_only and policy is not None:
        raise click.UsageError("--consistency-only checks without keys: drop --key/--policy")
    if policy is None and not consistency_only:
        click.echo("invalid: nothing authenticates the checkpoint: give the log's key (--key) "
                   "or a --policy; --consistency-only checks the proof against the checkpoint "
                   "alone, vouching for nothing", err=True)
        sys.exit(1)
    against = ""
    try:
        data = _read_bytes(proof_file)
        if is_bundle(data):
            if checkpoint_file is not None or records_file is not None:
                raise click.UsageError("a tlog-proof bundle carries its checkpoint and its "
                                       "entry: drop --checkpoint and --records")
            if policy is None:
                raise ProofError("a tlog-proof bundle needs --key or --policy: its "
                                 "checkpoint is only as good as its signatures")
            message = check_bundle(_text(data, proof_file), policy)
        else:
            proof = read_proof(data, str(proof_file))
            inside: str | None = None
            if is_proof_file(proof):
                proof, inside = open_proof_file(proof)
            if checkpoint_file is not None:
                checkpoint, signed_by = load_checkpoint(checkpoint_file, policy)
            elif inside is not None:
                checkpoint, signed_by = _inside_checkpoint(proof_file, inside, policy)
                against = (" — against the checkpoint inside the file: compare its root with a "
                           "checkpoint you kept, or pass that one with --checkpoint")
            else:
                raise click.UsageError("--checkpoint is required: this proof holds no "
                                       "checkpoint")
            if is_since_proof(proof):
                from store.db.schema.record_kinds import LATE_COLUMNS

                message = check_since(proof, checkpoint, None if records_file is None
                                      else _lines(records_file), LATE_COLUMNS)
            elif records_file is not None:
                raise click.UsageError("--records goes with a proof `export --since N "
                                       "--proof FILE` wrote")
            else:
                message = check_proof(proof, checkpoint)
            message += f"; {signed_by}" if signed_by else ""
            if policy is None:
                message += ("; consistency only: no key checked, nothing vouches for the "
                            "checkpoint")
    except click.UsageError:
        raise
    except (click.ClickException, VerificationError) as exc:
        text = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
        click.echo(f"invalid: {text}", err=True)
        sys.exit(1)
    click.echo(f"valid: {message}{against}")


def _lines(path: Path) -> Iterator[bytes]:
    try:
        with path.open("rb") as stream:
            yield from stream
    except OSError as exc:
        raise ProofError(f"{path}: cannot read: {exc.strerror}") from exc


def _inside_checkpoint(path: Path, note: str, policy: WitnessPolicy | None
                       ) -> tuple[Checkpoint, str]:
    try:
        return checkpoint_under(policy, note)
    except (CheckpointError, ValueError) as exc:
        raise ProofError(f"{path}: its checkpoint: {exc}") from exc
