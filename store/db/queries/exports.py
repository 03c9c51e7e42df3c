"""Whole record tables in append order, streamed: what `core-audit export` writes.

Rows are the stored values, column for column, so an exported record is its log entry's row
plus `seq`; in JSONL, the columns that hold JSON text (`JSON_COLUMNS`: evidence spans,
missing bindings, domains, chain ids, checked-against files) are nested as the JSON they
hold, exactly those bytes (the store keeps them as canonical JSON, so re-encoding a nested
value as canonical JSON gives the row's text back: `verify-proof --records` does). CSV
keeps the text. Every statement
selects one table's columns, filtered as the API filters that kind, ordered by `seq`. The
kinds are the listings' (queries.LISTINGS) that say `exported`, and their sightings where
they name them (`sightings_exported`).
"""

from __future__ import annotations

import csv
import io
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import (
    Boolean,
    ColumnElement,
    Connection,
    LargeBinary,
    Select,
    String,
    Table,
    cast,
    literal_column,
    select,
)

from store.db.queries.as_of import Snapshot, held, snapshot_at
from store.db.queries.errors import QueryError
from store.db.queries.filters import filter_order
from store.db.queries.listing_declarations import LISTINGS
from store.db.queries.listings import Filter, RecordListing
from store.db.queries.search import Searched
from store.db.schema.engine import row_chunks_read
from store.db.schema.tables import tree_heads, turn_assessments, turn_constructions
from store.model.spreadsheet_cells import FORMULA_STARTS, neutralized_rows

# Rows fetched per round trip (SQLite: fetchmany; PostgreSQL: a server-side cursor).
EXPORT_CHUNK_ROWS = 5000

# The columns that hold canonical JSON (lists and objects; null where the record has none),
# by table: JSONL nests them (tests/cli/test_export_cli.py checks no other column holds a
# list or object).
JSON_COLUMNS: dict[str, frozenset[str]] = {
    "contract_residuals": frozenset({"evidence_spans"}),
    "contract_assessments": frozenset({"missing_bindings", "unresolved_hazards",
                                       "evidence_spans"}),
    "surface_records": frozenset({"subject_domains", "object_domains", "hop_chain_ids",
                                  "candidate_chain_ids", "checked_against"}),
}

ExportFilter = Filter


@dataclass(frozen=True, slots=True)
class ExportKind:
    """One exportable kind: its table, the filter it takes, and its filtered rows."""

    name: str
    table: Table
    filter_type: type[Filter] | None
    _rows: Callable[[Any, Snapshot | None], Select[Any]]  # (filter or None, snapshot)
    order: str = "seq"  # append order: a leaf's seq, a tree head's size

    @property
    def columns(self) -> list[str]:
        return [str(column.name) for column in self.table.columns]  # not quoted_name: orjson keys

    @property
    def text_columns(self) -> list[int]:
        """Positions of the text columns (the cells a spreadsheet might run)."""
        return [i for i, column in enumerate(self.table.columns)
                if isinstance(column.type, String)]

    @property
    def json_columns(self) -> list[int]:
        """Positions of the columns holding JSON text (JSONL nests them)."""
        nested = JSON_COLUMNS.get(self.table.name, frozenset())
        return [i for i, column in enumerate(self.table.columns) if column.name in nested]

    def jsonl_row(self, row: Sequence[Any]) -> dict[str, Any]:
        """A row as its JSONL object: the JSON columns nested, as the bytes stored."""
        record = dict(zip(self.columns, row, strict=True))
        for i in self.json_columns:
            text = row[i]
            if text is not None:
                record[self.columns[i]] = orjson.Fragment(
                    text.encode("utf-8") if isinstance(text, str) else text)
        return record

    @property
    def boolean_columns(self) -> list[int]:
        """Positions of the columns read as bool (CSV spells them as JSON does)."""
        return [i for i, column in enumerate(self.table.columns)
                if isinstance(column.type, Boolean)]

    def statement(self, where: ExportFilter | None = None,
                  snapshot: Snapshot | None = None) -> Select[Any]:
        given = where.base if isinstance(where, Searched) else where
        if given is not None and (self.filter_type is None
                                  or not isinstance(given, self.filter_type)):
            raise TypeError(f"{self.name} takes a {getattr(self.filter_type, '__name__', None)}")
        # A joined record (a turn's surface, an occurrence's residual) was stored before its
        # row, so bounding this table's seq is the whole as-of condition.
        return self._rows(where, snapshot).order_by(self.table.c[self.order])


def export_kinds(listings: Iterable[RecordListing[Any, Any]]) -> dict[str, ExportKind]:
    """Each exported listing's table (filtered as the API filters it) and, where it says so,
    its sightings' (filtered by their record), in the order the filters are defined."""
    kinds: list[ExportKind] = []
    for listing in sorted((listing for listing in listings if listing.exported),
                          key=lambda listing: filter_order(listing.filter_type)):
        kinds.append(ExportKind(listing.name, listing.table, listing.filter_type,
                                listing.filtered))
        if listing.sightings is not None and listing.sightings_exported is not None:
            kinds.append(ExportKind(listing.sightings_exported, listing.sightings,
                                    listing.filter_type, listing.sightings_rows))
    return {kind.name: kind for kind in kinds}


def _tree_heads(_: None, snapshot: Snapshot | None) -> Select[Any]:
    statement = select(tree_heads)
    if snapshot is not None:
        statement = statement.where(tree_heads.c.tree_size <= snapshot.tree_size)
    return statement


def _leaves_of(table: Table) -> Callable[[None, Snapshot | None], Select[Any]]:
    """A leaf table that takes no filter, stored by `snapshot`."""
    def rows(_: None, snapshot: Snapshot | None) -> Select[Any]:
        return select(table).where(*held(snapshot, table))
    return rows


# Every kind the store keeps: the listings', the journal turns' construction statuses and
# links to their assessments, and the log's own tree heads (one per batch).
EXPORT_KINDS: dict[str, ExportKind] = {
    **export_kinds(LISTINGS.values()),
    "turn-constructions": ExportKind("turn-constructions", turn_constructions, None,
                                     _leaves_of(turn_constructions)),
    "turn-assessments": ExportKind("turn-assessments", turn_assessments, None,
                                   _leaves_of(turn_assessments)),
    "tree-heads": ExportKind("tree-heads", tree_heads, None, _tree_heads, order="tree_size"),
}


def _statement(connection: Connection, export_kind: ExportKind, where: ExportFilter | None,
               as_of: int | None, since: int | None) -> Select[Any]:
    statement = export_kind.statement(where, snapshot_at(connection, as_of))
    if since is not None:
        start = snapshot_at(connection, since)
        assert start is not None
        if as_of is not None and start.tree_size > as_of:
            raise QueryError(f"since: {since} is above the as-of size {as_of}")
        statement = statement.where(export_kind.table.c.seq > start.tree_size)
    return statement


def export_rows(connection: Connection, kind: str, where: ExportFilter | None = None,
                as_of: int | None = None, since: int | None = None) -> Iterator[Sequence[Any]]:
    """The rows of `kind` matching `where` (as of tree size `as_of`, appended after tree size
    `since`: QueryError unless each is 0 or a recorded head's), as sequences in
    `EXPORT_KINDS[kind].columns` order, in append order, fetched EXPORT_CHUNK_ROWS at a time:
    memory stays flat."""
    export_kind = EXPORT_KINDS[kind]
    statement = _statement(connection, export_kind, where, as_of, since)
    chunks = row_chunks_read(connection, statement, EXPORT_CHUNK_ROWS)
    # SQLite's driver reads a Boolean as 0 or 1: as bool, as SQLAlchemy reads it.
    booleans = export_kind.boolean_columns if connection.dialect.name == "sqlite" else []
    return _with_booleans(chunks, booleans)


def export_lines(connection: Connection, kind: str, output_format: str,
                 where: ExportFilter | None = None, as_of: int | None = None,
                 since: int | None = None, *, csv_raw: bool = False
                 ) -> Iterator[list[bytes]] | None:
    """SQLite: the rows of `export_rows` as their finished CSV or JSONL lines (UTF-8, no line
    end), EXPORT_CHUNK_ROWS at a time, built by SQLite itself, so the export runs near the
    sqlite3 CLI's speed; None where the SQL path does not apply (PostgreSQL; a SQLite whose
    JSON quoting differs from orjson's) and the caller writes `export_rows` itself.
    Byte-identical to that (a property test holds it). CSV text cells a spreadsheet would run
    get a quote in front (store.model.spreadsheet_cells) unless `csv_raw`."""
    if connection.dialect.name != "sqlite" or not _sqlite_quotes_as_orjson(connection):
        return None
    export_kind = EXPORT_KINDS[kind]
    line = (_csv_line(export_kind, neutralize=not csv_raw) if output_format == "csv"
            else _json_line(export_kind))
    statement = _statement(connection, export_kind, where, as_of, since)
    # As a BLOB: the line's UTF-8 bytes, neither decoded nor encoded again in Python.
    return _line_chunks(row_chunks_read(connection, statement.with_only_columns(
        cast(line, LargeBinary), maintain_column_froms=True), EXPORT_CHUNK_ROWS))


def _line_chunks(chunks: Iterator[Sequence[Sequence[Any]]]) -> Iterator[list[bytes]]:
    first = operator.itemgetter(0)
    for rows in chunks:
        yield list(map(first, rows))


# The characters csv.writer (QUOTE_MINIMAL) quotes a field for, one GLOB each: a GLOB of one
# literal character runs as a C strcspn, a character class is parsed again at every position
# (a 4-character class was 1.7 s of a 2.3 s export of 513k residuals).
_CSV_SPECIALS = ("','", "'\"'", "char(10)", "char(13)")
_JSON_PROBE = "".join(map(chr, range(0x20))) + '"\\/\x7f\u2028\u00e9\U0001f600'


def _sqlite_quotes_as_orjson(connection: Connection) -> bool:
    quoted = connection.exec_driver_sql("SELECT json_quote(?)", (_JSON_PROBE,)).scalar()
    return bool(quoted == orjson.dumps(_JSON_PROBE).decode())


# The code points a cell a spreadsheet would run starts with (unicode() of a NULL is NULL).
_FORMULA_CODES = ", ".join(str(ord(c)) for c in FORMULA_STARTS)


def _csv_line(kind: ExportKind, *, neutralize: bool = True) -> ColumnElement[Any]:
    """One printf of every cell (a chain of || copies the growing line once per column); a
    NULL prints as an empty cell; `neutralize`: a quote before a text cell a spreadsheet
    would run (it never changes whether the cell needs quoting)."""
    cells = []
    for column in kind.table.columns:
        name = f"{kind.table.name}.{column.name}"
        if isinstance(column.type, Boolean):
            cells.append(f"CASE WHEN {name} IS NULL THEN '' WHEN {name} THEN 'true' "
                         "ELSE 'false' END")
        elif isinstance(column.type, String):
            special = " OR ".join(f"{name} GLOB ('*' || {c} || '*')" for c in _CSV_SPECIALS)
            quote = (f"CASE WHEN unicode({name}) IN ({_FORMULA_CODES}) THEN '''' ELSE '' END"
                     " || " if neutralize else "")
            cells.append(f"CASE WHEN {special} THEN '\"' || {quote}"
                         f"replace({name}, '\"', '\"\"') || '\"' ELSE {quote}{name} END")
        else:  # integers: their decimal digits
            cells.append(name)
    return literal_column(f"printf('{','.join(['%s'] * len(cells))}', {', '.join(cells)})")


def _json_line(kind: ExportKind) -> ColumnElement[Any]:
    pairs = []
    nested = JSON_COLUMNS.get(kind.table.name, frozenset())
    for column in kind.table.columns:
        name = f"{kind.table.name}.{column.name}"
        if isinstance(column.type, Boolean):
            value = (f"json(CASE WHEN {name} IS NULL THEN NULL WHEN {name} THEN 'true' "
                     "ELSE 'false' END)")
        elif column.name in nested:  # canonical JSON already: json() nests it as it is
            value = f"json({name})"
        else:
            value = name
        pairs.append(f"'{column.name}', {value}")
    return literal_column(f"json_object({', '.join(pairs)})")


def _with_booleans(chunks: Iterator[Sequence[Sequence[Any]]], positions: list[int]
                   ) -> Iterator[Sequence[Any]]:
    for rows in chunks:
        if not positions:
            yield from rows
            continue
        for row in rows:
            cells = list(row)
            for i in positions:
                if cells[i] is not None:
                    cells[i] = bool(cells[i])
            yield cells


def export_chunk(connection: Connection, kind: str, where: ExportFilter | None,
                 snapshot: Snapshot | None, after_seq: int, limit: int = EXPORT_CHUNK_ROWS
                 ) -> list[Sequence[Any]]:
    """The next `limit` rows of `kind` past seq `after_seq` (keyset: each chunk its own
    statement, so a server can read a whole table under one time limit per chunk)."""
    export = EXPORT_KINDS[kind]
    statement = export.statement(where, snapshot).where(export.table.c.seq > after_seq)
    return list(connection.execute(statement.limit(limit)).all())


_JSON_BOOLEAN = {True: "true", False: "false", None: None}


def encode_rows(kind: str, rows: Sequence[Sequence[Any]], output_format: str, *,
                header: bool, csv_raw: bool = False) -> bytes:
    """Rows as `core-audit export` writes them (its row writers, which its SQLite lines
    equal byte for byte): CSV (RFC 4180, CRLF, true/false, the header row if `header`, text
    cells a spreadsheet would run neutralized unless `csv_raw`) or JSONL (one object per
    line, the header's keys)."""
    export = EXPORT_KINDS[kind]
    columns = export.columns
    if output_format == "jsonl":
        return b"".join(orjson.dumps(export.jsonl_row(row)) + b"\n" for row in rows)
    booleans = export.boolean_columns
    text = io.StringIO(newline="")
    writer = csv.writer(text)  # RFC 4180: CRLF line ends, quotes doubled inside quoted cells
    if header:
        writer.writerow(columns)
    if not csv_raw:
        rows = list(neutralized_rows(rows, export.text_columns))
    for row in rows:
        if booleans:
            row = list(row)
            for i in booleans:
                row[i] = _JSON_BOOLEAN[row[i]]
        writer.writerow(row)
    return text.getvalue().encode("utf-8")
