"""C2SP tlog-tiles layout: the spec's own examples (paths, which tiles a size has, bundles)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.model.tiles.layout import (
    FULL_TILE_BYTES,
    MAX_ENTRY_BYTES,
    TILE_HEIGHT,
    TILE_WIDTH,
    Tile,
    TilePathError,
    encode_index,
    entry_bundle,
    parse_tile_path,
    split_entry_bundle,
    tiles_of,
)


def test_spec_constants():
    assert (TILE_HEIGHT, TILE_WIDTH, FULL_TILE_BYTES, MAX_ENTRY_BYTES) == (8, 256, 8192, 65535)


def test_the_spec_index_example():
    assert encode_index(1234067) == "x001/x234/067"
    assert encode_index(0) == "000"
    assert encode_index(999) == "999"
    assert encode_index(1000) == "x001/000"


@pytest.mark.parametrize(("path", "tile"), [
    ("tile/0/000", Tile(0, 0)),
    ("tile/0/x001/x234/067", Tile(0, 1234067)),
    ("tile/2/001.p/17", Tile(2, 1, 17)),
    ("tile/entries/x001/000.p/255", Tile(None, 1000, 255)),
])
def test_paths_parse_and_print_back(path: str, tile: Tile):
    assert parse_tile_path(path) == tile
    assert tile.path() == path


@pytest.mark.parametrize("path", [
    "tile/00/000", "tile/64/000", "tile/0/1", "tile/0/0001", "tile/0/x000/001",
    "tile/0/001.p/0", "tile/0/001.p/256", "tile/0/001.p/07", "tile/0/001/", "tile/-1/000",
    "tile/0/x1/000", "tile/entries/000.p/", "tile/data/000", "checkpoint",
])
def test_other_spellings_are_not_tiles(path: str):
    with pytest.raises(TilePathError):
        parse_tile_path(path)


@given(st.integers(0, 10**15), st.integers(1, 256), st.one_of(st.none(), st.integers(0, 63)))
def test_any_tile_path_round_trips(index: int, width: int, level: int | None):
    tile = Tile(level, index, width)
    assert parse_tile_path(tile.path()) == tile


def test_the_spec_tree_of_70000():
    # "273 full level 0 tiles, one partial level 0 tile of width 112, one full level 1 tile,
    # one partial level 1 tile of width 17, and one partial level 2 tile of width 1"
    tiles = [t for t in tiles_of(70_000) if t.level is not None]
    assert [t for t in tiles if t.level == 0 and t.full] == [Tile(0, n) for n in range(273)]
    assert [t for t in tiles if not t.full or t.level != 0] == [
        Tile(0, 273, 112), Tile(1, 0), Tile(1, 1, 17), Tile(2, 0, 1)]


def test_the_spec_tree_of_256():
    # "a full level 0 tile and a partial level 1 tile of width 1"
    assert list(tiles_of(256, entries=False)) == [Tile(0, 0), Tile(1, 0, 1)]
    assert list(tiles_of(0)) == []


def test_tile_ranges():
    assert (Tile(1, 1, 17).start, Tile(1, 1, 17).end) == (65536, 65536 + 17 * 256)
    assert (Tile(None, 2, 3).start, Tile(None, 2, 3).end) == (512, 515)


def test_entry_bundles_prefix_each_entry_with_its_big_endian_length():
    assert entry_bundle([b"ab", b"", b"x" * 258]) == (
        b"\x00\x02ab" + b"\x00\x00" + b"\x01\x02" + b"x" * 258)
    assert split_entry_bundle(entry_bundle([b"ab", b"", b"c"])) == [b"ab", b"", b"c"]
    assert len(entry_bundle([b"y" * MAX_ENTRY_BYTES])) == 2 + MAX_ENTRY_BYTES
    with pytest.raises(ValueError, match="65536 bytes exceeds 65535"):
        entry_bundle([b"y" * (MAX_ENTRY_BYTES + 1)])
    with pytest.raises(ValueError, match="runs past"):
        split_entry_bundle(b"\x00\x05ab")
