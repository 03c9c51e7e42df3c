"""Take docs/console.png: the console's overview of the demo store (the bundled examples), in
Debian's headless Chromium at 1400x900, offline.

    .venv/bin/python scripts/console_screenshot.py [--out docs/console.png]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from browser_runs import chromium, serving  # noqa: E402

from store.api.app import create_app  # noqa: E402
from store.db.audit_store import AuditStore  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "console.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="core-audit-shot-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'core-audit.db'}"
        with AuditStore.open(url) as store:
            for path in sorted((REPO / "examples").glob("*.jsonl")):
                store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
        with AuditStore.open(url, read_only=True) as db, serving(
                create_app(db, close_db_on_shutdown=False)) as origin, chromium() as browser:
            browser.get(f"{origin}/")
            browser.save_screenshot(str(args.out))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
