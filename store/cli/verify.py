"""`core-audit verify` and `core-audit checkpoint`: is the store what was appended?"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click
import orjson

from store.cli.options import db_option, say_if_immutable
from store.errors import CheckpointError, StoreError
from store.model.checkpoint import MAX_NOTE_BYTES, Checkpoint, open_checkpoint

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def read_small_text(path: Path, what: str) -> str:
    """A checkpoint or key file: bounded, UTF-8; a clean error otherwise."""
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_NOTE_BYTES + 1)
    except OSError as exc:
        raise click.ClickException(f"{path}: cannot read the {what}: {exc.strerror}") from exc
    if len(data) > MAX_NOTE_BYTES:
        raise click.ClickException(f"{path}: the {what} is larger than {MAX_NOTE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"{path}: the {what} is not UTF-8 text") from exc


def load_checkpoint(path: Path, key: Path | None) -> Checkpoint:
    """The checkpoint a file holds; with a key, only if that key signed exactly this text."""
    text = read_small_text(path, "checkpoint")
    verifier = None if key is None else read_small_text(key, "verifier key")
    try:
        return open_checkpoint(text, verifier)
    except (CheckpointError, ValueError) as exc:
        raise click.ClickException(f"{path}: {exc}") from exc


def _not_intact(problems: list[str], as_json: bool) -> NoReturn:
    if as_json:
        click.echo(orjson.dumps({"intact": False, "problems": problems}).decode())
    else:
        click.echo(f"NOT intact: {problems[0]}", err=True)
        for problem in problems[1:]:
            click.echo(f"  also {problem}", err=True)
    sys.exit(1)


@click.command()
@db_option
@click.option("--checkpoint", "checkpoint_file", type=_FILE, metavar="FILE",
              help="A C2SP checkpoint kept earlier: the store must extend its tree.")
@click.option("--key", type=_FILE, metavar="PREFIX.pub",
              help="Verifier key: the checkpoint must carry its valid signature.")
@click.option("--quick", is_flag=True,
              help="Only the checkpoint's consistency proof (O(log n)), no full recompute.")
@click.option("--json", "as_json", is_flag=True,
              help='Print one JSON object: {"intact", "tree_size", "root_hash", ...} or '
                   '{"intact": false, "problems"}.')
def verify(db: str | None, checkpoint_file: Path | None, key: Path | None,
           quick: bool, as_json: bool) -> None:
    """Recompute every leaf, the tree and its heads from the rows; check keys, triggers and
    the file; with --checkpoint, prove the store extends it. Exit 1 if anything is wrong.

    One row a leaf, one leaf a row; every stored subtree and each batch's tree head; every
    content-addressed key (residual, assessment, surface, sighting and turn ids) from the
    row's content; every foreign key, each table's primary key and indexes; the append-only
    triggers' definitions (SQLite: their stored SQL; PostgreSQL: table, events, enabled state
    and the function's body); SQLite's integrity_check; each batch's residual tallies. The
    first problem is named by seq, table and key (or the batch whose tree head its rows no
    longer make). A store that cannot be opened or read prints NOT intact: REASON, exit 1.
    """
    if key is not None and checkpoint_file is None:
        raise click.UsageError("--key needs --checkpoint")
    if quick and checkpoint_file is None:
        raise click.UsageError("--quick needs --checkpoint")
    checkpoint = load_checkpoint(checkpoint_file, key) if checkpoint_file else None
    try:
        from store.db.audit_store import AuditStore

        with AuditStore.open(db, read_only=True) as store:
            say_if_immutable(store.engine)
            origin = store.origin()
            if checkpoint is not None and origin is not None and checkpoint.origin != origin:
                _not_intact([f"the checkpoint is of log {checkpoint.origin!r}, this store is "
                             f"{origin!r}"], as_json)
            report = store.verify(checkpoint, quick=quick)
    except StoreError as exc:  # unopenable or unreadable: not intact either, and no traceback
        _not_intact([str(exc)], as_json)
    if not report.intact:
        problems = [str(p) for p in report.problems]
        _not_intact(problems if as_json else [f"first problem at {problems[0]}",
                                              *problems[1:]], as_json)
    tip = report.tip
    assert tip is not None
    if as_json:
        click.echo(orjson.dumps({
            "intact": True, "tree_size": tip.size, "root_hash": tip.root_hex,
            "recomputed": not quick,
            "extends_checkpoint": checkpoint.size if checkpoint else None}).decode())
        return
    extends = f"; extends the checkpoint of size {checkpoint.size}" if checkpoint else ""
    what = "tree head" if quick else "leaves"
    click.echo(f"intact: {tip.size} {what}, root {tip.root_hex}{extends}")
