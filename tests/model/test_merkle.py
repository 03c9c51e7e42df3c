"""RFC 9162 Merkle tree: published vectors, then generated proofs against the independent verifiers.

Vectors: the RFC 6962 test inputs and the roots and proofs published with them in Certificate
Transparency's merkle_tree_test.cc, repeated in Trillian's merkle/logverifier tests. The roots
are also recomputed here from the §2.1.1 definition (`_mth`), not from the module under test.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.model.merkle import (
    EMPTY_ROOT,
    CompactRange,
    consistency_holds,
    consistency_path,
    digest_from_hex,
    inclusion_holds,
    inclusion_path,
    is_full,
    leaf_hash,
    node_hash,
    root_hash,
    subtree_from_full,
)

LEAVES = [
    b"",
    b"\x00",
    b"\x10",
    b"\x20\x21",
    b"\x30\x31",
    b"\x40\x41\x42\x43",
    b"\x50\x51\x52\x53\x54\x55\x56\x57",
    b"\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f",
]
ROOTS = [  # ROOTS[n] = MTH of the first n inputs
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
INCLUSION = [  # (0-based leaf index, tree size, path)
    (0, 1, []),
    (0, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (5, 8, ["bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (1, 5, ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]  # fmt: skip
CONSISTENCY = [  # (first, second, path)
    (1, 1, []),
    (1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (6, 8, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 5, ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]  # fmt: skip
MAX_SIZE = 70


def _mth(entries: list[bytes]) -> bytes:
    """RFC 9162 §2.1.1 spelled out on raw entries, independent of store.model.merkle."""
    if not entries:
        return hashlib.sha256(b"").digest()
    if len(entries) == 1:
        return hashlib.sha256(b"\x00" + entries[0]).digest()
    k = 1
    while k * 2 < len(entries):
        k *= 2
    return hashlib.sha256(b"\x01" + _mth(entries[:k]) + _mth(entries[k:])).digest()


def _tree(size: int) -> tuple[list[bytes], Callable[[int, int], bytes]]:
    hashes = [leaf_hash(b"leaf %d" % i) for i in range(size)]
    return hashes, lambda start, end: root_hash(hashes[start:end])


def _flip(digest: bytes) -> bytes:
    return bytes([digest[0] ^ 8]) + digest[1:]


def test_empty_tree_root_is_sha256_of_nothing():
    assert root_hash([]) == EMPTY_ROOT == bytes.fromhex(ROOTS[0])
    assert CompactRange().root() == EMPTY_ROOT


@pytest.mark.parametrize("size", range(len(ROOTS)))
def test_published_roots_follow_from_the_definition(size: int):
    assert _mth(LEAVES[:size]).hex() == ROOTS[size]
    assert root_hash([leaf_hash(e) for e in LEAVES[:size]]).hex() == ROOTS[size]


def test_domain_separation():
    assert leaf_hash(b"x") == hashlib.sha256(b"\x00x").digest()
    assert (
        node_hash(b"a" * 32, b"b" * 32) == hashlib.sha256(b"\x01" + b"a" * 32 + b"b" * 32).digest()
    )


@pytest.mark.parametrize(("index", "size", "path"), INCLUSION)
def test_published_inclusion_proofs(index: int, size: int, path: list[str]):
    hashes = [leaf_hash(e) for e in LEAVES]
    proof = inclusion_path(index, size, lambda a, b: root_hash(hashes[a:b]))
    assert [p.hex() for p in proof] == path
    assert inclusion_holds(index, size, hashes[index], proof, bytes.fromhex(ROOTS[size]))


@pytest.mark.parametrize(("first", "second", "path"), CONSISTENCY)
def test_published_consistency_proofs(first: int, second: int, path: list[str]):
    hashes = [leaf_hash(e) for e in LEAVES]
    proof = consistency_path(first, second, lambda a, b: root_hash(hashes[a:b]))
    assert [p.hex() for p in proof] == path
    roots = bytes.fromhex(ROOTS[first]), bytes.fromhex(ROOTS[second])
    assert consistency_holds(first, second, *roots, proof)


def _inclusion_tamperings(index: int, size: int, path: list[bytes], root: bytes):
    yield index - 1, size, path, root
    yield index + 1, size, path, root
    yield index ^ 2, size, path, root
    yield index, size * 2, path, root
    yield index, size // 2, path, root
    yield index, size, path, EMPTY_ROOT
    yield index, size, path, _flip(root)
    yield index, size, [*path, root], root
    yield index, size, [root, *path], root
    if path:
        yield index, size, path[:-1], root
    for i in range(len(path)):
        yield index, size, [*path[:i], _flip(path[i]), *path[i + 1 :]], root
        yield index, size, path[:i] + path[i + 1 :], root


@pytest.mark.parametrize("size", range(1, MAX_SIZE + 1))
def test_every_inclusion_proof_verifies_and_no_tampering_does(size: int):
    hashes, subtree = _tree(size)
    root = root_hash(hashes)
    roots = [root_hash(hashes[:n]) for n in range(size + 1)]
    for index in range(size):
        path = inclusion_path(index, size, subtree)
        assert len(path) <= size.bit_length()
        assert inclusion_holds(index, size, hashes[index], path, root)
        assert not inclusion_holds(index, size, _flip(hashes[index]), path, root)
        for bad in _inclusion_tamperings(index, size, path, root):
            assert not inclusion_holds(bad[0], bad[1], hashes[index], bad[2], bad[3]), bad[:2]
        for other in range(index + 1, size):  # a proof is bound to its tree head
            assert not inclusion_holds(index, other, hashes[index], path, roots[other])


def test_a_proof_and_root_alone_do_not_pin_the_size():
    # RFC 9162 paths for leaf 0 in sizes 5 and 6 have the same shape: size 6 with size 5's root
    # verifies. Only a signed (size, root) pair binds them; verify against a checkpoint's pair.
    hashes, subtree = _tree(5)
    path = inclusion_path(0, 5, subtree)
    assert inclusion_holds(0, 6, hashes[0], path, root_hash(hashes))


def _consistency_tamperings(first: int, second: int, r1: bytes, r2: bytes, path: list[bytes]):
    yield first - 1, second, r1, r2, path
    yield first + 1, second, r1, r2, path
    yield first ^ 2, second, r1, r2, path
    yield first, second * 2, r1, r2, path
    yield first, second // 2, r1, r2, path
    yield first, second, _flip(r1), r2, path
    yield first, second, r1, _flip(r2), path
    yield first, second, r2, r1, path
    yield first, second, r1, r2, []
    yield first, second, r1, r2, [*path, r1]
    yield first, second, r1, r2, [*path, r2]
    yield first, second, r1, r2, [r1, *path]
    yield first, second, r1, r2, [r2, *path]
    yield first, second, r1, r2, [path[0], *path]
    yield first, second, r1, r2, path[:-1]
    for i in range(len(path)):
        yield first, second, r1, r2, [*path[:i], _flip(path[i]), *path[i + 1 :]]


@pytest.mark.parametrize("second", range(1, MAX_SIZE + 1))
def test_every_consistency_proof_verifies_and_no_tampering_does(second: int):
    hashes, subtree = _tree(second)
    roots = [root_hash(hashes[:n]) for n in range(second + 1)]
    for first in range(second + 1):
        path = consistency_path(first, second, subtree)
        assert len(path) <= 2 * second.bit_length()
        assert consistency_holds(first, second, roots[first], roots[second], path)
        if not path:
            continue
        for bad in _consistency_tamperings(first, second, roots[first], roots[second], path):
            assert not consistency_holds(*bad), bad[:2]
        for other in range(1, second):  # the proof does not fit any other old tree head
            if other != first:
                assert not consistency_holds(other, second, roots[other], roots[second], path)


def test_trivial_consistency():
    hashes, _ = _tree(3)
    root = root_hash(hashes)
    assert consistency_holds(0, 3, EMPTY_ROOT, root, [])
    assert consistency_holds(0, 0, EMPTY_ROOT, EMPTY_ROOT, [])
    assert consistency_holds(3, 3, root, root, [])
    assert not consistency_holds(0, 3, root, root, [])
    assert not consistency_holds(0, 3, EMPTY_ROOT, root, [root])
    assert not consistency_holds(3, 3, root, root, [root])
    assert not consistency_holds(3, 3, root, EMPTY_ROOT, [])
    assert not consistency_holds(3, 2, root, root, [])
    assert not consistency_holds(1, 3, b"short", root, [root])


@pytest.mark.parametrize(
    ("call", "args"),
    [(inclusion_path, (0, 0)), (inclusion_path, (3, 3)), (inclusion_path, (-1, 3)),
     (consistency_path, (4, 3)), (consistency_path, (-1, 3))],
)  # fmt: skip
def test_generators_refuse_impossible_requests(call, args):
    with pytest.raises(ValueError):
        call(*args, lambda a, b: EMPTY_ROOT)


def test_verifiers_refuse_malformed_hashes():
    hashes, subtree = _tree(4)
    path = inclusion_path(1, 4, subtree)
    root = root_hash(hashes)
    assert not inclusion_holds(1, 4, hashes[1], [*path[:-1], path[-1] + b"\x00"], root)
    assert not inclusion_holds(1, 4, hashes[1], path, root.hex().encode()[:32] + b"x")
    assert not inclusion_holds(0, 0, hashes[0], [], EMPTY_ROOT)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=8), max_size=80))
def test_compact_range_root_matches_every_prefix(entries: list[bytes]):
    compact = CompactRange()
    for n, entry in enumerate(entries, start=1):
        compact.append(leaf_hash(entry))
        assert compact.size == n
        assert compact.root() == _mth(entries[:n])
        assert len(compact.frontier) == n.bit_count()


def test_compact_range_emits_each_full_subtree_once_when_completed():
    hashes, _ = _tree(MAX_SIZE)
    compact = CompactRange()
    emitted: dict[tuple[int, int], bytes] = {}
    for n, digest in enumerate(hashes, start=1):
        for node in compact.append(digest):
            assert is_full(node.start, node.end) and node.end == n
            assert (node.start, node.end) not in emitted
            emitted[node.start, node.end] = node.digest
    expected = {
        (start, start + (1 << level))
        for level in range(MAX_SIZE.bit_length())
        for start in range(0, MAX_SIZE - (1 << level) + 1, 1 << level)
    }
    assert set(emitted) == expected
    for (start, end), digest in emitted.items():
        assert digest == root_hash(hashes[start:end])

    restored = CompactRange.restore(MAX_SIZE, lambda a, b: emitted[a, b])
    assert restored.frontier == compact.frontier and restored.root() == compact.root()
    restored.append(leaf_hash(b"next"))
    assert restored.root() == root_hash([*hashes, leaf_hash(b"next")])


def test_compact_range_refuses_a_non_digest():
    with pytest.raises(ValueError):
        CompactRange().append(b"entry, not its hash")


@settings(max_examples=300, deadline=None)
@given(st.integers(0, MAX_SIZE).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_subtree_from_full_matches_direct_mth(bounds: tuple[int, int]):
    end, start = bounds
    hashes, _ = _tree(end)
    calls: list[tuple[int, int]] = []

    def full(a: int, b: int) -> bytes:
        assert is_full(a, b), (a, b)
        calls.append((a, b))
        return root_hash(hashes[a:b])

    assert subtree_from_full(start, end, full) == root_hash(hashes[start:end])


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 65, 1000, 4097])
def test_proofs_from_full_subtrees_need_logarithmic_lookups(size: int):
    hashes = [leaf_hash(b"%d" % i) for i in range(size)]
    compact = CompactRange()
    stored: dict[tuple[int, int], bytes] = {}
    for digest in hashes:
        stored.update({(n.start, n.end): n.digest for n in compact.append(digest)})
    lookups: list[tuple[int, int]] = []

    def full(a: int, b: int) -> bytes:
        lookups.append((a, b))
        return stored[a, b]

    def subtree(a: int, b: int) -> bytes:
        return subtree_from_full(a, b, full)

    bound = 2 * size.bit_length() ** 2 + 2  # each of <= 2 log n ranges splits into <= log n nodes
    root = compact.root()
    for index in {0, size // 2, size - 1}:
        lookups.clear()
        path = inclusion_path(index, size, subtree)
        assert len(lookups) <= bound
        assert inclusion_holds(index, size, hashes[index], path, root)
    for first in {1, size // 3, size - 1}:
        lookups.clear()
        path = consistency_path(first, size, subtree)
        assert len(lookups) <= bound
        assert consistency_holds(first, size, root_hash(hashes[:first]), root, path)


def test_digest_from_hex_is_strict():
    root = ROOTS[8]
    assert digest_from_hex(root) == bytes.fromhex(root)
    for bad, message in [
        (root[:-2], "64 hex digits"),
        (root + "00", "64 hex digits"),
        (root.upper(), "not lowercase hex"),
        ("g" + root[1:], "not lowercase hex"),
        (" " + root[1:], "not lowercase hex"),
    ]:
        with pytest.raises(ValueError, match=message):
            digest_from_hex(bad, "root_hash")
    with pytest.raises(ValueError, match="root_hash"):
        digest_from_hex(12345, "root_hash")  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 40), st.integers(0, 70), st.integers(0, 7))
def test_extend_is_append_one_leaf_at_a_time(before: int, added: int, min_level: int):
    """The writer's one call per chunk: same tree, same subtrees, only those it keeps."""
    hashes, _ = _tree(before + added) if before + added else ([], None)
    one_by_one, at_once = CompactRange(), CompactRange()
    for digest in hashes[:before]:
        one_by_one.append(digest)
        at_once.append(digest)
    expected = [node for digest in hashes[before:] for node in one_by_one.append(digest)
                if node.level >= min_level]
    assert at_once.extend(hashes[before:], min_level) == expected
    assert at_once.size == one_by_one.size == before + added
    assert at_once.frontier == one_by_one.frontier and at_once.root() == one_by_one.root()


def test_extend_refuses_a_non_digest_after_keeping_the_leaves_before_it():
    compact = CompactRange()
    with pytest.raises(ValueError, match="32 bytes"):
        compact.extend([leaf_hash(b"a"), leaf_hash(b"b"), b"entry, not its hash"])
    assert compact.size == 2 and compact.root() == root_hash([leaf_hash(b"a"), leaf_hash(b"b")])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 5), st.integers(0, 6), st.integers(0, 7))
def test_extend_block_is_the_tree_of_its_leaves_and_keeps_each_subtree(
        blocks_before: int, block_level: int, min_level: int):
    """verify's aligned windows: the root of every prefix is RFC 9162's MTH of the entries,
    and the full subtrees it keeps are exactly the aligned ones of min_level or more that the
    block completes, each the MTH of its own entries."""
    block = 1 << block_level
    before, entries = blocks_before * block, [b"leaf %d" % i for i in range((blocks_before + 1)
                                                                             * block)]
    compact = CompactRange()
    compact.extend([hashlib.sha256(b"\x00" + e).digest() for e in entries[:before]])
    kept = compact.extend_block([hashlib.sha256(b"\x00" + e).digest()
                                 for e in entries[before:]], min_level)
    assert compact.size == len(entries) and compact.root() == _mth(entries)
    completed = {(level, start) for level in range(min_level, 64)
                 for start in range(0, len(entries), 1 << level)
                 if start + (1 << level) <= len(entries) and start + (1 << level) > before}
    assert {(node.level, node.start) for node in kept} == completed
    for node in kept:
        assert node.digest == _mth(entries[node.start:node.start + (1 << node.level)])


def test_extend_block_refuses_a_block_that_is_not_aligned():
    compact = CompactRange()
    compact.extend([leaf_hash(b"a")])
    with pytest.raises(ValueError, match="not an aligned block"):
        compact.extend_block([leaf_hash(b"b"), leaf_hash(b"c")])
    with pytest.raises(ValueError, match="not an aligned block"):
        CompactRange().extend_block([leaf_hash(b"b")] * 3)
    assert compact.size == 1
