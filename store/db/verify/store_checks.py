"""Verification: recompute every leaf, the tree and its heads from the rows; check the schema
(keys, indexes, trigger definitions), content ids and the file."""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Protocol

from sqlalchemy import Connection, exists, func, literal, select, text, true
from sqlalchemy.exc import DBAPIError

from store.db.log.stored_log import (
    EntryEncoder,
    LogError,
    StoredLog,
    TreeHead,
    latest_head,
)
from store.db.schema.engine import row_chunks_read
from store.db.schema.record_kinds import LEDGERED_KEYS, SIGHTED, RecordKind
from store.db.schema.tables import (
    SUBTREE_LEVEL,
    ingest_batches,
    log_subtrees,
    metadata,
    tree_heads,
)
from store.db.schema.text_search import TEXT_INDEXES, TEXT_TABLES
from store.db.verify.checkpoint_checks import checkpoint_problems, kept_checkpoint_problems
from store.db.verify.construction_checks import construction_problems
from store.db.verify.content_checks import content_kinds, table_problems
from store.db.verify.derived_checks import (
    sighting_count_problems,
    tally_problems,
    turn_field_problems,
)
from store.db.verify.derived_record import DerivedSums, derived_record_problems, derived_sums
from store.db.verify.problems import Problem
from store.db.verify.schema_checks import schema_problems
from store.db.verify.schema_snapshot import whole_schema_problems
from store.db.verify.search_checks import search_problems
from store.db.verify.table_checks import single_row_problems, unreadable_tables
from store.db.write.row_builders import ledger_key
from store.model.checkpoint import Checkpoint
from store.model.merkle import CompactRange, leaf_hash

MAX_PROBLEMS = 20


@dataclass
class VerifyReport:
    rows: int = 0  # leaves recomputed
    tip: TreeHead | None = None
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was not checked, and why
    # Asked for a record: the derived tables' sums under `tip` (derived_record.derived_sums).
    derived_sums: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def intact(self) -> bool:
        return not self.problems

    @property
    def first_problem(self) -> Problem | None:
        return self.problems[0] if self.problems else None


def _file_problems(connection: Connection) -> Iterator[Problem]:
    if connection.dialect.name != "sqlite":
        return
    for (message,) in connection.execute(text("PRAGMA integrity_check")):
        if message != "ok":
            yield Problem(None, "sqlite", "", f"integrity_check: {message}")


@dataclass(frozen=True, slots=True)
class Since:
    """A tree an earlier full verify recomputed (its record): its `size` leaves are trusted,
    the newest batch within them is `batch_id` (0: none)."""

    size: int
    root: bytes
    batch_id: int


@dataclass(frozen=True, slots=True)
class Scope:
    """What the heavy checks read: not the unreadable tables, and only after `since`."""

    skip: frozenset[str] = frozenset()
    since: Since | None = None

    @property
    def after_seq(self) -> int:
        return self.since.size if self.since else 0

    @property
    def after_batch(self) -> int:
        return self.since.batch_id if self.since else 0


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


def _leaf_problems(connection: Connection, report: VerifyReport,
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


def _heads(connection: Connection) -> dict[int, tuple[int, str]]:
    return {row.batch_id: (row.tree_size, row.root_hash)
            for row in connection.execute(select(tree_heads))}


def _reference_problems(connection: Connection, skip: Collection[str],
                        scope: Scope = Scope()) -> Iterator[Problem]:
    """Every foreign key holds: the writer checks them itself, and tools that write to a
    SQLite file out of band check none unless told to. With `scope.since`: the rows after it
    (by seq, else by batch; a table with neither whole)."""
    for table in metadata.sorted_tables:
        for fk in sorted(table.foreign_keys, key=lambda fk: fk.parent.name):
            parent = fk.column.table
            if table.name in skip or parent.name in skip:
                continue
            child, target, key = fk.parent, fk.column, list(table.primary_key.columns)
            position = table.c.seq if "seq" in table.c else literal(None)
            newer = (table.c.seq > scope.after_seq if "seq" in table.c
                     else table.c.batch_id > scope.after_batch if "batch_id" in table.c
                     else true())
            orphans = connection.execute(
                select(position, child, *key)
                .where(child.is_not(None), newer, ~exists().where(target == child))
                .order_by(position, *key).limit(MAX_PROBLEMS))
            for seq, value, *key_values in orphans:
                yield Problem(seq, table.name, ledger_key(tuple(key_values)),
                              f"{child.name} refers to {parent.name} {value},"
                              " which is not stored")


HeavyCheck = Callable[[Connection, Scope, VerifyReport], Iterator[Problem]]


def _leaf_check(connection: Connection, scope: Scope, report: VerifyReport) -> Iterator[Problem]:
    return _leaf_problems(connection, report, _heads(connection), scope.since)


def _content_check(kind: RecordKind) -> HeavyCheck:
    def check(connection: Connection, scope: Scope, _report: VerifyReport) -> Iterator[Problem]:
        return table_problems(connection, kind, scope.after_seq)
    return check


# The O(n) checks, by name, each on a connection of its own when run in worker processes.
HEAVY_CHECKS: dict[str, HeavyCheck] = {
    "leaves": _leaf_check,
    **{f"content {kind.name}": _content_check(kind) for kind in content_kinds()},
    "integrity_check": lambda connection, _scope, _report: _file_problems(connection),
    "tallies": lambda connection, scope, _report: tally_problems(connection,
                                                                  scope.after_batch),
    "references": lambda connection, scope, _report: _reference_problems(
        connection, scope.skip, scope),
    "sighting_counts": lambda connection, scope, _report: sighting_count_problems(
        connection, scope.after_batch),
    "turn_fields": lambda connection, scope, _report: turn_field_problems(
        connection, scope.after_batch),
    "constructions": lambda connection, scope, _report: construction_problems(
        connection, scope.after_seq),
    "search": lambda connection, scope, _report: search_problems(
        connection, scope.after_batch),
}
# How many of a check's problems the report can take at most (the rest need not be read).
HEAVY_CAPS = {"leaves": MAX_PROBLEMS * 4,
              **{name: MAX_PROBLEMS * 4 for name in HEAVY_CHECKS if name.startswith("content ")}}


class HeavyChecks(Protocol):
    """Runs the heavy checks: here, one after the other (InProcessChecks), or in worker
    processes (store.db.verify.check_processes). The report is assembled from their problems
    in one fixed order either way, so it is the same whichever finishes first."""

    def start(self, names: list[str], scope: Scope) -> None: ...

    def problems(self, name: str, report: VerifyReport) -> Iterator[Problem]: ...


class InProcessChecks:
    """Each check on the verify's own connection, run as its problems are read."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.scope = Scope()

    def start(self, names: list[str], scope: Scope) -> None:
        self.scope = scope

    def problems(self, name: str, report: VerifyReport) -> Iterator[Problem]:
        return HEAVY_CHECKS[name](self.connection, self.scope, report)


def heavy_check_names(unreadable: Collection[str], since: Since | None = None) -> list[str]:
    """The heavy checks a store with these unreadable tables gets, longest first; after a
    verified tree, not integrity_check (it reads the whole file)."""
    names = ["leaves", *(f"content {kind.name}" for kind in content_kinds()
                         if kind.name not in unreadable)]
    if since is None:
        names.append("integrity_check")
    if not {"residual_tallies", "contract_residuals", "residual_occurrences"} & set(unreadable):
        names.append("tallies")
    if not {"sighting_counts", *SIGHTED, *(r for r, _ in SIGHTED.values())} & set(unreadable):
        names.append("sighting_counts")
    if not {"turn_fields", "turns"} & set(unreadable):
        names.append("turn_fields")
    if not {"turns", "turn_constructions", "turn_assessments"} & set(unreadable):
        names.append("constructions")
    if not {*TEXT_TABLES, *(i.records.name for i in TEXT_INDEXES.values()),
            "residual_occurrences", "contract_assessments", "surface_occurrences",
            "surface_records"} & set(unreadable):
        names.append("search")
    return [*names, "references"]


def _chained(iterators: Iterator[Iterator[Problem]]) -> Generator[Problem, None, None]:
    for iterator in iterators:
        yield from iterator  # close() reaches the one being read


def verify_store(connection: Connection, checkpoint: Checkpoint | None = None, *,
                 quick: bool = False, heavy: HeavyChecks | None = None,
                 since: Checkpoint | None = None, since_sums: DerivedSums | None = None,
                 record: bool = False) -> VerifyReport:
    """Everything recomputable is recomputed: rows <-> leaves, the tree, every tree head,
    the tallies; a checkpoint must be a prefix of the store's tree (consistency proof).
    `quick` checks only the checkpoint against the stored tree head (O(log n)). `heavy`
    runs the O(n) checks (default: here, on `connection`). `since`: a tree an earlier full
    verify recomputed (its record, checked by the caller): only what came after it is read,
    and the store must extend it; no integrity_check; `since_sums`: the derived tables' sums
    its record keeps, which the rows under it must still make. `record`: an intact report
    carries the derived tables' sums under its tip, for a record."""
    report = VerifyReport()
    unreadable = unreadable_tables(connection)
    log_tables = {"tree_heads", "log_subtrees", *LEDGERED_KEYS}
    heavy = heavy or InProcessChecks(connection)
    scope = Scope(frozenset(unreadable))
    if since is not None and not log_tables & unreadable.keys():
        if since.size > latest_head(connection).size:  # nothing to rebuild: say only that
            report.problems = list(checkpoint_problems(connection, since))
            return report
        scope = Scope(frozenset(unreadable), Since(since.size, since.root,
                                                    _newest_batch(connection, since.size)))
    names = heavy_check_names(unreadable, scope.since)
    if not quick and not log_tables & unreadable.keys():
        heavy.start(names, scope)
    problems: list[Problem] = list(unreadable.values())
    problems.extend(schema_problems(connection))  # keys, duplicates, indexes, triggers
    problems.extend(whole_schema_problems(connection, report.notes))  # all else, vs head's
    problems.extend(single_row_problems(connection, unreadable.keys()))
    if log_tables & unreadable.keys():
        report.problems = problems[:MAX_PROBLEMS]
        return report
    for kept in (checkpoint, since):
        if kept is not None:
            problems.extend(checkpoint_problems(connection, kept))
    if not {"checkpoints", "checkpoint_cosignatures"} & unreadable.keys():
        problems.extend(islice(kept_checkpoint_problems(connection), MAX_PROBLEMS))
    if quick:
        report.tip = latest_head(connection)
        report.rows = report.tip.size
        report.problems = problems[:MAX_PROBLEMS]
        return report
    if "integrity_check" in names:
        problems.extend(heavy.problems("integrity_check", report))
    for problem in heavy.problems("leaves", report):
        problems.append(problem)
        if len(problems) >= MAX_PROBLEMS * 4:
            break
    content = _chained(heavy.problems(name, report) for name in names
                       if name.startswith("content "))
    problems.extend(islice(content, MAX_PROBLEMS * 4))
    content.close()  # ends the streamed read when the cap is met
    # Structural problems (no seq) first, then rows in leaf order, then the subtrees and
    # the derived tallies (a changed row also upsets the subtrees over it and its batch's
    # tallies: name the row first).
    problems.extend(heavy.problems("references", report))
    if "constructions" in names:  # a journal turn's construction rows, from its line
        problems.extend(islice(heavy.problems("constructions", report), MAX_PROBLEMS))
    problems.sort(key=lambda p: (p.table == "log_subtrees", p.seq is not None, p.seq or 0))
    if "tallies" in names:
        problems.extend(heavy.problems("tallies", report))
    if "sighting_counts" in names:
        problems.extend(islice(heavy.problems("sighting_counts", report), MAX_PROBLEMS))
    if "turn_fields" in names:
        problems.extend(islice(heavy.problems("turn_fields", report), MAX_PROBLEMS))
    if "search" in names:
        problems.extend(islice(heavy.problems("search", report), MAX_PROBLEMS))
    if scope.since is not None and since_sums is not None:
        problems.extend(derived_record_problems(connection, since_sums, scope.since.batch_id,
                                                scope.since.size))
    report.problems = problems[:MAX_PROBLEMS]
    if record and not report.problems and report.tip is not None:
        size = report.tip.size
        report.derived_sums = derived_sums(connection, _newest_batch(connection, size), size)
    return report


def _newest_batch(connection: Connection, size: int) -> int:
    """The newest batch among the first `size` leaves (0: none)."""
    return connection.execute(select(func.max(ingest_batches.c.batch_id))
                              .where(ingest_batches.c.seq <= size)).scalar() or 0
