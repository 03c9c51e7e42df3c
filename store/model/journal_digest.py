"""The Workbench turn journal's `journal_digest` (core-interop.md §5 "Digest"), CORE's recipe."""

from __future__ import annotations

import hashlib
import json
import re
from enum import StrEnum
from typing import Any, Final

from store.model.fields import RecordError

DIGEST_PREFIX: Final = "sha256:"
DIGEST_PATTERN: Final = re.compile(r"sha256:[0-9a-f]{64}")


class TraceIntegrity(StrEnum):
    PIPELINE_TRACE = "pipeline_trace"
    LEGACY_UNHASHED = "legacy_unhashed"


def derived_trace_integrity(trace_hash: Any) -> str:
    """What CORE writes when an entry lacks trace_integrity: hashed iff trace_hash is non-blank."""
    if isinstance(trace_hash, str) and trace_hash.strip():
        return TraceIntegrity.PIPELINE_TRACE.value
    return TraceIntegrity.LEGACY_UNHASHED.value


def canonical_text(entry: Any) -> str:
    # stdlib json, not orjson: CORE's floats are Python repr (1e-06, not orjson's 1e-6).
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _prefixed_sha256(text: str) -> str:
    return DIGEST_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _raw_line_remainder(text: str, entry: dict[str, Any], value: dict[str, Any]) -> str | None:
    """The written line minus its top-level digest member, if the line is CORE's canonical
    form with trace_integrity; None when only re-serialising gives the recipe's bytes."""
    if "trace_integrity" not in value or canonical_text(entry) != text:
        return None
    if "journal_digest" not in value:
        return text
    stated = value["journal_digest"]
    if not isinstance(stated, str):
        return None
    member = ',"journal_digest":' + json.dumps(stated, ensure_ascii=False)
    # A nested object may hold the same member; only a single occurrence is surely top-level.
    if text.count(member) != 1:
        return None
    return text.replace(member, "", 1)


def journal_digest(text: str, value: dict[str, Any]) -> str:
    """`sha256:<hex>` of the entry without journal_digest, as CORE computes it.

    `text` is the line as read (no line ending) and `value` its decoded object. The raw-line
    method hashes what CORE wrote; any other rendering is re-serialised by the recipe.
    """
    try:
        entry = json.loads(text)
    except ValueError as exc:
        raise RecordError(f"record: not JSON ({exc})") from None
    if not isinstance(entry, dict):
        raise RecordError("record: expected an object")
    remainder = _raw_line_remainder(text, entry, value)
    if remainder is not None:
        return _prefixed_sha256(remainder)
    entry.setdefault("trace_integrity", derived_trace_integrity(entry.get("trace_hash")))
    entry.pop("journal_digest", None)
    return _prefixed_sha256(canonical_text(entry))
