"""C2SP tlog-tiles layout: tile paths, which tiles a tree of a given size has, entry bundles.

A tile at level L holds up to 256 hashes, each the Merkle Tree Hash of 256**L leaves; tile N
of level L spans leaves [N * 256**(L+1), (N+1) * 256**(L+1)). Level 0 holds leaf hashes; an
entry bundle holds the entries those leaf hashes hash, each behind a big-endian u16 length.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from store.errors import InputError

TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT  # hashes in a full tile
HASH_SIZE = 32
FULL_TILE_BYTES = TILE_WIDTH * HASH_SIZE  # 8,192
MAX_LEVEL = 63
MAX_ENTRY_BYTES = 0xFFFF  # an entry bundle's u16 length prefix
ENTRIES = "entries"
CHECKPOINT = "checkpoint"
CONTENT_TYPE = "application/octet-stream"
CHECKPOINT_CONTENT_TYPE = "text/plain; charset=utf-8"
IMMUTABLE = "public, max-age=31536000, immutable"  # full tiles never change
CHECKPOINT_CACHE = "no-cache, max-age=0"  # the spec: no caching beyond a few seconds

_LENGTH = struct.Struct(">H")
_DECIMAL = r"(?:0|[1-9][0-9]*)"
_PATH = re.compile(rf"tile/(?P<level>{_DECIMAL}|{ENTRIES})/(?P<index>(?:x[0-9]{{3}}/)*[0-9]{{3}})"
                   rf"(?:\.p/(?P<width>[1-9][0-9]*))?", re.ASCII)


class TilePathError(InputError):
    """Not a tile path of the layout (the server answers 404)."""


@dataclass(frozen=True, slots=True, order=True)
class Tile:
    """Tile `index` at `level` (None: the entry bundle of level-0 tile `index`), `width`
    hashes (or entries) wide; a width below TILE_WIDTH is a partial tile."""

    level: int | None
    index: int
    width: int = TILE_WIDTH

    def __post_init__(self) -> None:
        if self.level is not None and not 0 <= self.level <= MAX_LEVEL:
            raise TilePathError(f"tile level {self.level} is not in 0..{MAX_LEVEL}")
        if self.index < 0 or not 1 <= self.width <= TILE_WIDTH:
            raise TilePathError(f"tile index {self.index} width {self.width} out of range")

    @property
    def full(self) -> bool:
        return self.width == TILE_WIDTH

    @property
    def span(self) -> int:
        """Leaves under one hash of this tile: 256**level (1 for entries)."""
        return int(TILE_WIDTH ** (self.level or 0))

    @property
    def start(self) -> int:
        """The first leaf under the tile."""
        return self.index * TILE_WIDTH * self.span

    @property
    def end(self) -> int:
        """One past the last leaf under its `width` hashes."""
        return self.start + self.width * self.span

    def path(self) -> str:
        level = ENTRIES if self.level is None else str(self.level)
        suffix = "" if self.full else f".p/{self.width}"
        return f"tile/{level}/{encode_index(self.index)}{suffix}"


def encode_index(index: int) -> str:
    """N as zero-padded 3-digit path elements, all but the last prefixed x: 1234067 ->
    x001/x234/067."""
    if index < 0:
        raise TilePathError(f"tile index {index} is negative")
    groups = []
    while True:
        groups.append(f"{index % 1000:03d}")
        index //= 1000
        if index == 0:
            break
    groups.reverse()
    return "/".join([f"x{g}" for g in groups[:-1]] + [groups[-1]])


def parse_tile_path(path: str) -> Tile:
    """The tile a path names (`tile/<L>/<N>[.p/<W>]` or `tile/entries/<N>[.p/<W>]`), in its
    one canonical spelling; TilePathError otherwise."""
    match = _PATH.fullmatch(path)
    if match is None:
        raise TilePathError(f"not a tile path: {path[:120]!r}")
    groups = match["index"].replace("x", "").split("/")
    if len(groups) > 1 and groups[0] == "000":  # leading zero groups: another spelling of N
        raise TilePathError(f"tile index has a leading zero group: {path[:120]!r}")
    level = None if match["level"] == ENTRIES else int(match["level"])
    width = TILE_WIDTH if match["width"] is None else int(match["width"])
    if match["width"] is not None and width >= TILE_WIDTH:
        raise TilePathError(f"partial tile width {width} is not in 1..255")
    return Tile(level, int("".join(groups)), width)


def tiles_of(size: int, *, entries: bool = True) -> Iterator[Tile]:
    """Every tile (and entry bundle) a tree of `size` leaves has: the full ones and, per
    level, the partial one its size ends in (none when the level ends on a tile boundary)."""
    level, span = 0, 1
    while size >= span and level <= MAX_LEVEL:
        hashes = size // span
        full, partial = divmod(hashes, TILE_WIDTH)
        kinds = [level, None] if entries and level == 0 else [level]
        for kind in kinds:
            for index in range(full):
                yield Tile(kind, index)
            if partial:
                yield Tile(kind, full, partial)
        level, span = level + 1, span * TILE_WIDTH


def tile_in_tree(tile: Tile, size: int) -> bool:
    """Whether a tree of `size` leaves has this tile: its hashes' leaves all exist."""
    return tile.end <= size


def entry_bundle(entries: Iterable[bytes]) -> bytes:
    """Entries, each behind its big-endian u16 length; ValueError for one over 65,535 bytes."""
    parts = []
    for entry in entries:
        if len(entry) > MAX_ENTRY_BYTES:
            raise ValueError(f"entry of {len(entry)} bytes exceeds {MAX_ENTRY_BYTES} bytes")
        parts.append(_LENGTH.pack(len(entry)))
        parts.append(entry)
    return b"".join(parts)


def split_entry_bundle(data: bytes) -> list[bytes]:
    entries, at = [], 0
    while at < len(data):
        if at + 2 > len(data):
            raise ValueError(f"entry bundle ends inside a length prefix at byte {at}")
        (length,) = _LENGTH.unpack_from(data, at)
        if at + 2 + length > len(data):
            raise ValueError(f"entry at byte {at} runs past the bundle's end")
        entries.append(data[at + 2:at + 2 + length])
        at += 2 + length
    return entries
