"""Ledger verification: recompute every row hash and the chain; check the schema, content
ids and the file."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice

from sqlalchemy import Connection, inspect, select, text

from store.db.content_checks import content_id_problems
from store.db.ledger import GENESIS, Checkpoint, chain_hash, row_hash
from store.db.problems import Problem
from store.db.rows import ledger_key
from store.db.schema_checks import schema_problems
from store.db.tables import LEDGERED_KEYS, ledger, metadata
from store.db.tallies import recomputed_tallies, stored_tallies

MAX_PROBLEMS = 20


@dataclass
class VerifyReport:
    rows: int = 0
    tip: Checkpoint | None = None
    problems: list[Problem] = field(default_factory=list)

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


def _chain_problems(connection: Connection, report: VerifyReport) -> Iterator[Problem]:
    expected_seq, head = 1, GENESIS
    rows = connection.execute(select(ledger).order_by(ledger.c.seq))
    for entry in rows:
        if entry.seq != expected_seq:
            yield Problem(expected_seq, "ledger", str(expected_seq),
                          f"ledger entry missing (next entry is seq {entry.seq})")
            return
        if entry.prev_hash != head or entry.chain_hash != chain_hash(head, entry.row_hash):
            yield Problem(entry.seq, entry.table_name, entry.row_key,
                          "ledger chain broken (prev_hash or chain_hash does not match)")
            return
        head = entry.chain_hash
        expected_seq += 1
    report.rows = expected_seq - 1
    report.tip = Checkpoint(report.rows, head)


def _row_problems(connection: Connection, table: str) -> Iterator[Problem]:
    t = metadata.tables[table]
    key_columns = LEDGERED_KEYS[table]
    joined = (
        select(t, ledger.c.table_name, ledger.c.row_key, ledger.c.row_hash)
        .select_from(t.outerjoin(ledger, ledger.c.seq == t.c.seq))
        .order_by(t.c.seq)
    )
    for mapping in connection.execute(joined).mappings():
        row = {c.name: mapping[c.name] for c in t.columns}
        key = ledger_key(tuple(row[c] for c in key_columns))
        if mapping["row_hash"] is None:
            yield Problem(row["seq"], table, key, "row has no ledger entry (added out of band)")
        elif mapping["table_name"] != table or mapping["row_key"] != key:
            yield Problem(row["seq"], table, key,
                          f"ledger seq names {mapping['table_name']} {mapping['row_key']}")
        elif mapping["row_hash"] != row_hash(table, row):
            yield Problem(row["seq"], table, key, "row content does not match its ledger hash")
    missing = (
        select(ledger.c.seq, ledger.c.row_key)
        .select_from(ledger.outerjoin(t, t.c.seq == ledger.c.seq))
        .where(ledger.c.table_name == table, t.c.seq.is_(None))
        .order_by(ledger.c.seq)
    )
    for entry in connection.execute(missing):
        yield Problem(entry.seq, table, entry.row_key, "row is missing (deleted out of band)")


def _tally_problems(connection: Connection) -> Iterator[Problem]:
    """The derived tallies must be exactly what the ledgered rows add up to, batch by batch."""
    stored = stored_tallies(connection)
    for batch_id, expected in recomputed_tallies(connection):
        found = stored.pop(batch_id, [])
        if found != expected:
            yield Problem(None, "residual_tallies", f"batch {batch_id}",
                          f"{len(found)} tally rows do not match the {len(expected)} the "
                          "batch's residuals and occurrences add up to")
    for batch_id, found in stored.items():
        yield Problem(None, "residual_tallies", f"batch {batch_id}",
                      f"{len(found)} tally rows for a batch without residuals")


def _unreadable_tables(connection: Connection) -> dict[str, Problem]:
    """Tables dropped or stripped of columns out of band: reported, and not read further."""
    inspector = inspect(connection)
    present = set(inspector.get_table_names())
    unreadable: dict[str, Problem] = {}
    for name, table in metadata.tables.items():
        if name not in present:
            unreadable[name] = Problem(None, name, "", "table is missing (dropped out of band)")
            continue
        columns = {column["name"] for column in inspector.get_columns(name)}
        lost = [column.name for column in table.columns if column.name not in columns]
        if lost:
            unreadable[name] = Problem(None, name, "", f"columns are missing: {', '.join(lost)}")
    return unreadable


def verify_store(connection: Connection, checkpoint: Checkpoint | None = None) -> VerifyReport:
    report = VerifyReport()
    unreadable = _unreadable_tables(connection)
    problems: list[Problem] = list(unreadable.values())
    problems.extend(schema_problems(connection))  # keys, duplicates, indexes, triggers
    problems.extend(_file_problems(connection))
    if "ledger" in unreadable:
        report.problems = problems[:MAX_PROBLEMS]
        return report
    problems.extend(_chain_problems(connection, report))
    for table in LEDGERED_KEYS:
        if table in unreadable:
            continue
        for problem in _row_problems(connection, table):
            problems.append(problem)
            if len(problems) >= MAX_PROBLEMS * 4:
                break
    content = content_id_problems(connection, skip=unreadable.keys())
    problems.extend(islice(content, MAX_PROBLEMS * 4))
    content.close()  # ends the streamed read when the cap is met
    unknown = {
        row[0] for row in connection.execute(select(ledger.c.table_name).distinct())
    } - set(LEDGERED_KEYS)
    problems.extend(Problem(None, name, "", "ledger names an unknown table") for name in unknown)
    if checkpoint is not None:
        problems.extend(_checkpoint_problems(connection, checkpoint))
    # Structural problems (no seq) first, then rows in ledger order, then the derived
    # tallies (a changed row also upsets its batch's tallies: name the row first).
    problems.sort(key=lambda p: (p.seq is not None, p.seq or 0))
    if not {"residual_tallies", "contract_residuals", "residual_occurrences"} & unreadable.keys():
        problems.extend(_tally_problems(connection))
    report.problems = problems[:MAX_PROBLEMS]
    return report


def _checkpoint_problems(connection: Connection, checkpoint: Checkpoint) -> Iterator[Problem]:
    stored = connection.execute(
        select(ledger.c.chain_hash).where(ledger.c.seq == checkpoint.seq)
    ).scalar_one_or_none()
    if stored is None:
        yield Problem(checkpoint.seq, "ledger", str(checkpoint.seq),
                      "checkpoint seq is beyond the ledger (rows were removed)")
    elif stored != checkpoint.chain_hash:
        yield Problem(checkpoint.seq, "ledger", str(checkpoint.seq),
                      "chain hash differs from the checkpoint (history was rewritten)")
