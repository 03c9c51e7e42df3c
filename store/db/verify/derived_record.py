"""What a verify record keeps of the derived tables, and what an incremental verify checks
against it.

An incremental verify trusts the leaves a full verify recomputed, and a tree head covers every
leaf; but derived rows (tallies, sighting counts, subtrees, heads) are no leaves, and append-
only lets a foreign connection insert one for an old batch (a sighting count of 99,999 at the
top of MOST_SEEN). So the record keeps, per derived table (DERIVED_TABLES), the sums of its
rows under the verified tree: how many, the sum of each integer column and of each text
column's length. An incremental verify recomputes them in SQL (one aggregate a table, no row
read into Python); a difference is named, with what the table's full check finds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from itertools import islice
from typing import Any

from sqlalchemy import (
    Boolean,
    ColumnElement,
    Connection,
    Integer,
    and_,
    case,
    false,
    func,
    or_,
    select,
)

from store.db.schema.record_kinds import DERIVED_TABLES, SUBTREES_TABLE
from store.db.schema.tables import SUBTREE_LEVEL, log_subtrees, metadata
from store.db.verify.derived_checks import (
    sighting_count_problems,
    tally_problems,
    turn_tally_problems,
)
from store.db.verify.problems import Problem

DerivedSums = Mapping[str, tuple[int, ...]]
_NAMED_PROBLEMS = 20

# The table's own full check, to name the rows behind a difference (batches after 0: all).
_FULL_CHECKS: dict[str, Callable[[Connection], Iterator[Problem]]] = {
    "residual_tallies": tally_problems,
    "turn_tallies": turn_tally_problems,
    "sighting_counts": sighting_count_problems,
}


def _sums(table: str) -> list[ColumnElement[Any]]:
    t = metadata.tables[table]
    sums: list[ColumnElement[Any]] = [func.count()]
    for column in t.columns:
        if isinstance(column.type, Boolean):  # true counted as 1, as SQLite stores it
            value: ColumnElement[Any] = case((column, 1), else_=0)
        else:
            value = column if isinstance(column.type, Integer) else func.length(column)
        sums.append(func.coalesce(func.sum(value), 0))
    return sums


def _under(table: str, batch_id: int, size: int) -> ColumnElement[bool]:
    """The rows of `table` that belong to the verified tree: its batches up to `batch_id`;
    log_subtrees: those inside its first `size` leaves."""
    if table != SUBTREES_TABLE:
        return metadata.tables[table].c.batch_id <= batch_id
    return or_(false(), *(and_(log_subtrees.c.level == level,
                               log_subtrees.c.start + (1 << level) <= size)
                          for level in range(SUBTREE_LEVEL, size.bit_length() + 1)))


def derived_sums(connection: Connection, batch_id: int, size: int) -> dict[str, tuple[int, ...]]:
    """Per derived table, (rows, sum of each column: integers' values, texts' lengths) of its
    rows under the tree of `size` leaves whose newest batch is `batch_id`."""
    found = {}
    for table in DERIVED_TABLES:
        row = connection.execute(select(*_sums(table)).select_from(metadata.tables[table])
                                 .where(_under(table, batch_id, size))).one()
        found[table] = tuple(int(value) for value in row)
    return found


def derived_record_problems(connection: Connection, recorded: DerivedSums, batch_id: int,
                            size: int) -> Iterator[Problem]:
    """Each derived table whose rows under the verified tree are not what the record summed,
    then what its full check finds (the rows added); a table the record has no sums for."""
    now = derived_sums(connection, batch_id, size)
    for table in DERIVED_TABLES:
        then = recorded.get(table)
        if then is None:
            yield Problem(None, table, "", "the verify record keeps no sums of this table "
                                           "(an older core-audit wrote it): run a full verify "
                                           "with --record again")
            continue
        if then == now[table]:
            continue
        if len(then) != len(now[table]):  # a sum per column: a revision changed its columns
            yield Problem(None, table, "", "the verify record sums this table's columns as an "
                                           "earlier revision laid them out: run a full verify "
                                           "with --record again")
            continue
        yield Problem(None, table, f"batches 1..{batch_id}",
                      f"{now[table][0]} rows under the verified tree now, {then[0]} when the "
                      "record was written (sums differ): rows were added or changed out of "
                      "band since")
        check = _FULL_CHECKS.get(table)
        if check is not None:
            yield from islice(check(connection), _NAMED_PROBLEMS)
