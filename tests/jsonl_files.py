"""JSON Lines input files for the tests: UTF-8, non-ASCII characters as they are (no \\u
escapes), so a test's text reaches the store byte for byte as the test wrote it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path


def write_jsonl(path: Path, records: Iterable[object]) -> Path:
    """One line per record: a str is the raw line (broken JSON too), anything else its JSON."""
    text = "".join(
        (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records
    )
    path.write_bytes(text.encode("utf-8"))
    return path
