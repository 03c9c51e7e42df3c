"""Each benchmark says what it does before it is run: `--help` gives its whole description
(where it builds a store and how big, what it times beside what floor) and a sentence for every
option — a newcomer reads it before spending ten minutes and a gigabyte of disk."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if "ArgumentParser(" in p.read_text("utf-8"))


def test_there_are_benchmarks_to_check() -> None:
    assert {"tiles.py", "ingest.py", "verify.py"} <= {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_help_gives_the_whole_description_and_every_option(script: Path) -> None:
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                          text=True, timeout=120, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr
    description, _, options = done.stdout.partition("\noptions:\n")
    # The description ends where the docstring ends, not mid-sentence.
    assert description.rstrip().endswith((".", ")")), description[-200:]
    # Every option (but -h) is followed by its help text, on its line or the next.
    entries = re.findall(r"^  (-[-\w]+(?: [A-Z_]+| \{[\w,]+\})?(?:, [-\w]+)?)(.*)$",
                         options, flags=re.M)
    assert entries, options
    lines = options.splitlines()
    for flag, rest in entries:
        if flag.startswith("-h"):
            continue
        at = next(i for i, line in enumerate(lines) if line.startswith(f"  {flag}"))
        following = lines[at + 1] if at + 1 < len(lines) else ""
        has_help = rest.strip() or following.startswith(" " * 8)
        assert has_help, f"{script.name}: {flag} has no help"


def test_the_tiles_benchmark_says_how_big_a_store_it_builds() -> None:
    done = subprocess.run([sys.executable, str(BENCH / "tiles.py"), "--help"],
                          capture_output=True, text=True, timeout=120, cwd=BENCH.parent)
    assert "660 MB" in done.stdout
