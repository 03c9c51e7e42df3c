"""Checks of the tables themselves, before their rows are read: tables or columns dropped out
of band, SQLite rows placed at an explicit rowid, a one-row table holding more (verify's
`store_checks` runs them)."""

from __future__ import annotations

from collections.abc import Collection, Iterator

from sqlalchemy import Connection, func, inspect, select

from store.db.schema.guards import SINGLE_ROW_TABLES, hidden_rowid
from store.db.schema.tables import metadata
from store.db.verify.problems import Problem


def unreadable_tables(connection: Connection) -> dict[str, Problem]:
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


def rowid_problems(connection: Connection, skip: Collection[str]) -> Iterator[Problem]:
    """SQLite: a row at rowid 0 or below was placed there on purpose (every writer of this
    store lets SQLite pick rowids, from 1): ahead of every stored row in the file's order."""
    if connection.dialect.name != "sqlite":
        return
    for name in sorted(set(metadata.tables) - set(skip)):
        if hidden_rowid(name):
            found = connection.exec_driver_sql(
                f'SELECT count(*) FROM "{name}" WHERE rowid < 1').scalar_one()
            if found:
                yield Problem(None, name, "", f"{found} rows at an explicit rowid below 1: "
                                              "inserted out of band")


def single_row_problems(connection: Connection, skip: Collection[str]) -> Iterator[Problem]:
    yield from rowid_problems(connection, skip)
    for name in sorted(SINGLE_ROW_TABLES - set(skip)):
        rows = connection.execute(
            select(func.count()).select_from(metadata.tables[name])).scalar_one()
        if rows > 1:
            yield Problem(None, name, "", f"holds {rows} rows, one at most: rows were added "
                                          "out of band (which one a reader takes is arbitrary)")
