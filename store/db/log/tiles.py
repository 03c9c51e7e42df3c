"""The log's C2SP tiles read from the store: level 0 and entry bundles recomputed from rows,
levels 1 and up from the stored full subtrees (a level-L hash spans 2**(8L) leaves, which the
log stores as it completes). The layout itself is `store.model.tiles.layout`."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import Connection, select

from store.db.log.kept_checkpoints import newest_kept_checkpoint
from store.db.log.stored_log import LogError, latest_head, leaf_rows, log_entry
from store.db.schema.tables import SUBTREE_LEVEL, log_subtrees
from store.model.merkle import leaf_hash
from store.model.tiles.layout import (
    TILE_HEIGHT,
    TILE_WIDTH,
    Tile,
    entry_bundle,
    tile_in_tree,
)

assert TILE_HEIGHT >= SUBTREE_LEVEL  # every level >= 1 hash is a stored subtree


def _entries(connection: Connection, tile: Tile) -> list[bytes]:
    entries = [log_entry(table, row) for _, table, row in
               leaf_rows(connection, tile.start, tile.end)]
    if len(entries) != tile.end - tile.start:
        raise LogError(f"leaves {tile.start}..{tile.end - 1} do not have one row each")
    return entries


def tile_bytes(connection: Connection, tile: Tile) -> bytes | None:
    """The tile's bytes (hashes concatenated, or the entry bundle); None when the newest tree
    head does not have it."""
    if not tile_in_tree(tile, latest_head(connection).size):
        return None
    if tile.level is None:
        return entry_bundle(_entries(connection, tile))
    if tile.level == 0:
        return b"".join(leaf_hash(entry) for entry in _entries(connection, tile))
    level = TILE_HEIGHT * tile.level
    rows = connection.execute(
        select(log_subtrees.c.start, log_subtrees.c.hash)
        .where(log_subtrees.c.level == level, log_subtrees.c.start >= tile.start,
               log_subtrees.c.start < tile.end)
        .order_by(log_subtrees.c.start)).all()
    starts = [tile.start + i * tile.span for i in range(tile.width)]
    if [row.start for row in rows] != starts:
        raise LogError(f"subtrees of level {level} under {tile.path()} are not all stored")
    return b"".join(bytes.fromhex(row.hash) for row in rows)


def served_checkpoint(connection: Connection) -> str | None:
    """The newest kept signed checkpoint, with its cosignatures: the log's /checkpoint."""
    kept = newest_kept_checkpoint(connection)
    return None if kept is None else kept.note


def all_tiles(connection: Connection, size: int) -> Iterator[tuple[Tile, bytes]]:
    """Every tile and entry bundle of the tree of `size` leaves, the leaves read in one pass
    and each level above in one query (what `core-audit tiles --out` writes)."""
    entries: list[bytes] = []
    index = 0
    for _, table, row in leaf_rows(connection, 0, size):
        entries.append(log_entry(table, row))
        if len(entries) == TILE_WIDTH:
            yield from _leaf_tiles(index, entries)
            index, entries = index + 1, []
    if index * TILE_WIDTH + len(entries) != size:
        raise LogError(f"the tree of {size} leaves does not have one row per leaf")
    if entries:
        yield from _leaf_tiles(index, entries)
    level = 1
    while size >= TILE_WIDTH ** level:
        span = TILE_WIDTH ** level
        count = size // span
        rows = connection.execute(
            select(log_subtrees.c.start, log_subtrees.c.hash)
            .where(log_subtrees.c.level == TILE_HEIGHT * level,
                   log_subtrees.c.start < count * span)
            .order_by(log_subtrees.c.start)).all()
        if [row.start for row in rows] != [i * span for i in range(count)]:
            raise LogError(f"subtrees of level {TILE_HEIGHT * level} are not all stored")
        for first in range(0, count, TILE_WIDTH):
            chunk = rows[first:first + TILE_WIDTH]
            yield (Tile(level, first // TILE_WIDTH, len(chunk)),
                   b"".join(bytes.fromhex(row.hash) for row in chunk))
        level += 1


def _leaf_tiles(index: int, entries: list[bytes]) -> Iterator[tuple[Tile, bytes]]:
    yield Tile(0, index, len(entries)), b"".join(leaf_hash(e) for e in entries)
    yield Tile(None, index, len(entries)), entry_bundle(entries)
