"""The proof file `export --since N --proof FILE` writes (format: store.model.since_proof):
the consistency proof between the two trees, the frontier of the older one and every leaf hash
between them, streamed."""

from __future__ import annotations

import dataclasses
from typing import IO

import orjson
from sqlalchemy import Connection

from store.db.log.stored_log import StoredLog, leaf_rows, log_entry
from store.db.queries.ledger import consistency_proof
from store.db.schema.record_kinds import LEDGERED_KEYS
from store.model.merkle import CompactRange, leaf_hash
from store.model.since_proof import FORMAT

LEAVES_A_LINE = 64  # leaf hashes written a line at a time: the file stays readable


def write_since_proof(connection: Connection, stream: IO[bytes], kind: str, table: str,
                      filtered: bool, first: int, second: int | None) -> None:
    """The proof that the leaves between the trees of `first` and `second` (None: the newest)
    are what they are, for `verify-proof FILE --records EXPORT.jsonl`."""
    proof = consistency_proof(connection, first, second)  # QueryError on a bad size
    frontier = CompactRange.restore(first, StoredLog(connection).full).frontier
    tables = sorted(LEDGERED_KEYS)
    number = {name: i for i, name in enumerate(tables)}
    head = {"format": FORMAT, "kind": kind, "table": table, "filtered": filtered,
            **dataclasses.asdict(proof), "frontier": [node.digest.hex() for node in frontier],
            "tables": tables}
    stream.write(orjson.dumps(head)[:-1] + b',\n"leaves":[')
    line: list[list[object]] = []
    written = 0
    for _, name, row in leaf_rows(connection, first, proof.second):
        line.append([number[name], leaf_hash(log_entry(name, row)).hex()])
        if len(line) == LEAVES_A_LINE:
            stream.write((b"," if written else b"") + b"\n" + orjson.dumps(line)[1:-1])
            written += len(line)
            line = []
    if line:
        stream.write((b"," if written else b"") + b"\n" + orjson.dumps(line)[1:-1])
        written += len(line)
    if written != proof.second - first:
        from store.db.log.stored_log import LogError

        raise LogError(f"leaves {first}..{proof.second - 1} do not have one row each")
    stream.write(b"\n]}\n")
