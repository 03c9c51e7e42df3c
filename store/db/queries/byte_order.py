"""Texts compared in byte order on both backends: the order a column order sorts in.

SQLite compares texts with BINARY (memcmp of their UTF-8) unless told otherwise; PostgreSQL
with the database's collation, which may be a language's (en_US puts "a" before "B" and
skips punctuation). `COLLATE "C"` is PostgreSQL's byte order; an index serves a sort or a
range only if it was built in the same collation (revision 0017 builds them so).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ColumnElement as Element
from sqlalchemy.sql.visitors import InternalTraversal


class ByteOrder(Element[Any]):
    """A text column compared in byte order: `column COLLATE "C"` on PostgreSQL, the column
    itself on SQLite (BINARY already)."""

    # The column is part of a statement's cache key: two columns never share a compiled one.
    # (A list, as SQLAlchemy declares it; never changed.)
    _traverse_internals = [("column", InternalTraversal.dp_clauseelement)]  # noqa: RUF012
    inherit_cache = True

    def __init__(self, column: ColumnElement[Any]) -> None:
        self.column = column
        self.type = column.type

    @property
    def _from_objects(self) -> list[Any]:
        return self.column._from_objects


@compiles(ByteOrder)
def _plain(element: ByteOrder, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.column, **kw)


@compiles(ByteOrder, "postgresql")
def _collated(element: ByteOrder, compiler: SQLCompiler, **kw: Any) -> str:
    return f'{compiler.process(element.column, **kw)} COLLATE "C"'


def in_byte_order(column: ColumnElement[Any]) -> ColumnElement[Any]:
    return ByteOrder(column)
