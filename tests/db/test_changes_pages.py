"""GraphQL `changes` over a batch of more than 1,000 leaves (issue 31): one batch has one
head, so the answer comes in pages of at most 1,000 entries, each with its consistency
proof, chained by nextFromSize."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runs import cli
from jsonl_files import write_jsonl
from rfc9162_reference import consistency_ok
from store_support import distinct_frames


def ok(*args: str | Path) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_changes_of_a_batch_over_a_thousand_leaves_come_in_proven_pages(tmp_path: Path):
    """One batch of more than 1,000 leaves has one head: pages of at most 1,000 entries, each
    with its consistency proof, chained by nextFromSize, make up exactly the log."""
    db = tmp_path / "big.db"
    ok("ingest", "--db", db, write_jsonl(tmp_path / "big.jsonl", distinct_frames(250, "big")))
    log = [json.loads(line) for line in ok("log", "--db", db).splitlines()]
    assert len(log) > 1500
    query = ("query($from: LogIndex!) { changes(fromSize: $from) { fromSize toSize fromRoot toRoot "
             "consistencyPath nextFromSize entries { leafIndex entry } } }")
    start, seen, pages = 0, [], 0
    while True:
        page = json.loads(ok("query", "--db", db, query, "--variables",
                             json.dumps({"from": start})))["data"]["changes"]
        pages += 1
        assert page["fromSize"] == start and len(page["entries"]) <= 1000
        assert page["toSize"] == start + len(page["entries"])
        path = [bytes.fromhex(h) for h in page["consistencyPath"]]
        assert consistency_ok(start, page["toSize"], bytes.fromhex(page["fromRoot"]),
                              bytes.fromhex(page["toRoot"]), path) or start == 0
        seen.extend(page["entries"])
        if page["nextFromSize"] is None:
            break
        start = page["nextFromSize"]
        assert start == page["toSize"]
    assert pages == 2
    assert seen == [{"leafIndex": e["index"], "entry": e["entry"]} for e in log]
