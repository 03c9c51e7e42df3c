"""`core-audit tiles --out DIR`: the log as C2SP tlog-tiles static files, for any web server."""

from __future__ import annotations

import os
from pathlib import Path

import click

from store.cli.options import db_option, open_store


def _write(path: Path, data: bytes) -> None:
    """Write through a temporary file and rename: a reader never sees half a tile."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


@click.command()
@db_option
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              metavar="DIR", help="Write DIR/checkpoint and DIR/tile/... (created if missing).")
def tiles(db: str | None, out: Path) -> None:
    """Write the log as C2SP tlog-tiles static files: serve DIR as the log's URL prefix.

    DIR/checkpoint is the newest kept signed checkpoint (with its cosignatures); DIR/tile/
    holds every tile and entry bundle of the newest tree head, and the partial ones of every
    kept checkpoint's size. Tiles are written first, the checkpoint last, each through a
    rename. Full tiles never change, so re-running only adds files.
    """
    from store.db.log.kept_checkpoints import kept_checkpoints
    from store.db.log.stored_log import latest_head
    from store.db.log.tiles import all_tiles, tile_bytes
    from store.model.tiles.layout import tiles_of

    with open_store(db, read_only=True) as store, store.engine.connect() as connection:
        connection.begin()  # one snapshot for every tile
        kept = kept_checkpoints(connection)
        if not kept:
            raise click.ClickException("no kept checkpoint to serve: make one with "
                                       "`core-audit checkpoint --key K`")
        size = latest_head(connection).size
        written = 0
        for tile, data in all_tiles(connection, size):
            _write(out / tile.path(), data)
            written += 1
        done = {t for t in tiles_of(size)}
        for checkpoint in {k.tree_size for k in kept_checkpoints(connection, limit=None)}:
            for tile in tiles_of(checkpoint):
                if tile not in done:
                    partial = tile_bytes(connection, tile)
                    assert partial is not None  # a kept checkpoint's tree is in the store
                    _write(out / tile.path(), partial)
                    done.add(tile)
                    written += 1
        _write(out / "checkpoint", kept[0].note.encode("utf-8"))
    click.echo(f"wrote {written} tiles and the checkpoint of size {kept[0].tree_size} to {out}")
