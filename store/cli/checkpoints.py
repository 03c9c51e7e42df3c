"""`core-audit checkpoint` (issue a checkpoint: printed, and kept when signed) and
`core-audit checkpoints` (the kept ones)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
import orjson

from store.cli.options import db_option, open_store
from store.cli.verify import load_verifier, read_small_text
from store.db.log.kept_checkpoints import KeptCheckpoint, kept_checkpoints
from store.errors import CheckpointError, CoreAuditError, StoreError
from store.model.checkpoint import SignerKey, VerifierKey

if TYPE_CHECKING:
    from store.db.audit_store import AuditStore

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
DEFAULT_LIST = 20


def load_signer(path: Path) -> SignerKey:
    try:
        return SignerKey.parse(read_small_text(path, "signer key").strip())
    except CheckpointError as exc:
        raise click.ClickException(f"{path}: {exc}") from exc


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
              help="The log's origin line (e.g. audit.example.org/core), chosen once: the "
                   "store keeps it and refuses another. Until chosen, checkpoints carry a "
                   "provisional core-audit/<hex> origin and nothing is written.")
@click.option("--witness", "witnesses", multiple=True, metavar="URL=VERIFIERKEY",
              help="Ask the C2SP tlog-witness at URL (its verifier key: text or a file) to "
                   "cosign the kept checkpoint, and keep its cosignature; repeatable.")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"origin", "tree_size", "root_hash", "note"} (note: the checkpoint).')
def checkpoint(db: str | None, keys: tuple[Path, ...], origin: str | None,
               witnesses: tuple[str, ...], as_json: bool) -> None:
    """Print the newest tree head as a C2SP tlog-checkpoint. Signed (--key), it is also kept
    in the store (`core-audit checkpoints`, served at /log/checkpoint); keep it elsewhere too,
    and later `verify --checkpoint` that the store still extends it.

    With --witness, each witness is sent the checkpoint and a consistency proof from the
    size it last cosigned; the note printed carries every cosignature received. A witness
    that refuses or cannot be reached is named on stderr (exit 1); the others' are kept.
    """
    signers = [load_signer(path) for path in keys]
    asked = [_witness_option(value) for value in witnesses]
    if asked and not signers:
        raise click.UsageError("--witness needs --key: witnesses cosign signed checkpoints")
    failures: list[str] = []
    with open_store(db) as store:
        try:
            chosen = store.origin() is not None or origin is not None
            if signers and not chosen:
                raise click.ClickException(
                    "this store's origin is not chosen yet: sign only under the origin it will "
                    "keep, chosen once with --origin (e.g. --origin audit.example.org/core)")
            if signers:
                kept = store.keep_checkpoint(signers, origin)
                for url, key in asked:
                    try:
                        kept = _cosigned(store, kept, url, key)
                    except CoreAuditError as exc:
                        failures.append(exc.diagnostics())
                head_origin, size, root, note = (store.origin(), kept.tree_size,
                                                 kept.root_hash, kept.note)
            else:
                head = store.checkpoint(origin)
                head_origin, size, root, note = (head.origin, head.size, head.root.hex(),
                                                 head.unsigned_note())
        except (StoreError, CheckpointError) as exc:
            raise click.ClickException(str(exc)) from exc
    if not chosen:
        click.echo(f"note: this store's origin is not chosen yet: {head_origin!r} is "
                   "provisional. Choose it once, on purpose: core-audit checkpoint --origin "
                   f"HOST/PATH (choosing {head_origin} keeps the checkpoints printed so far "
                   "valid)", err=True)
    if as_json:
        click.echo(orjson.dumps({"origin": head_origin, "tree_size": size,
                                 "root_hash": root, "note": note}).decode())
    else:
        click.echo(note, nl=False)
    for failure in failures:
        click.echo(f"not cosigned: {failure}", err=True)
    if failures:
        sys.exit(1)


def _witness_option(value: str) -> tuple[str, VerifierKey]:
    url, equals, key = value.partition("=")
    if not equals or not url.startswith(("http://", "https://")):
        raise click.BadParameter(f"{value[:80]!r}: give URL=VERIFIERKEY, URL http(s)://...",
                                 param_hint="--witness")
    return url, load_verifier(key, f"--witness {url}")  # type 0x04 or 0x01: both cosign


def _cosigned(store: AuditStore, kept: KeptCheckpoint, url: str, witness: VerifierKey
              ) -> KeptCheckpoint:
    from store.api.witness_client import request_cosignature
    from store.db.log.kept_checkpoints import last_cosigned_size
    from store.db.log.stored_log import StoredLog

    def consistency(old: int) -> list[bytes]:
        return store.execute(lambda c: StoredLog(c).consistency(old, kept.tree_size))

    held = store.execute(last_cosigned_size, witness.name)
    line = request_cosignature(url, witness, kept.signed_note, consistency,
                               held if held <= kept.tree_size else 0)
    return store.add_cosignatures(kept.checkpoint_id, [line], [witness])


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
