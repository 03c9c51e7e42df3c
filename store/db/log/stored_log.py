"""The transparency log over every stored row (RFC 9162): leaves, subtrees, heads and proofs.

A row of a LEDGERED_KEYS table is leaf `seq - 1`; its entry is the canonical JSON of its table
name and stored values. Full aligned subtrees of 2**SUBTREE_LEVEL leaves or more are stored
as they complete; a smaller one is recomputed from its (at most 255) rows. So any subtree
hash, the root at any size, and inclusion and consistency proofs cost O(log n) lookups.
"""

from __future__ import annotations

import heapq
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Boolean, Connection, and_, select

from store.db.schema.record_kinds import LATE_COLUMNS, LEDGERED_KEYS
from store.db.schema.tables import (
    SUBTREE_LEVEL,
    log_origin,
    log_subtrees,
    metadata,
    tree_heads,
)
from store.errors import StoreError
from store.model.canonical import canonical
from store.model.merkle import (
    EMPTY_ROOT,
    CompactRange,
    FullSubtree,
    consistency_path,
    inclusion_path,
    leaf_hash,
    root_hash,
    subtree_from_full,
)

Row = Mapping[str, Any]


def log_entry(table: str, row: Row) -> bytes:
    """What a leaf hashes: the row's table and stored values (not its seq, not a null column
    a later revision added), as canonical JSON; anyone can recompute it from the record."""
    late = LATE_COLUMNS.get(table, frozenset())
    # str(k): a column name read back is a str subclass, which orjson refuses as a key (the
    # slow reference encoder would take over, with the same bytes).
    values = {str(k): v for k, v in row.items() if k != "seq" and not (v is None and k in late)}
    return canonical({"table": table, "row": values})


class EntryEncoder:
    """log_entry for one table's rows as the driver reads them (SQLite: a Boolean as 0 or 1),
    their values in `columns` order (the table's columns but seq, sorted by name as canonical
    JSON sorts them): the order is worked out once, not per row."""

    def __init__(self, table: str) -> None:
        t = metadata.tables[table]
        self.table = table
        self.columns = sorted(str(c.name) for c in t.columns if c.name != "seq")
        self._booleans = [(i, name) for i, name in enumerate(self.columns)
                          if isinstance(t.c[name].type, Boolean)]
        self._late = [name for name in self.columns if name in LATE_COLUMNS.get(table, ())]
        self._tail = b',"table":' + orjson.dumps(table) + b"}"  # "row" sorts before "table"

    def __call__(self, values: Sequence[Any]) -> bytes:
        """The entry of a row whose first values are `columns`' (more, such as seq, ignored)."""
        row = dict(zip(self.columns, values, strict=False))
        for i, name in self._booleans:
            if values[i] is not None:
                row[name] = bool(values[i])  # as SQLAlchemy reads a Boolean
        for name in self._late:
            if row[name] is None:
                del row[name]
        try:  # the keys are in canonical order already: no sort per row
            return b'{"row":' + orjson.dumps(row) + self._tail
        except (TypeError, orjson.JSONEncodeError):
            return canonical({"table": self.table, "row": row})


def new_row_entry(table: str, row: dict[str, Any], batch_id: int) -> bytes:
    """log_entry(table, row + batch_id) for a row as the writer builds it (no seq), with one
    dict copy instead of two: the reading process's per-row cost."""
    values = {**row, "batch_id": batch_id}
    for column in LATE_COLUMNS.get(table, ()):
        if column in values and values[column] is None:
            del values[column]
    return canonical({"table": table, "row": values})


@dataclass(frozen=True, slots=True)
class TreeHead:
    size: int
    root: bytes

    @property
    def root_hex(self) -> str:
        return self.root.hex()


# Built once: every keyset page checks its cursor against the newest head.
_LATEST_HEAD = (select(tree_heads.c.tree_size, tree_heads.c.root_hash)
                .order_by(tree_heads.c.tree_size.desc()).limit(1))


def latest_head(connection: Connection) -> TreeHead:
    """The newest batch's tree head; the empty tree in an empty store."""
    found = connection.execute(_LATEST_HEAD).first()
    return TreeHead(0, EMPTY_ROOT) if found is None else TreeHead(
        found.tree_size, bytes.fromhex(found.root_hash))


def leaf_rows(connection: Connection, start: int = 0, end: int | None = None
              ) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(seq, table, row) of the leaves start <= seq - 1 < end, in seq order, streamed."""
    def rows(table: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
        t = metadata.tables[table]
        condition = t.c.seq > start if end is None else and_(t.c.seq > start, t.c.seq <= end)
        # Options on the statement: Connection.execution_options would stick to the connection.
        result = connection.execute(
            select(t).where(condition).order_by(t.c.seq).execution_options(yield_per=5000))
        for mapping in result.mappings():
            yield mapping["seq"], table, dict(mapping)

    return heapq.merge(*(rows(t) for t in LEDGERED_KEYS), key=lambda item: item[0])


def _computed(connection: Connection, start: int, end: int) -> bytes:
    leaves = [leaf_hash(log_entry(table, row)) for _, table, row in
              leaf_rows(connection, start, end)]
    if len(leaves) != end - start:
        raise LogError(f"leaves {start}..{end - 1} do not have one row each")
    tree = CompactRange()
    for leaf in leaves:
        tree.append(leaf)
    return tree.root()


class LogError(StoreError):
    """The stored log cannot answer: a subtree or a leaf's row is missing."""


BLOCK = 1 << SUBTREE_LEVEL  # leaves under one smallest stored subtree


def _block_entries(connection: Connection, start: int, end: int) -> list[tuple[int, bytes]]:
    """(seq, entry) of the leaves start <= seq - 1 < end: one plain statement a table."""
    found: list[tuple[int, bytes]] = []
    for table in LEDGERED_KEYS:
        t = metadata.tables[table]
        result = connection.execute(select(t).where(t.c.seq > start, t.c.seq <= end))
        keys = list(map(str, result.keys()))  # plain str: cheap to hash and compare
        found.extend((row.seq, log_entry(table, dict(zip(keys, row, strict=True))))
                     for row in result)
    found.sort()
    return found


class LeafBlocks:
    """Hashes kept across requests (a stored leaf or subtree never changes): the leaf hashes
    of whole 2**SUBTREE_LEVEL-leaf blocks, so a proof's lowest levels hash one block's rows
    once, and the stored subtrees proofs and roots read most (the upper levels)."""

    def __init__(self, capacity: int = 1024,  # 1024 blocks: 8 MiB of hashes
                 subtrees: int = 65536) -> None:
        self.capacity = capacity
        self.subtree_capacity = subtrees
        self._blocks: OrderedDict[int, list[bytes]] = OrderedDict()
        self._subtrees: dict[tuple[int, int], bytes] = {}
        self._lock = threading.Lock()

    def stored(self, key: tuple[int, int]) -> bytes | None:
        return self._subtrees.get(key)

    def keep(self, key: tuple[int, int], digest: bytes) -> None:
        with self._lock:
            if len(self._subtrees) >= self.subtree_capacity:
                self._subtrees.clear()  # rare: a new working set refills it
            self._subtrees[key] = digest

    def leaves(self, connection: Connection, start: int, end: int) -> list[bytes]:
        """Hashes of leaves start..end-1, all in the block of `start`."""
        block = start - start % BLOCK
        with self._lock:
            found = self._blocks.get(block)
            if found is not None:
                self._blocks.move_to_end(block)
        if found is None or len(found) < end - block:
            found = [leaf_hash(entry) for _, entry in
                     _block_entries(connection, block, block + BLOCK)]
            with self._lock:
                self._blocks[block] = found
                while len(self._blocks) > self.capacity:
                    self._blocks.popitem(last=False)
        if len(found) < end - block:
            raise LogError(f"leaves {start}..{end - 1} do not have one row each")
        return found[start - block:end - block]


class StoredLog:
    """Answers subtree hashes from the store, each full one looked up once; with `blocks`,
    subtrees below the stored ones come from its cached leaf hashes."""

    def __init__(self, connection: Connection, blocks: LeafBlocks | None = None) -> None:
        self.connection = connection
        self.blocks = blocks
        self._cache: dict[tuple[int, int], bytes] = {}

    def full(self, start: int, end: int) -> bytes:
        found = self._cache.get((start, end))
        if found is not None:
            return found
        level = (end - start).bit_length() - 1
        if level >= SUBTREE_LEVEL and self.blocks is not None:
            found = self.blocks.stored((level, start))
            if found is not None:
                self._cache[(start, end)] = found
                return found
        if level >= SUBTREE_LEVEL:
            stored = self.connection.execute(
                select(log_subtrees.c.hash).where(log_subtrees.c.level == level,
                                                  log_subtrees.c.start == start)).scalar()
            if stored is None:
                raise LogError(f"subtree of leaves {start}..{end - 1} is not stored")
            found = bytes.fromhex(stored)
            if self.blocks is not None:
                self.blocks.keep((level, start), found)
        elif self.blocks is not None:
            found = root_hash(self.blocks.leaves(self.connection, start, end))
        else:
            found = _computed(self.connection, start, end)
        self._cache[(start, end)] = found
        return found

    def subtree(self, start: int, end: int) -> bytes:
        return subtree_from_full(start, end, self.full)

    def root(self, size: int) -> bytes:
        return EMPTY_ROOT if size == 0 else self.subtree(0, size)

    def inclusion(self, index: int, size: int) -> list[bytes]:
        return inclusion_path(index, size, self.subtree)

    def consistency(self, first: int, second: int) -> list[bytes]:
        return consistency_path(first, second, self.subtree)


class LogAppender:
    """Gives the rows one batch appends their seqs, and the log its new subtrees and head."""

    def __init__(self, connection: Connection) -> None:
        head = latest_head(connection)
        self.tree = CompactRange.restore(head.size, StoredLog(connection).full)
        self.subtrees: list[FullSubtree] = []

    @property
    def size(self) -> int:
        return self.tree.size

    def append(self, table: str, row: dict[str, Any]) -> None:
        """Sets row["seq"]: the row becomes the next leaf."""
        row["seq"] = self.tree.size + 1
        self.append_hashes([leaf_hash(log_entry(table, row))])

    def append_hashes(self, leaves: list[bytes]) -> None:
        """The next leaves, in order; their rows' seqs are size + 1, size + 2, ... (the
        size before this call), which the caller gave them."""
        self.subtrees.extend(self.tree.extend(leaves, SUBTREE_LEVEL))

    def subtree_rows(self) -> list[dict[str, Any]]:
        rows = [{"level": s.level, "start": s.start, "hash": s.digest.hex()}
                for s in self.subtrees]
        self.subtrees.clear()
        return rows

    def head_row(self, batch_id: int) -> dict[str, Any]:
        return {"batch_id": batch_id, "tree_size": self.tree.size,
                "root_hash": self.tree.root().hex()}


def stored_origin(connection: Connection) -> str | None:
    """The store's one origin; StoreError when log_origin holds more (added out of band):
    which one a `LIMIT 1` returns would depend on the file's layout."""
    found = connection.execute(
        select(log_origin.c.origin).order_by(log_origin.c.origin).limit(2)).scalars().all()
    if len(found) > 1:
        raise StoreError(f"log_origin holds more than one origin ({found[0]!r}, {found[1]!r}): "
                         "a row was added out of band; run `core-audit verify`")
    return found[0] if found else None
