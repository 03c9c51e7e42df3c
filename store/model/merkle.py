"""RFC 9162 §2.1 Merkle tree: hashes, proofs from subtree lookups, independent verifiers.

Proof generators take a callback `subtree(start, end)` returning MTH(D[start:end]); every range
they ask for starts at a multiple of a power of two at least its size, so `subtree_from_full`
answers each with O(log n) lookups of aligned full subtrees, the ones `CompactRange` emits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from store.errors import ProofError

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()  # MTH({}) = HASH() (RFC 9162 §2.1.1)

Subtree = Callable[[int, int], bytes]  # (start, end) -> MTH(D[start:end])


def leaf_hash(entry: bytes) -> bytes:
    """MTH({d}) = SHA-256(0x00 ‖ d)."""
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """Interior node: SHA-256(0x01 ‖ left ‖ right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def digest_from_hex(text: str, what: str = "hash") -> bytes:
    """A 32-byte digest from exactly 64 lowercase hex digits; ValueError naming `what` otherwise."""
    if not isinstance(text, str) or len(text) != 2 * HASH_SIZE:
        raise ValueError(f"{what} must be {2 * HASH_SIZE} hex digits: {str(text)[:80]!r}")
    if text.strip("0123456789abcdef"):
        raise ValueError(f"{what} is not lowercase hex: {text!r}")
    return bytes.fromhex(text)


def split_point(size: int) -> int:
    """k: the largest power of two strictly less than size (size >= 2)."""
    return 1 << ((size - 1).bit_length() - 1)


def root_hash(leaf_hashes: Sequence[bytes]) -> bytes:
    """MTH(D[n]) by the RFC's recursive definition, from the leaves' hashes."""
    size = len(leaf_hashes)
    if size == 0:
        return EMPTY_ROOT
    if size == 1:
        return leaf_hashes[0]
    k = split_point(size)
    return node_hash(root_hash(leaf_hashes[:k]), root_hash(leaf_hashes[k:]))


def is_full(start: int, end: int) -> bool:
    """An aligned full subtree: size 2^h and start a multiple of 2^h."""
    size = end - start
    return size > 0 and size & (size - 1) == 0 and start % size == 0


def subtree_from_full(start: int, end: int, full: Subtree) -> bytes:
    """MTH(D[start:end]) calling `full` only on aligned full subtrees (O(log n) for RFC ranges)."""
    if start < 0 or end < start:
        raise ValueError(f"bad range [{start}, {end})")
    if start == end:
        return EMPTY_ROOT
    if is_full(start, end):
        return full(start, end)
    k = split_point(end - start)
    return node_hash(
        subtree_from_full(start, start + k, full), subtree_from_full(start + k, end, full)
    )


def inclusion_path(index: int, size: int, subtree: Subtree) -> list[bytes]:
    """PATH(index, D[size]) of RFC 9162 §2.1.3.1, leaf-side first."""
    if not 0 <= index < size:
        raise ValueError(f"leaf index {index} is not in a tree of size {size}")
    path: list[bytes] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = split_point(hi - lo)
        if index < lo + k:
            path.append(subtree(lo + k, hi))
            hi = lo + k
        else:
            path.append(subtree(lo, lo + k))
            lo += k
    path.reverse()  # collected root-side first; the RFC lists the leaf side first
    return path


def consistency_path(first: int, second: int, subtree: Subtree) -> list[bytes]:
    """PROOF(first, D[second]) of RFC 9162 §2.1.4.1; empty when first is 0 or equals second."""
    if not 0 <= first <= second:
        raise ValueError(f"no consistency proof from size {first} to size {second}")
    if first in (0, second):
        return []
    path: list[bytes] = []
    lo, hi, whole = 0, second, True  # whole: the old tree is this subtree, its hash is known
    m = first
    while m != hi - lo:
        k = split_point(hi - lo)
        if m <= k:
            path.append(subtree(lo + k, hi))
            hi = lo + k
        else:
            path.append(subtree(lo, lo + k))
            lo, m, whole = lo + k, m - k, False
    if not whole:
        path.append(subtree(lo, hi))
    path.reverse()  # SUBPROOF appends on the way back up: deepest node first
    return path


def _check_digests(**digests: bytes | Sequence[bytes]) -> None:
    for name, value in digests.items():
        for i, digest in enumerate([value] if isinstance(value, bytes) else value):
            if not isinstance(digest, bytes) or len(digest) != HASH_SIZE:
                where = name if isinstance(value, bytes) else f"{name}[{i}]"
                got = f"{len(digest)} bytes" if isinstance(digest, bytes) else \
                    type(digest).__name__
                raise ProofError(f"{where}: expected a {HASH_SIZE}-byte hash, got {got}")


def _path_walk_failed(kind: str, length: int) -> ProofError:
    return ProofError(f"{kind} path has {length} hashes, more than the tree's shape allows")


def verify_inclusion(
    index: int, size: int, leaf: bytes, path: Sequence[bytes], root: bytes
) -> None:
    """RFC 9162 §2.1.3.2: `path` proves leaf hash `leaf` at `index` in the tree (size, root);
    ProofError saying what was expected and what was found if it does not."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is not in a tree of {size} leaves")
    _check_digests(leaf_hash=leaf, root_hash=root, inclusion_path=path)
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            raise _path_walk_failed("inclusion", len(path))
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ProofError(f"inclusion path has {len(path)} hashes, too few for leaf {index} of "
                         f"a tree of {size} leaves")
    if r != root:
        raise ProofError(f"inclusion path leads to root {r.hex()}, expected {root.hex()}")


def verify_consistency(
    first: int, second: int, first_root: bytes, second_root: bytes, path: Sequence[bytes]
) -> None:
    """RFC 9162 §2.1.4.2: the tree (second, second_root) extends (first, first_root);
    ProofError saying what was expected and what was found if it does not."""
    if not 0 <= first <= second:
        raise ProofError(f"a tree of {second} leaves cannot extend one of {first}")
    _check_digests(first_root=first_root, second_root=second_root, consistency_path=path)
    if first == 0:  # every tree extends the empty one; there is nothing to prove
        if first_root != EMPTY_ROOT:
            raise ProofError(f"the empty tree's root is {EMPTY_ROOT.hex()}, got "
                             f"{first_root.hex()}")
        if path:
            raise ProofError(f"consistency with the empty tree needs no path, got {len(path)}")
        if second == 0 and second_root != EMPTY_ROOT:
            raise ProofError(f"the empty tree's root is {EMPTY_ROOT.hex()}, got "
                             f"{second_root.hex()}")
        return
    if first == second:
        if path:
            raise ProofError(f"a tree is consistent with itself with no path, got {len(path)}")
        if first_root != second_root:
            raise ProofError(f"trees of {first} leaves: roots {first_root.hex()} and "
                             f"{second_root.hex()} differ")
        return
    if not path:
        raise ProofError(f"consistency path is empty; {first} to {second} leaves needs one")
    nodes = list(path)
    if first & (first - 1) == 0:  # the old tree is a full subtree: its root starts the walk
        nodes.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = nodes[0]
    for c in nodes[1:]:
        if sn == 0:
            raise _path_walk_failed("consistency", len(path))
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ProofError(f"consistency path has {len(path)} hashes, too few from {first} to "
                         f"{second} leaves")
    if fr != first_root:
        raise ProofError(f"consistency path leads to first root {fr.hex()}, expected "
                         f"{first_root.hex()}")
    if sr != second_root:
        raise ProofError(f"consistency path leads to second root {sr.hex()}, expected "
                         f"{second_root.hex()}")


def inclusion_holds(index: int, size: int, leaf: bytes, path: Sequence[bytes],
                    root: bytes) -> bool:
    """`verify_inclusion` as a yes or no."""
    try:
        verify_inclusion(index, size, leaf, path, root)
    except ProofError:
        return False
    return True


def consistency_holds(first: int, second: int, first_root: bytes, second_root: bytes,
                      path: Sequence[bytes]) -> bool:
    """`verify_consistency` as a yes or no."""
    try:
        verify_consistency(first, second, first_root, second_root, path)
    except ProofError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class FullSubtree:
    """MTH(D[start:start + 2^level]) with start a multiple of 2^level: what the store persists."""

    start: int
    level: int
    digest: bytes

    @property
    def end(self) -> int:
        return self.start + (1 << self.level)


class CompactRange:
    """The frontier of a growing tree: one full subtree per set bit of the size, O(log n) memory."""

    __slots__ = ("_digests", "_size")

    def __init__(self) -> None:
        self._size = 0
        # The frontier's hashes, largest (leftmost) subtree first; their levels are the set
        # bits of the size, so only the hashes are kept: appends are the writer's hot path.
        self._digests: list[bytes] = []

    @classmethod
    def restore(cls, size: int, full: Subtree) -> CompactRange:
        """Rebuild the frontier of a tree of `size` leaves from stored full subtrees."""
        if size < 0:
            raise ValueError(f"negative tree size {size}")
        compact = cls()
        start = 0
        for level in range(size.bit_length() - 1, -1, -1):
            if size >> level & 1:
                end = start + (1 << level)
                compact._digests.append(full(start, end))
                start = end
        compact._size = size
        return compact

    @property
    def size(self) -> int:
        return self._size

    def copy(self) -> CompactRange:
        twin = CompactRange()
        twin._digests, twin._size = list(self._digests), self._size
        return twin

    @property
    def frontier(self) -> tuple[FullSubtree, ...]:
        levels = [level for level in range(self._size.bit_length() - 1, -1, -1)
                  if self._size >> level & 1]
        nodes, start = [], 0
        for level, digest in zip(levels, self._digests, strict=True):
            nodes.append(FullSubtree(start, level, digest))
            start += 1 << level
        return tuple(nodes)

    def append(self, leaf: bytes) -> list[FullSubtree]:
        """Add one leaf hash; return the full subtrees it completes, the leaf itself first."""
        return self.extend((leaf,))

    def extend(self, leaves: Iterable[bytes], min_level: int = 0) -> list[FullSubtree]:
        """Add leaf hashes in order; return the full subtrees they complete of `min_level` or
        more, smallest first per leaf. The writer's hot path: one call per chunk of rows."""
        digests, done, size = self._digests, [], self._size
        sha256 = hashlib.sha256
        for leaf in leaves:
            if type(leaf) is not bytes or len(leaf) != HASH_SIZE:
                raise ValueError("a leaf hash is 32 bytes")
            if min_level == 0:
                done.append(FullSubtree(size, 0, leaf))
            node, level, merges = leaf, 0, size
            size += 1
            while merges & 1:  # each trailing one bit of the old size is a subtree to merge
                node = sha256(b"\x01" + digests.pop() + node).digest()
                level += 1
                merges >>= 1
                if level >= min_level:
                    done.append(FullSubtree(size - (1 << level), level, node))
            digests.append(node)
            self._size = size
        return done

    def extend_block(self, leaves: Sequence[bytes], min_level: int = 0) -> list[FullSubtree]:
        """extend() for 2^k leaves at a size that is a multiple of 2^k (an aligned block):
        hashed level by level, a list at a time, instead of leaf by leaf; the same tree and
        the same full subtrees (level by level here, not smallest first per leaf)."""
        count = len(leaves)
        if count == 0 or count & (count - 1) or self._size % count:
            raise ValueError(f"{count} leaves at size {self._size} are not an aligned block")
        for leaf in leaves:
            if type(leaf) is not bytes or len(leaf) != HASH_SIZE:
                raise ValueError("a leaf hash is 32 bytes")
        sha256, start = hashlib.sha256, self._size
        done = [FullSubtree(start + i, 0, leaf) for i, leaf in enumerate(leaves)] \
            if min_level == 0 else []
        nodes, level = list(leaves), 0
        while len(nodes) > 1:
            nodes = [sha256(b"\x01" + left + right).digest()
                     for left, right in zip(nodes[::2], nodes[1::2], strict=True)]
            level += 1
            if level >= min_level:
                done.extend(FullSubtree(start + (i << level), level, node)
                            for i, node in enumerate(nodes))
        node, merges, digests = nodes[0], start >> level, self._digests
        while merges & 1:  # the block completes the subtrees its left neighbours began
            node = sha256(b"\x01" + digests.pop() + node).digest()
            level += 1
            merges >>= 1
            if level >= min_level:
                done.append(FullSubtree((start + count) - (1 << level), level, node))
        digests.append(node)
        self._size = start + count
        return done

    def root(self) -> bytes:
        """MTH of everything appended: the frontier folded from the right."""
        if not self._digests:
            return EMPTY_ROOT
        digest = self._digests[-1]
        for left in reversed(self._digests[:-1]):
            digest = node_hash(left, digest)
        return digest
