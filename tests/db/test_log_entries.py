"""A row's log entry as the batch proof builds it from the driver's row tuples
(store/db/log/stored_log.EntryEncoder: the columns sorted once per table, SQLite's 0/1 read as
a Boolean) is byte for byte log_entry's of the row as SQLAlchemy reads it, for every row of
every table the log covers, on both backends; the `journal_db` store holds every record type
(tests/conftest.py).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select

from store.db.audit_store import AuditStore
from store.db.log.stored_log import EntryEncoder, log_entry
from store.db.schema.record_kinds import LATE_COLUMNS, LEDGERED_KEYS
from store.db.schema.tables import metadata


def _entries(connection: Connection, table: str) -> list[tuple[bytes, bytes, bool]]:
    t, entry = metadata.tables[table], EntryEncoder(table)
    late = LATE_COLUMNS.get(table, frozenset())
    found: list[tuple[bytes, bytes, bool]] = []
    statement = select(*(t.c[c] for c in entry.columns), t.c.seq).order_by(t.c.seq)
    result = connection.execute(statement)
    driver_rows = result.cursor.fetchall()
    result.close()
    for raw, row in zip(driver_rows, connection.execute(statement), strict=True):
        mapping: dict[str, Any] = dict(zip([*entry.columns, "seq"], row, strict=True))
        found.append((entry(raw), log_entry(table, mapping),
                      any(mapping[c] is None for c in late)))
    return found


def test_every_stored_row_encodes_as_its_log_entry(journal_db: AuditStore) -> None:
    tables = sorted(LEDGERED_KEYS)
    found = {table: journal_db.execute(_entries, table) for table in tables}
    # Every table holds rows but the construction tables (the example journal carries no
    # construction evidence; tests/db/test_export_lines.py and the construction tests cover
    # their rows' encodings).
    assert all(found[table] for table in tables
               if table not in ("turn_constructions", "turn_assessments"))
    for table in tables:
        assert [fast for fast, _, _ in found[table]] == [slow for _, slow, _ in found[table]]
    assert any(late for table in tables for _, _, late in found[table])  # a null late column
    assert found["ingest_batches"][0][0].startswith(b'{"row":{"batch_id":1,')
    assert all(b'"runnable":false' in fast or b'"runnable":true' in fast
               for fast, _, _ in found["contract_assessments"])
