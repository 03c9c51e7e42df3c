"""`verify`'s derived tables: the tallies and sighting counts must be exactly what the stored
rows add up to, batch by batch, and the turn fields what each turn's line says (recomputed
from the rows, never trusted)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import Connection, func, select

from store.db.schema.tables import turn_fields, turns
from store.db.verify.problems import Problem
from store.db.write.sighting_counts import (
    CountRow,
    recomputed_sighting_counts,
    stored_sighting_counts,
)
from store.db.write.tallies import recomputed_tallies, stored_tallies
from store.db.write.turn_fields import COLUMNS, JOURNAL, READ_ROWS, derived_row
from store.db.write.turn_tallies import recomputed_turn_tallies, stored_turn_tallies


def tally_problems(connection: Connection, after_batch: int = 0) -> Iterator[Problem]:
    """The derived tallies must be exactly what the ledgered rows add up to, batch by batch
    (the batches after `after_batch`)."""
    yield from compared_tallies(stored_tallies(connection, after_batch),
                                recomputed_tallies(connection, after_batch))


def compared_tallies(stored: dict[int, list[dict[str, Any]]],
                     recomputed: Iterable[tuple[int, list[dict[str, Any]]]]
                     ) -> Iterator[Problem]:
    """The stored tallies (by batch) against the recomputed ones, in batch order."""
    yield from _compared_tally_rows("residual_tallies", "residuals and occurrences",
                                    "residuals", stored, recomputed)


def turn_tally_problems(connection: Connection, after_batch: int = 0) -> Iterator[Problem]:
    """The turn tallies must be exactly what each batch's stored turns and their CORE times
    add up to (the batches after `after_batch`)."""
    yield from _compared_tally_rows("turn_tallies", "turns", "turns",
                                    stored_turn_tallies(connection, after_batch),
                                    recomputed_turn_tallies(connection, after_batch))


def _compared_tally_rows(table: str, counted: str, records: str,
                         stored: dict[int, list[dict[str, Any]]],
                         recomputed: Iterable[tuple[int, list[dict[str, Any]]]]
                         ) -> Iterator[Problem]:
    """A tally table's stored rows (by batch) against the recomputed ones, in batch order:
    `counted`, what a batch's rows add up; `records`, what a batch has rows for."""
    for batch_id, expected in recomputed:
        found = stored.pop(batch_id, [])
        if found != expected:
            yield Problem(None, table, f"batch {batch_id}",
                          f"{len(found)} tally rows do not match the {len(expected)} the "
                          f"batch's {counted} add up to")
    for batch_id, found in stored.items():
        yield Problem(None, table, f"batch {batch_id}",
                      f"{len(found)} tally rows for a batch without {records}")


def sighting_count_problems(connection: Connection, after_batch: int = 0) -> Iterator[Problem]:
    """The derived sighting counts must be exactly the running counts the sightings make,
    row for row (both streams in key order: batch, record seq), the batches after
    `after_batch`."""
    yield from compared_sighting_counts(recomputed_sighting_counts(connection, after_batch),
                                        stored_sighting_counts(connection, after_batch))


def compared_sighting_counts(expected: Iterator[CountRow], stored: Iterator[CountRow]
                             ) -> Iterator[Problem]:
    """Two streams of sighting count rows in key order (batch, record seq), merged. A row
    names its record by seq: the record's leaf, the log's position of it."""
    want, have = next(expected, None), next(stored, None)
    while want is not None or have is not None:
        if have is None or (want is not None and want[:2] < have[:2]):
            assert want is not None
            yield Problem(None, "sighting_counts", f"batch {want[0]} seq {want[1]}",
                          f"row is missing (the {want[2]} record at seq {want[1]} has "
                          f"{want[3]} sightings by this batch)")
            want = next(expected, None)
        elif want is None or have[:2] < want[:2]:
            yield Problem(None, "sighting_counts", f"batch {have[0]} seq {have[1]}",
                          "row names no record this batch sighted (added out of band)")
            have = next(stored, None)
        else:
            if have != want:
                yield Problem(None, "sighting_counts", f"batch {have[0]} seq {have[1]}",
                              f"row says {have[2]}, {have[3]} sightings; the sightings say "
                              f"{want[2]}, {want[3]}")
            want, have = next(expected, None), next(stored, None)


def _journal_ends(connection: Connection, after_batch: int) -> dict[str, int]:
    """Each journal's last turn id stored by batch `after_batch`."""
    c = turn_fields.c
    return {journal: last for journal, last in connection.execute(
        select(c.journal_id, func.max(c.turn_id))
        .where(c.batch_id <= after_batch, c.journal_id.is_not(None))
        .group_by(c.journal_id))}


def turn_field_problems(connection: Connection, after_batch: int = 0) -> Iterator[Problem]:
    """Every turn of the batches after `after_batch` has exactly the row its line derives
    (its journal as the module says), and no row, of any batch, names a turn that is not
    stored."""
    t, f = turns.c, turn_fields.c
    ends = _journal_ends(connection, after_batch) if after_batch else {}
    batch_journal: dict[int, str] = {}
    statement = (select(t.turn_key, t.seq, t.batch_id, t.kind, t.turn_id, t.timestamp, t.line,
                        *(f[name] for name in COLUMNS))
                 .join_from(turns, turn_fields, f.turn_key == t.turn_key, isouter=True)
                 .where(t.batch_id > after_batch).order_by(t.seq))
    width = 7
    for row in connection.execute(statement.execution_options(yield_per=READ_ROWS)):
        key, seq, batch_id, kind, turn_id, timestamp, line = row[:width]
        stored = tuple(row[width:])
        where = f"turn {key}"
        if stored[0] is None:
            yield Problem(seq, "turn_fields", where, "row is missing")
            continue
        journal = stored[COLUMNS.index("journal_id")]
        if kind == JOURNAL:
            expected_journal = _follows(journal, key, turn_id, batch_id, ends, batch_journal)
            if expected_journal is not None:
                yield Problem(seq, "turn_fields", where, expected_journal)
            ends[journal] = turn_id
        want = derived_row(key, batch_id, seq, kind, turn_id, timestamp, line, journal)
        if stored != want:
            differing = [name for name, a, b in zip(COLUMNS, stored, want, strict=True)
                         if a != b]
            yield Problem(seq, "turn_fields", where,
                          f"{', '.join(differing)} differ from what its line says")
    orphans = connection.execute(
        select(f.turn_key).join_from(turn_fields, turns, t.turn_key == f.turn_key,
                                     isouter=True)
        .where(t.turn_key.is_(None)).order_by(f.turn_key))  # any batch: rows added late
    for (key,) in orphans:
        yield Problem(None, "turn_fields", f"turn {key}",
                      "row names no stored turn (added out of band)")


def _follows(journal: str | None, key: str, turn_id: int, batch_id: int,
             ends: dict[str, int], batch_journal: dict[int, str]) -> str | None:
    """What is wrong with a journal turn's journal, or None."""
    if journal is None:
        return "a journal turn without a journal"
    if batch_journal.setdefault(batch_id, journal) != journal:
        return f"its batch holds journal {batch_journal[batch_id]}, it names {journal}"
    if turn_id == 1:
        return None if journal == key else f"turn 1 names journal {journal}, not its own key"
    if ends.get(journal) != turn_id - 1:
        return (f"journal {journal} has no turn {turn_id - 1} stored before it (its last: "
                f"{ends.get(journal)})")
    return None
