"""The leaf check of `verify`: one row for every leaf and one leaf for every row, in seq
order; the tree recomputed from the rows, each batch's tree head and every stored subtree
compared with it.

The ledgered tables are read together a window of LEAF_WINDOW seqs at a time. A window whose
rows are exactly its leaves (the intact case) is hashed into the tree level by level in one go;
any other window, and every one after it, row by row in leaf_rows' order (seq, then table), so
each problem is named as a row-by-row read names it."""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select, text
from sqlalchemy.exc import DBAPIError

from store.db.log.stored_log import EntryEncoder, LogError, StoredLog, TreeHead
from store.db.schema.engine import row_chunks_read
from store.db.schema.record_kinds import LEDGERED_KEYS
from store.db.schema.tables import SUBTREE_LEVEL, log_subtrees, metadata
from store.db.verify.problems import Problem
from store.db.write.row_builders import ledger_key
from store.model.merkle import CompactRange, leaf_hash

if TYPE_CHECKING:  # annotations only: store_checks runs this check and imports this module
    from store.db.verify.store_checks import Since, VerifyReport


def _restored(connection: Connection, since: Since) -> tuple[CompactRange, Problem | None]:
    """The tree at the recorded size from the stored subtrees, which must make its root."""
    where = f"checkpoint {since.size}"
    try:
        tree = CompactRange.restore(since.size, StoredLog(connection).full)
    except LogError as exc:
        return CompactRange(), Problem(None, "log", where, "cannot rebuild the verified tree: "
                                                           f"{exc}")
    if tree.root() != since.root:
        return tree, Problem(None, "log", where, f"the stored log's first {since.size} leaves "
                                                 "no longer make the root the full verify "
                                                 "recorded (changed since)")
    return tree, None


LEAF_WINDOW = 1 << 14  # leaves read, hashed and placed at a time (an aligned block of seqs)
_READ_ROWS = 4096


class _TableLeaves:
    """One ledgered table's rows after leaf `start` in seq order, read a chunk at a time as
    the driver gives them (no SQLAlchemy row per row), each with its leaf hash; handed out
    by window of seqs."""

    def __init__(self, connection: Connection, table: str, start: int) -> None:
        t, entry = metadata.tables[table], EntryEncoder(table)
        self.table = table
        self.seq_at = len(entry.columns)
        self.key_at = [entry.columns.index(name) for name in LEDGERED_KEYS[table]]
        self._entry = entry
        statement = (select(*(t.c[name] for name in entry.columns), t.c.seq)
                     .where(t.c.seq > start).order_by(t.c.seq))
        self._chunks: Iterator[Sequence[Sequence[Any]]] | None = row_chunks_read(
            connection, statement, _READ_ROWS)
        self.seqs: list[int] = []
        self.leaves: list[bytes] = []
        self.rows: list[Sequence[Any]] = []

    def key(self, row: Sequence[Any]) -> str:
        return ledger_key(tuple(row[at] for at in self.key_at))

    def upto(self, end: int) -> tuple[list[int], list[bytes], list[Sequence[Any]]]:
        """The rows not handed out yet with seq <= end (and takes them)."""
        while self._chunks is not None and (not self.seqs or self.seqs[-1] <= end):
            try:
                rows = next(self._chunks, None)
            except sqlite3.Error as exc:  # as SQLAlchemy would raise it: a store unreadable
                raise DBAPIError.instance(None, None, exc, sqlite3.Error) from exc
            if rows is None:
                self._chunks = None
                break
            at, entry = self.seq_at, self._entry
            self.seqs.extend([row[at] for row in rows])
            self.leaves.extend([leaf_hash(entry(row)) for row in rows])
            self.rows.extend(rows)
        cut = bisect_right(self.seqs, end)
        taken = self.seqs[:cut], self.leaves[:cut], self.rows[:cut]
        del self.seqs[:cut], self.leaves[:cut], self.rows[:cut]
        return taken

    @property
    def exhausted(self) -> bool:
        return self._chunks is None and not self.seqs


def _placed(parts: list[tuple[list[int], list[bytes], list[Sequence[Any]]]], after: int,
            newest: int) -> list[bytes] | None:
    """The window's leaf hashes in seq order if its rows hold exactly leaves after+1.. of
    the newest tree (one row each, no gap, none beyond): else None."""
    count = sum(len(seqs) for seqs, _, _ in parts)
    if after + count > newest:
        return None
    slots: list[bytes | None] = [None] * count
    for seqs, leaves, _ in parts:
        for seq, leaf in zip(seqs, leaves, strict=True):
            index = seq - after - 1
            if not 0 <= index < count or slots[index] is not None:
                return None
            slots[index] = leaf
    return slots  # type: ignore[return-value]  # every slot filled: count rows, no repeat


def leaf_problems(connection: Connection, report: VerifyReport,
                   heads: dict[int, tuple[int, str]],
                   since: Since | None = None) -> Iterator[Problem]:
    """One row for every leaf and one leaf for every row, in seq order; recompute the tree
    from the rows and compare each batch's tree head and every stored subtree with it.
    `since`: only the leaves after it, on its tree rebuilt from the stored subtrees.

    Read a window of seqs at a time from every table; a window whose rows are exactly its
    leaves (the intact case) is hashed into the tree in one go, any other row by row, in
    the order leaf_rows gives (seq, then table), so each problem is named as it always was."""
    newest = max((size for size, _ in heads.values()), default=0)
    tree = CompactRange()
    computed: dict[tuple[int, int], bytes] = {}
    if since is not None:
        tree, problem = _restored(connection, since)
        if problem is not None:
            yield problem
            return
        heads = {batch: head for batch, head in heads.items() if head[0] > since.size}
    tables = [_TableLeaves(connection, table, tree.size) for table in LEDGERED_KEYS]
    batch_at = list(LEDGERED_KEYS).index("ingest_batches")
    batches = tables[batch_at]
    state = _LeafState(tree.size + 1)
    end = tree.size
    while not all(table.exhausted for table in tables):
        end = (end // LEAF_WINDOW + 1) * LEAF_WINDOW
        parts = [table.upto(end) for table in tables]
        if not any(seqs for seqs, _, _ in parts):
            if any(table.seqs for table in tables):  # on to the window of the next row
                end = (min(table.seqs[0] for table in tables if table.seqs) - 1) \
                    // LEAF_WINDOW * LEAF_WINDOW
            continue
        placed = None if state.broken or state.slow else _placed(parts, tree.size, newest)
        if placed is None:
            state.slow = True
            yield from _row_by_row(connection, tables, parts, tree, computed, heads, newest,
                                   state)
            continue
        done = tree.size
        batch_seqs, _, batch_rows = parts[batch_at]
        for seq, row in zip(batch_seqs, batch_rows, strict=True):
            _grown(tree, placed[tree.size - done:seq - done], computed)
            yield from _batch_head(tree, seq, batches.key(row), row[batches.key_at[0]],
                                   heads, state)
        _grown(tree, placed[tree.size - done:], computed)
    report.rows = tree.size
    report.tip = TreeHead(tree.size, tree.root())
    if state.broken:
        return
    if tree.size < newest:
        yield Problem(tree.size + 1, "log", f"leaf {tree.size}",
                      f"leaves {tree.size}..{newest - 1} have no row "
                      f"({_missing_rows(connection)})")
    for batch_id, (size, _) in sorted(heads.items()):
        yield Problem(None, "tree_heads", f"batch {batch_id}",
                      f"tree head of size {size} names a batch that is not stored")
    after = since.size if since is not None else 0
    stored = [(level, start, digest) for level, start, digest
              in connection.execute(select(log_subtrees)) if start + (1 << level) > after]
    for level, start, digest in stored:
        found = computed.pop((level, start), None)
        if found is None or found.hex() != digest:
            yield Problem(None, "log_subtrees", f"{level}/{start}",
                          "subtree hash is not the tree of its leaves")
    for level, start in sorted(computed):
        yield Problem(None, "log_subtrees", f"{level}/{start}", "subtree hash is missing")


@dataclass
class _LeafState:
    batch_start: int  # the first seq of the batch being read
    broken: bool = False  # a leaf had no row: every later root is off
    slow: bool = False  # a window was not exactly its leaves: row by row from there on
    previous: tuple[int, str, str] | None = None  # the last row read: (seq, table, key)


def _grown(tree: CompactRange, leaves: list[bytes],
           computed: dict[tuple[int, int], bytes]) -> None:
    """Append the leaves; keep the stored-size subtrees they complete."""
    aligned = len(leaves) == LEAF_WINDOW and tree.size % LEAF_WINDOW == 0
    for subtree in (tree.extend_block if aligned else tree.extend)(leaves, SUBTREE_LEVEL):
        computed[(subtree.level, subtree.start)] = subtree.digest


def _batch_head(tree: CompactRange, seq: int, key: str, batch_id: int,
                heads: dict[int, tuple[int, str]], state: _LeafState) -> Iterator[Problem]:
    head = heads.pop(batch_id, None)
    if head is None:
        yield Problem(seq, "ingest_batches", key, "batch has no tree head")
    elif head != (tree.size, tree.root().hex()):
        yield Problem(seq, "ingest_batches", key,
                      f"seq {state.batch_start}..{seq} do not make this batch's tree head "
                      "(a row among them was changed out of band, or the head was)")
    state.batch_start = seq + 1


def _row_by_row(connection: Connection, tables: list[_TableLeaves],
                parts: list[tuple[list[int], list[bytes], list[Sequence[Any]]]],
                tree: CompactRange, computed: dict[tuple[int, int], bytes],
                heads: dict[int, tuple[int, str]], newest: int,
                state: _LeafState) -> Iterator[Problem]:
    """A window's rows one at a time in leaf_rows' order (seq, then table; sorted() is
    stable, as heapq.merge is), each checked against the tree grown so far."""
    merged = sorted(((seq, order, i) for order, (seqs, _, _) in enumerate(parts)
                     for i, seq in enumerate(seqs)), key=lambda item: item[:2])
    for seq, order, i in merged:
        source, leaf, row = tables[order], parts[order][1][i], parts[order][2][i]
        table, key = source.table, source.key(row)
        if state.previous is not None and seq == state.previous[0]:
            yield Problem(seq, table, key, f"seq {seq} is also held by {state.previous[1]} "
                                           f"{state.previous[2]}: one leaf, two rows (added "
                                           "out of band)")
            continue
        state.previous = (seq, table, key)
        if seq > newest:
            yield Problem(seq, table, key, "row is beyond the newest tree head "
                                           "(added out of band)")
            continue
        if seq != tree.size + 1 and not state.broken:
            yield Problem(tree.size + 1, "log", f"leaf {tree.size}",
                          f"leaves {tree.size}..{seq - 2} have no row "
                          f"({_missing_rows(connection)})")
            state.broken = True  # every later root is off: the first gap is what to name
        if state.broken:
            continue
        _grown(tree, [leaf], computed)
        if table == "ingest_batches":
            yield from _batch_head(tree, seq, key, row[source.key_at[0]], heads, state)


def _missing_rows(connection: Connection) -> str:
    """Why leaves have no row: deleted, unless (PostgreSQL) row-level security hides rows of
    a leaf table from this role, which then cannot tell hidden from deleted."""
    if connection.dialect.name != "postgresql":
        return "deleted out of band"
    hiding = [table for table in LEDGERED_KEYS if connection.execute(
        text("SELECT row_security_active(:table)"), {"table": table}).scalar()]
    if not hiding:
        return "deleted out of band"
    role = connection.execute(text("SELECT current_user")).scalar()
    return (f"unreadable here: row-level security on {', '.join(hiding)} hides rows from "
            f"role {role}; verify as a role that reads every row to tell hidden from "
            "deleted out of band")
