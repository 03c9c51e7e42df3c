"""Verification: recompute every leaf, the tree and its heads from the rows; check the schema
(keys, indexes, trigger definitions), content ids and the file."""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Protocol

from sqlalchemy import Connection, exists, func, literal, select, text, true

from store.db.log.stored_log import TreeHead, latest_head
from store.db.schema.record_kinds import LEDGERED_KEYS, SIGHTED, RecordKind
from store.db.schema.tables import ingest_batches, metadata, tree_heads
from store.db.schema.text_search import SEARCH_TABLES, TEXT_INDEXES
from store.db.verify.checkpoint_checks import checkpoint_problems, kept_checkpoint_problems
from store.db.verify.construction_checks import construction_problems
from store.db.verify.content_checks import content_kinds, table_problems
from store.db.verify.count_checks import count_problems
from store.db.verify.derived_checks import (
    sighting_count_problems,
    tally_problems,
    turn_field_problems,
    turn_tally_problems,
)
from store.db.verify.derived_record import DerivedSums, derived_record_problems, derived_sums
from store.db.verify.leaf_checks import leaf_problems
from store.db.verify.problems import Problem
from store.db.verify.schema_checks import schema_problems
from store.db.verify.schema_snapshot import whole_schema_problems
from store.db.verify.search_checks import record_tally_check, text_index_problems
from store.db.verify.table_checks import single_row_problems, unreadable_tables
from store.db.write.row_builders import ledger_key
from store.model.checkpoint import Checkpoint

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
    return leaf_problems(connection, report, _heads(connection), scope.since)


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
    "counts": lambda connection, scope, _report: count_problems(connection, scope.after_batch),
    "turn_tallies": lambda connection, scope, _report: turn_tally_problems(
        connection, scope.after_batch),
    "turn_fields": lambda connection, scope, _report: turn_field_problems(
        connection, scope.after_batch),
    "constructions": lambda connection, scope, _report: construction_problems(
        connection, scope.after_seq),
    "search": lambda connection, scope, _report: text_index_problems(
        connection, scope.after_batch),
    "record_tallies": lambda connection, scope, _report: record_tally_check(
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
    """The heavy checks a store with these unreadable tables gets, in the order the workers
    take them up (_FIRST, then the rest); after a verified tree, not integrity_check (it
    reads the whole file)."""
    names = ["leaves", *(f"content {kind.name}" for kind in content_kinds()
                         if kind.name not in unreadable)]
    if since is None:
        names.append("integrity_check")
    if not {"residual_tallies", "contract_residuals", "residual_occurrences"} & set(unreadable):
        names.append("tallies")
    if not {"sighting_counts", *SIGHTED, *(r for r, _ in SIGHTED.values())} & set(unreadable):
        names.append("sighting_counts")
    if {"tallies", "sighting_counts"} <= set(names):  # both from one read of the sightings
        names = [name for name in names if name not in ("tallies", "sighting_counts")]
        names.append("counts")
    if not {"turn_fields", "turns"} & set(unreadable):
        names.append("turn_fields")
    if not {"turn_tallies", "turn_fields", "turns"} & set(unreadable):
        names.append("turn_tallies")
    if not {"turns", "turn_constructions", "turn_assessments"} & set(unreadable):
        names.append("constructions")
    if not {*SEARCH_TABLES, *(i.records.name for i in TEXT_INDEXES.values()),
            "residual_occurrences", "contract_assessments", "surface_occurrences",
            "surface_records"} & set(unreadable):
        names.extend(("search", "record_tallies"))  # reported as one: search's, then these
    return sorted([*names, "references"],
                  key=lambda name: _FIRST.index(name) if name in _FIRST else len(_FIRST))


# The longest checks first, each taken up by the first worker free (the longest chain decides
# the wall time). At 1M occurrences (CPU s, the file mapped; bench/verify.py): the leaves 9.3
# and integrity_check 10.0 one on each worker, then the counts 6.7, the residual record
# tallies 5.9 and the search texts 3.8, then the content ids (4.2, 3.9) and the foreign keys
# (3.0) fill both: 25.0 and 25.6 s of CPU on the two in one run. With the search texts and
# the record tallies one check, taken up last, one worker went on ~6 s after the other was
# done (by the checks' CPU figures before).
_FIRST = ("leaves", "integrity_check", "counts", "record_tallies", "search")


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
    if "counts" in names:  # the tallies' problems, then (at most 20) the sighting counts'
        problems.extend(heavy.problems("counts", report))
    if "turn_fields" in names:
        problems.extend(islice(heavy.problems("turn_fields", report), MAX_PROBLEMS))
    if "turn_tallies" in names:
        problems.extend(islice(heavy.problems("turn_tallies", report), MAX_PROBLEMS))
    if "search" in names:  # the texts and their indexes, then the residual record tallies
        search = _chained(heavy.problems(name, report) for name in ("search", "record_tallies"))
        problems.extend(islice(search, MAX_PROBLEMS))
        search.close()
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
