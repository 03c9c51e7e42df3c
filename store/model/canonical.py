"""Canonical JSON and sha256 ids, byte-for-byte the recipe CORE uses."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson


def canonical_reference(obj: Any) -> bytes:
    """CORE's recipe, literally: sorted keys, no whitespace, UTF-8, non-ASCII kept."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode(
        "utf-8"
    )


def canonical(obj: Any) -> bytes:
    """Same bytes as `canonical_reference` (a property test holds them equal), ~10x faster.

    orjson escapes exactly what json.dumps(ensure_ascii=False) escapes and sorts keys by
    code point; values it cannot encode (integers beyond 64 bits) take the reference path.
    """
    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return canonical_reference(obj)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_id(obj: Any) -> str:
    """64 lowercase hex characters naming `obj`'s canonical form."""
    return sha256_hex(canonical(obj))
