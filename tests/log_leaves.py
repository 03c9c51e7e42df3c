"""The leaves of a store's transparency log, worked out from its raw rows as docs/design.md
describes them, independently of the store's own code."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from raw_reads import query, table_rows

from store.db.schema.tables import metadata

# The leaf tables and their keys (docs/design.md: every stored row is one leaf, in seq order).
LEAF_KEYS = {
    "ingest_batches": ("batch_id",),
    "contract_assessments": ("assessment_id",),
    "contract_residuals": ("residual_id",),
    "residual_occurrences": ("assessment_id", "ordinal"),
    "surface_records": ("surface_id",),
    "surface_occurrences": ("occurrence_id",),
    "turns": ("turn_key",),
    "turn_constructions": ("turn_key",),  # revision 0012
    "turn_assessments": ("turn_key", "ordinal"),  # revision 0012
}
_BOOLEANS = {"runnable", "refusal_emitted", "hedge_injected"}
_LATE = {"surface_form", "hops", "hop_chain_ids", "candidate_chain_ids", "surface_prefix",
         "checked_against", "turn_key"}


def leaf_entry(table: str, row: dict[str, object]) -> bytes:
    """docs/design.md's leaf entry, written out here: canonical JSON of the table and the stored
    values, without seq and without a null column that revision 0005 added."""
    values = {k: (bool(v) if k in _BOOLEANS and v is not None else v)
              for k, v in row.items() if k != "seq" and not (v is None and k in _LATE)}
    return json.dumps({"table": table, "row": values}, ensure_ascii=False,
                      separators=(",", ":"), sort_keys=True).encode("utf-8")


def history(path: Path | str) -> list[tuple[object, ...]]:
    """The append history, whatever the revision: (seq, table, key, sha256 of the row's
    entry) in seq order — from the hash chain before revision 0006, from the rows after."""
    present = {name for (name,) in query(path, _TABLE_NAMES[isinstance(path, str)])}
    if "ledger" in present:
        return [tuple(r) for r in query(
            path, "SELECT seq, table_name, row_key, row_hash FROM ledger ORDER BY seq")]
    found = []
    for table, key in LEAF_KEYS.items():
        if table not in present:
            continue
        known = {column.name for column in metadata.tables[table].columns}
        for row in table_rows(path, table):
            # A column this version does not know (a later revision's) is not in its leaf.
            row = {k: v for k, v in row.items() if k in known}
            found.append((row["seq"], table, "/".join(str(row[c]) for c in key),
                          hashlib.sha256(leaf_entry(table, row)).hexdigest()))
    return sorted(found, key=lambda item: item[0])  # type: ignore[arg-type, return-value]


_TABLE_NAMES = {
    False: "SELECT name FROM sqlite_master WHERE type = 'table'",
    True: "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()",
}


def leaf_entries(path: Path | str) -> list[bytes]:
    """Every stored row's entry, in seq order: the leaves of the store's tree."""
    found = [(row["seq"], leaf_entry(table, row)) for table in LEAF_KEYS
             for row in table_rows(path, table)]
    return [entry for _, entry in sorted(found, key=lambda item: item[0])]
