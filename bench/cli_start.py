"""CLI start-up: wall time of `core-audit` commands a user types, beside `python -c pass` (the
interpreter's own start, the floor) measured in the same run, rounds interleaved.

    .venv/bin/python bench/cli_start.py [--rounds 15] [--base DIR]

Builds a small store of the bundled examples in a temp dir (a checkpoint and an inclusion proof
from it) and times, in each round, one run of every command (`--help`, `--version`,
`verify-proof`, `checkpoint`, `prove`, `verify`). `--base DIR` also times the same commands
from another source tree (e.g. `git archive` of an earlier commit) in the same rounds
(PYTHONPATH=DIR), for a before/after. Prints median and best; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE_AUDIT = str(Path(sys.executable).parent / "core-audit")
GOALS = {"--help": 0.25, "verify-proof": 0.4}


def run(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - start


def _commands(env: dict[str, str]) -> dict[str, list[str]]:
    """A store of the bundled examples made by this tree (its own schema revision), a
    checkpoint and an inclusion proof from it, and the commands timed on them."""
    folder = Path(tempfile.mkdtemp(prefix="cli-start-"))
    db = str(folder / "audit.db")
    subprocess.run([CORE_AUDIT, "ingest", "--db", db, *map(str, sorted(
        (ROOT / "examples").glob("*.jsonl")))], env=env, check=True, capture_output=True)
    checkpoint = folder / "cp.txt"
    checkpoint.write_bytes(subprocess.run([CORE_AUDIT, "checkpoint", "--db", db], env=env,
                                          check=True, capture_output=True).stdout)
    proof = folder / "proof.json"
    proof.write_bytes(subprocess.run([CORE_AUDIT, "prove", "--db", db, "--index", "3"],
                                     env=env, check=True, capture_output=True).stdout)
    return {
        "--help": ["--help"],
        "--version": ["--version"],
        # No key here: the check of the proof against the checkpoint alone (the start is
        # what is timed; without --consistency-only the command refuses, as it should).
        "verify-proof": ["verify-proof", str(proof), "--checkpoint", str(checkpoint),
                         "--consistency-only"],
        "checkpoint": ["checkpoint", "--db", db],
        "prove": ["prove", "--db", db, "--index", "3"],
        "verify": ["verify", "--db", db],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15,
                        help="rounds, each timing every command once (interleaved)")
    parser.add_argument("--base", type=Path, help="another source tree to time beside this one")
    args = parser.parse_args()

    trees = {"this tree": dict(os.environ, PYTHONPATH=str(ROOT))}
    if args.base:
        trees["base"] = dict(os.environ, PYTHONPATH=str(args.base.resolve()))
    commands = {tree: _commands(tree_env) for tree, tree_env in trees.items()}
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        times.setdefault(("floor", "python -c pass"), []).append(
            run([sys.executable, "-c", "pass"], trees["this tree"]))
        for name in commands["this tree"]:
            for tree, tree_env in trees.items():
                times.setdefault((tree, name), []).append(
                    run([CORE_AUDIT, *commands[tree][name]], tree_env))

    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{args.rounds} rounds, interleaved")
    print(f"{'tree':10} {'command':16} {'median s':>9} {'best s':>8} {'x floor':>8}  goal")
    floor = statistics.median(times[("floor", "python -c pass")])
    for (tree, name), values in times.items():
        median = statistics.median(values)
        goal = GOALS.get(name) if tree == "this tree" else None
        verdict = "" if goal is None else \
            f"<= {goal} s: {'met' if median <= goal else 'NOT met'}"
        print(f"{tree:10} {name:16} {median:9.3f} {min(values):8.3f} "
              f"{median / floor:7.1f}x  {verdict}")


if __name__ == "__main__":
    main()
