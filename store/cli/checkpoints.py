"""`core-audit checkpoint` (issue a checkpoint: printed, and kept when signed) and
`core-audit checkpoints` (the kept ones)."""

from __future__ import annotations

from pathlib import Path

import click
import orjson

from store.cli.options import db_option, open_store
from store.cli.verify import read_small_text
from store.db.log.kept_checkpoints import KeptCheckpoint, kept_checkpoints
from store.errors import CheckpointError, StoreError
from store.model.checkpoint import SignerKey, VerifierKey

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
DEFAULT_LIST = 20


def load_signer(path: Path) -> SignerKey:
    try:
        return SignerKey.parse(read_small_text(path, "signer key").strip())
    except CheckpointError as exc:
        raise click.ClickException(f"{path}: {exc}") from exc


def load_verifier(text_or_path: str, what: str = "verifier key") -> VerifierKey:
    """A verifier key given inline (`name+hash+base64`) or as a file holding one."""
    path = Path(text_or_path)
    text = read_small_text(path, what) if "+" not in text_or_path and path.is_file() \
        else text_or_path
    try:
        return VerifierKey.parse(text.strip())
    except CheckpointError as exc:
        raise click.ClickException(f"{what} {text_or_path[:80]!r}: {exc}") from exc


def _as_json(kept: KeptCheckpoint) -> dict[str, object]:
    return {"checkpoint_id": kept.checkpoint_id, "tree_size": kept.tree_size,
            "root_hash": kept.root_hash, "signers": list(kept.signers),
            "cosigners": list(kept.cosigners), "note": kept.note}


@click.command()
@db_option
@click.option("--key", "keys", type=_FILE, multiple=True, metavar="PREFIX.key",
              help="Sign with this signer key and keep the checkpoint in the store; repeat "
                   "while rotating keys (each signs).")
@click.option("--origin", default=None, metavar="O",
              help="The log's origin line; the store keeps its first one and refuses another.")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"origin", "tree_size", "root_hash", "note"} (note: the checkpoint).')
def checkpoint(db: str | None, keys: tuple[Path, ...], origin: str | None,
               as_json: bool) -> None:
    """Print the newest tree head as a C2SP tlog-checkpoint. Signed (--key), it is also kept
    in the store (`core-audit checkpoints`, served at /log/checkpoint); keep it elsewhere too,
    and later `verify --checkpoint` that the store still extends it."""
    signers = [load_signer(path) for path in keys]
    with open_store(db) as store:
        try:
            if signers:
                kept = store.keep_checkpoint(signers, origin)
                head_origin, size, root, note = (store.origin(), kept.tree_size,
                                                 kept.root_hash, kept.note)
            else:
                head = store.checkpoint(origin)
                head_origin, size, root, note = (head.origin, head.size, head.root.hex(),
                                                 head.unsigned_note())
        except (StoreError, CheckpointError) as exc:
            raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(orjson.dumps({"origin": head_origin, "tree_size": size,
                                 "root_hash": root, "note": note}).decode())
        return
    click.echo(note, nl=False)


@click.command()
@db_option
@click.option("--limit", type=click.IntRange(1, 10_000), default=DEFAULT_LIST,
              show_default=True, metavar="N", help="At most N, newest first.")
@click.option("--json", "as_json", is_flag=True,
              help='Print JSONL: {"checkpoint_id", "tree_size", "root_hash", "signers", '
                   '"cosigners", "note"} per kept checkpoint.')
def checkpoints(db: str | None, limit: int, as_json: bool) -> None:
    """List the signed checkpoints this store issued and kept, newest first, with who signed
    and which witnesses cosigned; `verify` checks the store extends every one."""
    with open_store(db, read_only=True) as store, store.engine.connect() as connection:
        found = kept_checkpoints(connection, limit=limit)
    for kept in found:
        if as_json:
            click.echo(orjson.dumps(_as_json(kept)).decode())
        else:
            witnesses = ", ".join(kept.cosigners) or "none"
            click.echo(f"{kept.checkpoint_id}\tsize {kept.tree_size}\troot {kept.root_hash}\t"
                       f"signed by {', '.join(kept.signers)}\tcosigned by {witnesses}")
    if not found and not as_json:
        click.echo("no kept checkpoint (make one with `core-audit checkpoint --key K`)",
                   err=True)
