"""An RFC 9162 verifier written apart from the store (section 2.1.1 tree hash, 2.1.3.2
inclusion, 2.1.4.2 consistency): it imports nothing from store.model.merkle, so a bug shared
by the store's prover and its own verifier cannot pass the tests that use it."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def leaf(entry: bytes) -> bytes:
    return sha256(b"\x00" + entry)


def mth(leaves: Sequence[bytes]) -> bytes:
    """MTH(D[n]) of RFC 9162 §2.1.1, straight recursion over leaf hashes."""
    n = len(leaves)
    if n == 0:
        return sha256(b"")
    if n == 1:
        return leaves[0]
    k = 1
    while k * 2 < n:  # the largest power of two smaller than n
        k *= 2
    return sha256(b"\x01" + mth(leaves[:k]) + mth(leaves[k:]))


def inclusion_ok(index: int, size: int, leaf_hash: bytes, path: Sequence[bytes],
                 root: bytes) -> bool:
    """RFC 9162 §2.1.3.2, step by step."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf_hash
    for p in path:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = sha256(b"\x01" + p + r)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn // 2, sn // 2
        else:
            r = sha256(b"\x01" + r + p)
        fn, sn = fn // 2, sn // 2
    return sn == 0 and r == root


def consistency_ok(first: int, second: int, first_hash: bytes, second_hash: bytes,
                   path: Sequence[bytes]) -> bool:
    """RFC 9162 §2.1.4.2, step by step (first == second: equal roots and an empty proof)."""
    if first == second:
        return first_hash == second_hash and not path
    if first == 0 or first > second or not path:
        return False
    nodes = list(path)
    if first & (first - 1) == 0:  # an exact power of two: prepend first_hash
        nodes.insert(0, first_hash)
    fn, sn = first - 1, second - 1
    while fn % 2 == 1:  # right-shift both until LSB(fn) is not set
        fn, sn = fn // 2, sn // 2
    fr = sr = nodes[0]
    for c in nodes[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr = sha256(b"\x01" + c + fr)
            sr = sha256(b"\x01" + c + sr)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn // 2, sn // 2
        else:
            sr = sha256(b"\x01" + sr + c)
        fn, sn = fn // 2, sn // 2
    return fr == first_hash and sr == second_hash and sn == 0
