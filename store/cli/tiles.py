"""`core-audit tiles --out DIR`: the log as C2SP tlog-tiles static files, for any web server."""

from __future__ import annotations

from pathlib import Path

import click

from store.cli.options import db_option, open_store
from store.cli.tile_folder import TileFolder


@click.command()
@db_option
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              metavar="DIR", help="Write DIR/checkpoint and DIR/tile/... (created if missing).")
def tiles(db: str | None, out: Path) -> None:
    """Write the log as C2SP tlog-tiles static files: serve DIR as the log's URL prefix.

    DIR/checkpoint is the newest kept signed checkpoint (with its cosignatures); DIR/tile/
    holds every tile and entry bundle of the newest tree head, and the partial ones of every
    kept checkpoint's size. Tiles are written first, the checkpoint last, each through a
    rename. Full tiles never change, so re-running only adds files: a tile already there
    with the same bytes is left as it is (the checkpoint is replaced when it changed).

    DIR may be shared: a file is created only under a fresh name of its own and renamed into
    place, and a symbolic link below DIR (a file or folder core-audit did not make) is
    refused, naming it, never followed.
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
        with TileFolder(out) as folder:
            for tile, data in all_tiles(connection, size):
                folder.put(tile.path(), data)
            done = {t for t in tiles_of(size)}
            for checkpoint in {k.tree_size for k in kept_checkpoints(connection, limit=None)}:
                for tile in tiles_of(checkpoint):
                    if tile not in done:
                        partial = tile_bytes(connection, tile)
                        assert partial is not None  # a kept checkpoint's tree is in the store
                        folder.put(tile.path(), partial)
                        done.add(tile)
            written, unchanged = folder.written, folder.unchanged
            checkpoint_written = folder.put("checkpoint", kept[0].note.encode("utf-8"))
    left = f" ({unchanged} tiles already there, unchanged)" if unchanged else ""
    which = "the checkpoint" if checkpoint_written else "the checkpoint (unchanged)"
    click.echo(f"wrote {written} tiles and {which} of size {kept[0].tree_size} to {out}{left}")
