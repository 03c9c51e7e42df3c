"""The transparency log as the API reads it: tree head, proofs, leaves of stored records."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select

from store.db.log.stored_log import (
    LeafBlocks,
    StoredLog,
    latest_head,
    leaf_rows,
    log_entry,
    stored_origin,
)
from store.db.queries.as_of import snapshot_at
from store.db.queries.errors import QueryError
from store.db.queries.records import ConsistencyProof, InclusionProof, LedgerStatus
from store.db.schema.record_kinds import LEDGERED_KEYS
from store.db.schema.tables import metadata, tree_heads
from store.model.merkle import leaf_hash

DEFAULT_ORIGIN_PREFIX = "core-audit/"


def provisional_origin(connection: Connection) -> str:
    """The origin a checkpoint note carries before `core-audit checkpoint` has chosen one:
    `core-audit/` and the first tree head's root (hex, 16 digits; `empty` without one).
    Stable as the log grows, so choosing it later keeps the notes shown so far valid. The
    CLI, the Python API and the console all name a note so."""
    first = connection.execute(
        select(tree_heads.c.root_hash).order_by(tree_heads.c.tree_size).limit(1)).scalar()
    return DEFAULT_ORIGIN_PREFIX + (first[:16] if first else "empty")


def note_origin(connection: Connection, origin: str | None) -> str:
    """The origin a checkpoint note carries: the store's, or the provisional one."""
    return origin if origin is not None else provisional_origin(connection)


def ledger_status(connection: Connection, as_of: int | None = None) -> LedgerStatus:
    """The newest tree head, or the head of tree size `as_of`."""
    snapshot = snapshot_at(connection, as_of)
    if snapshot is None:
        head = latest_head(connection)
        return LedgerStatus(tree_size=head.size, root_hash=head.root_hex,
                            origin=stored_origin(connection))
    return LedgerStatus(tree_size=snapshot.tree_size, root_hash=snapshot.root_hash,
                        origin=stored_origin(connection))


def _size(connection: Connection, tree_size: int | None, at_least: int) -> int:
    size = latest_head(connection).size
    if tree_size is None:
        return size
    if not at_least <= tree_size <= size:
        raise QueryError(f"treeSize: must be between {at_least} and the tree size {size}, "
                         f"got {tree_size}")
    return tree_size


def _proof(connection: Connection, table: str, row: Mapping[str, Any],
           tree_size: int | None, blocks: LeafBlocks | None = None) -> InclusionProof:
    index = row["seq"] - 1
    size = _size(connection, tree_size, index + 1)
    log = StoredLog(connection, blocks)
    entry = log_entry(table, dict(row))
    return InclusionProof(leaf_index=index, tree_size=size, entry=entry.decode("utf-8"),
                          leaf_hash=leaf_hash(entry).hex(),
                          inclusion_path=[h.hex() for h in log.inclusion(index, size)],
                          root_hash=log.root(size).hex())


def inclusion_proof(connection: Connection, table: str, key: tuple[object, ...],
                    tree_size: int | None = None, *, blocks: LeafBlocks | None = None
                    ) -> InclusionProof | None:
    """RFC 9162 section 2.1.3 proof that a stored row is a leaf of the tree of `tree_size`
    leaves (default: the newest tree head); None when there is no such row. `blocks`: leaf
    hashes kept across calls (a server's)."""
    t = metadata.tables[table]
    columns = [t.c[name] for name in LEDGERED_KEYS[table]]
    row = connection.execute(select(t).where(*(c == v for c, v in zip(
        columns, key, strict=True)))).mappings().first()
    return None if row is None else _proof(connection, table, dict(row), tree_size, blocks)


def inclusion_proof_at(connection: Connection, index: int, tree_size: int | None = None
                       ) -> InclusionProof:
    """The inclusion proof of leaf `index`: the row with seq = index + 1, whichever table."""
    size = latest_head(connection).size
    if not 0 <= index < size:  # checked before any SQL: an index may not fit a column
        raise QueryError(f"leaf index: must be between 0 and {size - 1}, got {index}"
                         if size else f"leaf index {index}: the log is empty")
    for table in LEDGERED_KEYS:
        t = metadata.tables[table]
        row = connection.execute(select(t).where(t.c.seq == index + 1)).mappings().first()
        if row is not None:
            return _proof(connection, table, dict(row), tree_size)
    raise QueryError(f"leaf index {index}: no row has seq {index + 1}")


def log_entries(connection: Connection, start: int = 0, end: int | None = None
                ) -> Iterator[tuple[int, bytes]]:
    """(leaf index, entry) for start <= index < end (default: the newest tree head), streamed."""
    size = latest_head(connection).size
    stop = size if end is None else end
    if not 0 <= start <= stop <= size:
        raise QueryError(f"leaf range: needs 0 <= start <= end <= the tree size {size}, "
                         f"got start {start}, end {stop}")
    return ((seq - 1, log_entry(table, row)) for seq, table, row in
            leaf_rows(connection, start, stop))


def consistency_proof(connection: Connection, first: int, second: int | None = None, *,
                      blocks: LeafBlocks | None = None) -> ConsistencyProof:
    """RFC 9162 section 2.1.4 proof that the tree of `second` leaves extends that of `first`."""
    size = _size(connection, second, 0)
    if not 0 <= first <= size:
        raise QueryError(f"fromSize: must be between 0 and {size}, got {first}")
    log = StoredLog(connection, blocks)
    return ConsistencyProof(first=first, second=size, first_root=log.root(first).hex(),
                            second_root=log.root(size).hex(),
                            consistency_path=[h.hex() for h in log.consistency(first, size)])


MAX_CHANGES = 1000  # leaves a `changes` answer lists: one page; ask from nextFromSize for more


@dataclass(frozen=True, slots=True)
class Changes:
    """The leaves appended between two tree sizes, one page at a time, and the RFC 9162
    consistency proof that the tree at the page's end extends the tree at its start: nothing
    of the earlier changed, these were added. `next_from`: where the next page starts (None:
    this page reaches the size asked for)."""

    proof: ConsistencyProof
    entries: list[tuple[int, str]]  # (leaf index, entry), every leaf from first to second
    next_from: int | None = None


def changes(connection: Connection, from_size: int, to_size: int | None = None) -> Changes:
    """What was appended between the trees of `from_size` and `to_size` leaves (any sizes the
    log has passed, 0 to the newest head's; `to_size` default: the newest), at most
    MAX_CHANGES leaves a page, with the proof for that page; QueryError otherwise."""
    head = latest_head(connection).size
    end = head if to_size is None else to_size
    if not 0 <= from_size <= head:
        raise QueryError(f"fromSize: must be between 0 and the tree size {head}, got "
                         f"{from_size}")
    if not 0 <= end <= head:
        raise QueryError(f"toSize: must be between 0 and the tree size {head}, got {end}")
    if from_size > end:
        raise QueryError(f"fromSize {from_size} is above toSize {end}")
    stop = min(end, from_size + MAX_CHANGES)
    proof = consistency_proof(connection, from_size, stop)
    entries = [(index, entry.decode("utf-8"))
               for index, entry in log_entries(connection, from_size, stop)]
    return Changes(proof, entries, stop if stop < end else None)
