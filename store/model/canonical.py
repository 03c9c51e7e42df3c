"""Canonical JSON and sha256 ids, byte-for-byte the recipe CORE uses."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical(obj: Any) -> bytes:
    """CORE's canonical encoding: sorted keys, no whitespace, UTF-8, non-ASCII kept."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode(
        "utf-8"
    )


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_id(obj: Any) -> str:
    """64 lowercase hex characters naming `obj`'s canonical form."""
    return sha256_hex(canonical(obj))
