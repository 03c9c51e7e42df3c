"""`export KIND --since N --proof FILE`: what an auditor needs to check, offline, that the
exported records are exactly the leaves of KIND's table appended between the trees of N and M
leaves (`verify-proof FILE --records EXPORT.jsonl`).

    {"format": "core-audit-since/1", "kind", "table", "filtered",
     "first", "second", "first_root", "second_root", "consistency_path",
     "frontier": [hex of the full subtrees that make the tree of N leaves, largest first],
     "tables": [table names], "leaves": [[table number, hex leaf hash], ...]}

The frontier rebuilds the root at N; appending every leaf hash between N and M rebuilds the
root at M, which the checkpoint (checked against the auditor's keys) vouches for: the leaf
list is then exactly the log between the two trees, and each exported record (its canonical
entry: the row less its seq, as `log` shows it) must hash to the leaf at its seq - 1, its
table's. Unfiltered, every leaf of the table between them must be exported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from store.errors import ProofError
from store.model.canonical import canonical
from store.model.checkpoint import Checkpoint
from store.model.merkle import CompactRange, digest_from_hex, leaf_hash

FORMAT = "core-audit-since/1"


def is_since_proof(document: Mapping[str, Any]) -> bool:
    return document.get("format") == FORMAT


def _hashes(values: object, what: str) -> list[bytes]:
    if not isinstance(values, list):
        raise ProofError(f"{what} is not a list")
    try:
        return [digest_from_hex(v, f"{what}[{i}]") for i, v in enumerate(values)]
    except (ValueError, TypeError) as exc:
        raise ProofError(str(exc)) from exc


def _size(document: Mapping[str, Any], name: str) -> int:
    value = document.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProofError(f"{name} is not a tree size: {str(value)[:80]}")
    return value


def _leaves(document: Mapping[str, Any]) -> tuple[list[str], list[tuple[int, bytes]]]:
    tables, leaves = document.get("tables"), document.get("leaves")
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
        raise ProofError("tables is not a list of table names")
    if not isinstance(leaves, list):
        raise ProofError("leaves is not a list")
    found = []
    for i, item in enumerate(leaves):
        if (not isinstance(item, list) or len(item) != 2 or isinstance(item[0], bool)
                or not isinstance(item[0], int) or not 0 <= item[0] < len(tables)):
            raise ProofError(f"leaves[{i}] is not [table number, hex leaf hash]")
        try:
            found.append((item[0], digest_from_hex(item[1], f"leaves[{i}]")))
        except (ValueError, TypeError) as exc:
            raise ProofError(str(exc)) from exc
    return tables, found


def check_since(document: Mapping[str, Any], checkpoint: Checkpoint,
                records: Iterable[bytes] | None = None,
                late_columns: Mapping[str, frozenset[str]] | None = None) -> str:
    """What the document shows about the checkpoint's tree, and with `records` (the lines of
    the export's JSONL) that they are the table's leaves between the two trees; ProofError
    saying what does not hold. `late_columns`: per table, the columns a later revision added
    (record_kinds.LATE_COLUMNS, given by the caller: the domain layer reads no schema)."""
    first, second = _size(document, "first"), _size(document, "second")
    if second != checkpoint.size:
        raise ProofError(f"the proof is to the tree of size {second}; the checkpoint is size "
                         f"{checkpoint.size}")
    if first > second:
        raise ProofError(f"first {first} is above second {second}")
    frontier = iter(_hashes(document.get("frontier"), "frontier"))
    try:
        tree = CompactRange.restore(first, lambda _start, _end: next(frontier))
    except StopIteration:
        raise ProofError(f"frontier has too few hashes for a tree of {first} leaves") from None
    if next(frontier, None) is not None:
        raise ProofError(f"frontier has too many hashes for a tree of {first} leaves")
    first_root = tree.root()
    claimed = _hashes([document.get("first_root")], "first_root")[0]
    if first_root != claimed:
        raise ProofError(f"the frontier makes root {first_root.hex()} at size {first}, not "
                         f"first_root {claimed.hex()}")
    tables, leaves = _leaves(document)
    if len(leaves) != second - first:
        raise ProofError(f"{len(leaves)} leaf hashes for the {second - first} leaves between "
                         f"sizes {first} and {second}")
    tree.extend(digest for _, digest in leaves)
    if tree.root() != checkpoint.root:
        raise ProofError(f"the leaves make root {tree.root().hex()} at size {second}; the "
                         f"checkpoint's root is {checkpoint.root.hex()}")
    said = (f"the tree of size {second}, root {checkpoint.root.hex()} ({checkpoint.origin}) "
            f"is the tree of size {first}, root {first_root.hex()}, and the {second - first} "
            "leaves listed")
    if records is None:
        return said
    return said + "; " + _check_records(document, first, tables, leaves, records,
                                        late_columns or {})


def _check_records(document: Mapping[str, Any], first: int, tables: list[str],
                   leaves: list[tuple[int, bytes]], records: Iterable[bytes],
                   late_columns: Mapping[str, frozenset[str]]) -> str:
    table = document.get("table")
    if not isinstance(table, str):
        raise ProofError("table is not a table name")
    late = late_columns.get(table, frozenset())
    seen: list[int] = []
    for number, line in enumerate(records, 1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ProofError(f"records line {number}: not JSON: {exc}") from exc
        seq = record.get("seq") if isinstance(record, dict) else None
        if isinstance(seq, bool) or not isinstance(seq, int):
            raise ProofError(f"records line {number}: no seq")
        index = seq - 1
        if not first <= index < first + len(leaves):
            raise ProofError(f"records line {number}: seq {seq} is not a leaf between sizes "
                             f"{first} and {first + len(leaves)}")
        # A list or object is a JSON column the export nested: the row keeps it as canonical
        # JSON text (no stored column holds a list or object itself).
        values = {k: canonical(v).decode("utf-8") if isinstance(v, list | dict) else v
                  for k, v in record.items() if k != "seq" and not (v is None and k in late)}
        at, digest = leaves[index - first]
        if tables[at] != table or leaf_hash(canonical({"table": table, "row": values})) != digest:
            raise ProofError(f"records line {number}: the record of seq {seq} is not leaf "
                             f"{index} (its entry hashes to another leaf, or the leaf is of "
                             f"table {tables[at]})")
        if seen and index <= seen[-1]:
            raise ProofError(f"records line {number}: seq {seq} is not after the previous "
                             "record's (repeated or out of order)")
        seen.append(index)
    expected = [first + i for i, (at, _) in enumerate(leaves) if tables[at] == table]
    if document.get("filtered") is not False:
        return (f"{len(seen)} exported records are leaves of {table} between them ({len(expected)}"
                " in all: the export was filtered, the others are not checked)")
    if seen != expected:
        missing = sorted(set(expected) - set(seen))
        raise ProofError(f"{len(missing)} leaves of {table} between the trees are not in the "
                         f"records (first: leaf {missing[0]})")
    return f"the {len(seen)} records are exactly the leaves of {table} between them"
