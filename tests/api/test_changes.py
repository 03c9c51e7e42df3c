"""What changed between two tree heads: GraphQL `changes(fromSize, toSize)` and `export
--since N --as-of M --proof FILE` give exactly the records appended between them, and a
consistency proof that verifies (checked by the independent RFC 9162 verifier)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES, raw_query
from cli_runs import cli
from rfc9162_reference import consistency_ok


def ok(*args: str | Path) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def three_batches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("changes")
    db = folder / "audit.db"
    ok("keygen", "audit.example/log", "--out", folder / "log")
    for path in EXAMPLE_FILES:
        ok("ingest", "--db", db, path)
    ok("checkpoint", "--db", db, "--key", folder / "log.key", "--origin", "audit.example/log")
    heads = [(int(str(s)), str(r)) for s, r in raw_query(
        f"sqlite:///{db}", "SELECT tree_size, root_hash FROM tree_heads ORDER BY tree_size")]
    log = [json.loads(line) for line in ok("log", "--db", db).splitlines()]
    return {"db": db, "folder": folder, "heads": heads, "log": log}


def _changes(db: Path, first: int, second: int | None) -> dict[str, object]:
    variables = json.dumps({"from": first, "to": second})
    query = ("query($from: LogIndex!, $to: LogIndex) { changes(fromSize: $from, toSize: $to) "
             "{ fromSize toSize fromRoot toRoot consistencyPath entries { leafIndex entry } } }")
    return json.loads(ok("query", "--db", db, query, "--variables", variables))["data"][
        "changes"]


def test_changes_are_exactly_the_leaves_between_two_heads(three_batches: dict[str, object]):
    heads: list[tuple[int, str]] = three_batches["heads"]  # type: ignore[assignment]
    log: list[dict[str, object]] = three_batches["log"]  # type: ignore[assignment]
    (size_1, root_1), (size_2, root_2) = heads[0], heads[1]
    found = _changes(three_batches["db"], size_1, size_2)  # type: ignore[arg-type]
    assert (found["fromSize"], found["toSize"], found["fromRoot"], found["toRoot"]) == (
        size_1, size_2, root_1, root_2)
    assert found["entries"] == [{"leafIndex": e["index"], "entry": e["entry"]}
                                for e in log[size_1:size_2]]
    path = [bytes.fromhex(h) for h in found["consistencyPath"]]  # type: ignore[union-attr]
    assert consistency_ok(size_1, size_2, bytes.fromhex(root_1), bytes.fromhex(root_2), path)
    newest = _changes(three_batches["db"], 0, None)  # type: ignore[arg-type]
    assert newest["toSize"] == heads[-1][0] and len(newest["entries"]) == heads[-1][0]  # type: ignore[arg-type]


def test_changes_between_any_sizes_the_log_has_passed(three_batches: dict[str, object]):
    """Not only recorded heads: any size from 0 to the newest head's is a tree the log had."""
    log: list[dict[str, object]] = three_batches["log"]  # type: ignore[assignment]
    found = _changes(three_batches["db"], 5, 11)  # type: ignore[arg-type]
    assert [e["leafIndex"] for e in found["entries"]] == list(range(5, 11))  # type: ignore[union-attr]
    assert found["entries"] == [{"leafIndex": e["index"], "entry": e["entry"]}
                                for e in log[5:11]]
    path = [bytes.fromhex(h) for h in found["consistencyPath"]]  # type: ignore[union-attr]
    assert consistency_ok(5, 11, bytes.fromhex(str(found["fromRoot"])),
                          bytes.fromhex(str(found["toRoot"])), path)


@pytest.mark.parametrize(("first", "second", "message"), [
    (100000, None, "fromSize: must be between 0 and the tree size"),
    ("second", "first", "is above toSize"),
])
def test_changes_between_sizes_the_log_never_had_are_refused(
        three_batches: dict[str, object], first: object, second: object, message: str):
    heads: list[tuple[int, str]] = three_batches["heads"]  # type: ignore[assignment]
    sizes = {"first": heads[0][0], "second": heads[1][0]}
    variables = json.dumps({"from": sizes.get(str(first), first),
                            "to": sizes.get(str(second), second)})
    result = cli("query", "--db", three_batches["db"],
                 "query($from: LogIndex!, $to: LogIndex) { changes("
                 "fromSize: $from, toSize: $to) { toSize } }", "--variables", variables)
    assert result.exit_code == 1 and message in result.stdout


def test_export_since_a_head_with_its_proof(three_batches: dict[str, object]):
    db: Path = three_batches["db"]  # type: ignore[assignment]
    folder: Path = three_batches["folder"]  # type: ignore[assignment]
    heads: list[tuple[int, str]] = three_batches["heads"]  # type: ignore[assignment]
    (size_1, root_1), (size_3, root_3) = heads[0], heads[-1]
    rows = [json.loads(line) for line in ok(
        "export", "residuals", "--db", db, "--format", "jsonl", "--since", str(size_1),
        "--as-of", str(size_3), "--proof", folder / "since.json").splitlines()]
    expected = [json.loads(str(e["entry"]))["row"] for e in three_batches["log"]  # type: ignore[attr-defined]
                if json.loads(str(e["entry"]))["table"] == "contract_residuals"
                and size_1 < int(e["index"]) + 1 <= size_3]
    assert rows and [r["residual_id"] for r in rows] == [r["residual_id"] for r in expected]
    assert all(size_1 < r["seq"] <= size_3 for r in rows)
    proof = json.loads((folder / "since.json").read_text())
    assert (proof["first"], proof["first_root"], proof["second"], proof["second_root"]) == (
        size_1, root_1, size_3, root_3)
    kept = json.loads(ok("checkpoints", "--db", db, "--json").splitlines()[0])
    (folder / "cp.txt").write_text(kept["note"], encoding="utf-8")
    valid = ok("verify-proof", folder / "since.json", "--checkpoint", folder / "cp.txt",
               "--key", folder / "log.pub")
    assert valid.startswith(f"valid: the tree of size {size_3}")
    # the export itself: exactly the residual leaves between the two trees
    export = folder / "new.jsonl"
    export.write_text(ok("export", "residuals", "--db", db, "--format", "jsonl", "--since",
                         str(size_1), "--proof", folder / "since.json"))
    exact = ok("verify-proof", folder / "since.json", "--checkpoint", folder / "cp.txt",
               "--key", folder / "log.pub", "--records", export)
    assert (f"; the {len(rows)} records are exactly the leaves of contract_residuals between "
            "them") in exact
    lines = export.read_text().splitlines(keepends=True)
    for damaged, message in (
            (lines[:-1], "1 leaves of contract_residuals between the trees are not in the "
                         "records"),
            ([lines[0], *lines], "is not after the previous record's"),
            ([lines[0].replace('"residual_code":"', '"residual_code":"X'), *lines[1:]],
             "is not leaf")):
        export.write_text("".join(damaged))
        refused = cli("verify-proof", folder / "since.json", "--checkpoint", folder / "cp.txt",
                      "--key", folder / "log.pub", "--records", export)
        assert refused.exit_code == 1 and message in refused.stderr, refused.stderr
    # a leaf hash changed in the proof file: the leaves no longer make the checkpoint's root
    document = json.loads((folder / "since.json").read_text())
    document["leaves"][0][1] = "00" * 32
    (folder / "forged.json").write_text(json.dumps(document))
    forged = cli("verify-proof", folder / "forged.json", "--checkpoint", folder / "cp.txt",
                 "--key", folder / "log.pub")
    assert forged.exit_code == 1 and "the leaves make root" in forged.stderr
    refused = cli("export", "residuals", "--db", db, "--format", "jsonl", "--since", "7")
    assert refused.exit_code == 2 and "7 is not a tree size this store recorded" in refused.stderr
