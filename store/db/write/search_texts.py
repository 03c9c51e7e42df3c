"""The search texts (revision 0013): one document per new record, derived from the rows a
flush appends, inserted through the batch's DerivedWrites (so the batch proof compares their
values read back) and, on SQLite, into the FTS5 index in the same transaction.

A record's document is fixed when the record is first stored, never grown: a residual's
problem text is its first sighting's assessment's, a surface's prompt its first sighting's.
`verify` derives the same from the stored rows (store/db/verify/search_checks.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from store.db.schema.text_search import TEXT_INDEXES, TextIndex
from store.db.write.derived_rows import DerivedWrites
from store.db.write.inserts import APPENDED_PREFIX, content_columns

_AT = len(APPENDED_PREFIX)  # content starts here in an appended row


def _position(table: str, column: str) -> int:
    return content_columns(table).index(column)


_PROBLEM_TEXT = _position("contract_assessments", "problem_text")
_OCCURRENCE_ASSESSMENT = _AT + _position("residual_occurrences", "assessment_id")
_OCCURRENCE_RESIDUAL = _AT + _position("residual_occurrences", "residual_id")
_RESIDUAL_ID = _AT + _position("contract_residuals", "residual_id")
_RESIDUAL_EXPLANATION = _AT + _position("contract_residuals", "explanation")
_SURFACE_ID = _AT + _position("surface_records", "surface_id")
_SURFACE_TEXT = _AT + _position("surface_records", "surface")
_SURFACE_CONTENT_TEXT = _position("surface_records", "surface")
_SIGHTING_SURFACE = _AT + _position("surface_occurrences", "surface_id")
_SIGHTING_PROMPT = _AT + _position("surface_occurrences", "prompt")
_TURN_PROMPT = _AT + _position("turns", "prompt")
_TURN_SURFACE = _AT + _position("turns", "surface_id")

Rows = Mapping[str, list[tuple[Any, ...]]]
Known = Mapping[str, Mapping[tuple[Any, ...], tuple[Any, ...]]]


def _first(rows: list[tuple[Any, ...]], key: int, value: int) -> dict[Any, Any]:
    """Per key, the value of its first row (rows in seq order)."""
    found: dict[Any, Any] = {}
    for row in rows:
        found.setdefault(row[key], row[value])
    return found


def text_rows(batch_id: int, inserts: Rows, known: Known) -> dict[str, list[tuple[Any, ...]]]:
    """The documents of the records new in `inserts` (appended rows, in seq order), by text
    table, each (record_seq, batch_id, *text columns); `known`: every record the flush met,
    stored or new, by key (content tuples)."""
    assessments = known.get("contract_assessments", {})
    first_assessment = _first(inserts.get("residual_occurrences", []), _OCCURRENCE_RESIDUAL,
                              _OCCURRENCE_ASSESSMENT)
    residuals = []
    for row in inserts.get("contract_residuals", []):
        assessment = assessments.get((first_assessment.get(row[_RESIDUAL_ID]),))
        residuals.append((row[0], batch_id,
                          None if assessment is None else assessment[_PROBLEM_TEXT],
                          row[_RESIDUAL_EXPLANATION]))
    first_prompt = _first(inserts.get("surface_occurrences", []), _SIGHTING_SURFACE,
                          _SIGHTING_PROMPT)
    surfaces = [(row[0], batch_id, row[_SURFACE_TEXT], first_prompt.get(row[_SURFACE_ID]))
                for row in inserts.get("surface_records", [])]
    surface_content = known.get("surface_records", {})
    turns = []
    for row in inserts.get("turns", []):
        surface = surface_content.get((row[_TURN_SURFACE],))
        turns.append((row[0], batch_id, row[_TURN_PROMPT],
                      None if surface is None else surface[_SURFACE_CONTENT_TEXT]))
    return {"residual_texts": residuals, "surface_texts": surfaces, "turn_texts": turns}


def fts_insert_sql(index: TextIndex) -> str:
    columns = ", ".join(index.columns)
    markers = ", ".join("?" for _ in range(len(index.columns) + 1))
    return f"INSERT INTO {index.fts} (rowid, {columns}) VALUES ({markers})"


_BY_TEXTS = {str(index.texts.name): index for index in TEXT_INDEXES.values()}


def write_texts(connection: Connection, derived: DerivedWrites,
                rows: dict[str, list[tuple[Any, ...]]]) -> None:
    """The documents into their text tables (digested for the batch proof) and, on SQLite,
    into the FTS5 indexes: the same values, the index's rowid the record's seq."""
    sqlite = connection.dialect.name == "sqlite"
    for table, documents in rows.items():
        if not documents:
            continue
        derived.insert(connection, table, documents)
        if sqlite:
            connection.exec_driver_sql(fts_insert_sql(_BY_TEXTS[table]),
                                       [(d[0], *d[2:]) for d in documents])
