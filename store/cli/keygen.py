"""`core-audit keygen`: an Ed25519 key pair in the C2SP signed-note formats, for checkpoints."""

from __future__ import annotations

import os
from pathlib import Path

import click

from store.errors import CheckpointError
from store.model.checkpoint import COSIGNATURE_V1, ED25519, generate_key

SIGNER_MODE = 0o600
VERIFIER_MODE = 0o644


def _write_new(path: Path, text: str, mode: int) -> None:
    """Create `path` with `mode` from the first byte (O_EXCL: never replace a file)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)  # the umask may only have narrowed it; make it exactly `mode`
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


@click.command()
@click.argument("name")
@click.option("--out", "prefix", required=True, metavar="PREFIX",
              help="Write PREFIX.key (signer key, mode 0600) and PREFIX.pub (verifier key).")
@click.option("--witness", "for_witness", is_flag=True,
              help="A witness's cosigning key (C2SP tlog-cosignature, type 0x04) for "
                   "`witness serve`, instead of a log's key.")
def keygen(name: str, prefix: str, for_witness: bool) -> None:
    """Make a new Ed25519 key NAME: sign checkpoints with `checkpoint --key PREFIX.key`, check
    them with `verify --checkpoint FILE --key PREFIX.pub`. Refuses to overwrite either file."""
    try:
        signer, verifier = generate_key(name, COSIGNATURE_V1 if for_witness else ED25519)
    except CheckpointError as exc:
        raise click.ClickException(str(exc)) from exc
    key_path, pub_path = Path(prefix + ".key"), Path(prefix + ".pub")
    for path in (key_path, pub_path):
        if path.exists() or path.is_symlink():
            raise click.ClickException(f"{path} exists; not overwriting it")
    try:
        _write_new(key_path, signer + "\n", SIGNER_MODE)
    except OSError as exc:
        raise click.ClickException(f"{key_path}: cannot create: {exc.strerror}") from exc
    try:
        _write_new(pub_path, verifier + "\n", VERIFIER_MODE)
    except OSError as exc:
        key_path.unlink()  # no half pair: the signer key alone would be a key nobody can check
        raise click.ClickException(f"{pub_path}: cannot create: {exc.strerror}") from exc
    click.echo(f"wrote {key_path} (keep secret) and {pub_path}: {verifier}")
