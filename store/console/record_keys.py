"""The record kinds the console has pages for, their keys as a path names them, and the
not-found answer for a key no record holds."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from store.db.queries import MAX_KEY

if TYPE_CHECKING:
    from store.console.pages import Head

_HEX_ID = re.compile(r"[0-9a-f]{64}", re.ASCII)

# page path -> (ledgered table, what its key is called, a heading, its `prove` option)
RECORD_KINDS: dict[str, tuple[str, str, str, str]] = {
    "residuals": ("contract_residuals", "residual_id", "Residual", "residual"),
    "assessments": ("contract_assessments", "assessment_id", "Assessment", "assessment"),
    "surfaces": ("surface_records", "surface_id", "Surface", "surface"),
    "turns": ("turns", "turn_key", "Turn", "turn"),
    "batches": ("ingest_batches", "batch_id", "Batch", ""),  # prove --index
}


def not_found(message: str) -> Exception:
    from store.console.pages import NotFound

    return NotFound(message)


def record_key(kind: str, text: str) -> str | int:
    """The path's key, checked: 64 lowercase hex digits, or a batch's number."""
    _, key_name, heading, _ = RECORD_KINDS[kind]
    if kind == "batches":
        if not text.isascii() or not text.isdigit() or len(text) > 19 or int(text) > MAX_KEY:
            raise not_found(f"no batch {text[:80]!r}: a batch id is a whole number")
        return int(text)
    if not _HEX_ID.fullmatch(text):
        raise not_found(f"no {heading.lower()} {text[:80]!r}: a {key_name} is 64 lowercase "
                         "hex digits")
    return text


def then(head: Head) -> str:
    """Where a not-found message names the tree size its page reads at."""
    return "" if head.as_of is None else f" at tree size {head.as_of}"
