"""A record kind added as docs/design.md's checklist says, and nowhere else: its table (and
the migration creating it), its declaration (a RecordKind, and a listing with its filter, its
row record and its names), and the SDL export; then listed, counted, got by key and exported
through the generic query layer, and served by the GraphQL resolver factory with a generated
filter input and a derived type. The kind is a throw-away: its table is created here, in a
store of its own, where a real kind has a migration."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Column, ColumnElement, Integer, MetaData, Table, Text

from store import AuditStore
from store.api.context import RequestContext
from store.api.schema import build_schema
from store.db import queries
from store.db.queries import BatchRange, Order, QueryError, RecordListing, flat_record
from store.db.queries.exports import export_kinds
from store.db.queries.filters import any_of
from store.db.queries.listing_declarations import check_listings
from store.db.queries.row_records import json_tuple_or_null
from store.db.schema.metadata import Sha256
from store.db.schema.record_kinds import (
    KINDS_BY_TABLE,
    RECORD_KINDS,
    RecordKind,
    check_record_kinds,
)

# 1. Its table (a real kind: in store/db/schema/tables.py, created by one migration).
probe_tables = MetaData()
notes_t = Table(
    "probe_notes", probe_tables,
    Column("note_id", Sha256, primary_key=True),
    Column("seq", Integer, nullable=False, unique=True),
    Column("batch_id", Integer, nullable=False),
    Column("topic", Text, nullable=False),
    Column("tags", Text),
)

# 2. Its declaration: the record kind beside RECORD_KINDS, the listing beside LISTINGS: its
# filter, its record and how a row becomes one, its names.
NOTE_KIND = RecordKind(notes_t, ("note_id",))


@dataclass(frozen=True, slots=True)
class StoredNote:
    note_id: str
    seq: int
    batch_id: int
    topic: str
    tags: tuple[str, ...] | None  # stored as a JSON array


@dataclass(frozen=True, slots=True)
class NoteFilter(BatchRange):
    topic: Sequence[str] | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        return [*([any_of(notes_t.c.topic, self.topic)] if self.topic else []),
                *self.batch_conditions(notes_t.c.batch_id)]


# Its row record: its columns by name, the one not stored as the record holds it converted.
NOTES: RecordListing[NoteFilter, StoredNote] = RecordListing(
    "notes", notes_t, flat_record(StoredNote, tags=json_tuple_or_null), NoteFilter, one="note",
    api_type="Note",
    list_help="Notes, in `order`.", one_help="One note by its note_id.")

A, B, C = ("a" * 64, "b" * 64, "c" * 64)
ROWS = [
    {"note_id": A, "seq": 1, "batch_id": 1, "topic": "alpha", "tags": None},
    {"note_id": B, "seq": 2, "batch_id": 1, "topic": "beta", "tags": '["x"]'},
    {"note_id": C, "seq": 3, "batch_id": 2, "topic": "alpha", "tags": None},
]


@pytest.fixture
def notes_store(examples_store: Path) -> Iterator[AuditStore]:
    # A store with a log (83 leaves): cursors past its newest row are refused as forged.
    with AuditStore.open(str(examples_store)) as store:
        probe_tables.create_all(store.engine)  # what its migration would do
        with store.engine.begin() as connection:
            connection.execute(notes_t.insert(), ROWS)
        yield store


def test_the_declarations_agree_with_the_table() -> None:
    check_record_kinds((*RECORD_KINDS, NOTE_KIND), probe_tables)
    check_listings({"notes": NOTES}, {**KINDS_BY_TABLE, "probe_notes": NOTE_KIND})
    assert (NOTES.key, NOTES.record_type, NOTES.orders) == (
        "note_id", StoredNote, (Order.OLDEST_FIRST, Order.NEWEST_FIRST))


def test_an_undeclared_kind_is_refused() -> None:
    with pytest.raises(TypeError, match="notes: probe_notes is not a ledgered record kind"):
        check_listings({"notes": NOTES})


def test_the_generic_query_lists_counts_and_gets_it(notes_store: AuditStore) -> None:
    run = notes_store.execute
    alpha = NoteFilter(topic=["alpha"])
    assert run(NOTES.list, alpha).items == [StoredNote(A, 1, 1, "alpha", None),
                                            StoredNote(C, 3, 2, "alpha", None)]
    newest = run(NOTES.list, None, 2, order=Order.NEWEST_FIRST)
    assert [n.note_id for n in newest.items] == [C, B] and newest.has_next_page
    rest = run(NOTES.list, None, 2, newest.end_cursor, order=Order.NEWEST_FIRST)
    assert [n.note_id for n in rest.items] == [A] and not rest.has_next_page
    assert [n.note_id for n in run(NOTES.list, NoteFilter(batch_id_from=2)).items] == [C]
    assert (run(NOTES.count), run(NOTES.count, alpha), run(NOTES.count, None, 0)) == (3, 2, 0)
    assert run(NOTES.get, B) == StoredNote(B, 2, 1, "beta", ("x",))
    assert run(NOTES.get, "d" * 64) is None
    with pytest.raises(QueryError, match=r"MOST_SEEN .* which notes do not have"):
        run(NOTES.list, order=Order.MOST_SEEN)


def test_it_is_exported_with_its_filter(notes_store: AuditStore) -> None:
    kinds = export_kinds((*queries.LISTINGS.values(), NOTES))
    assert list(kinds) == ["residuals", "occurrences", "assessments", "surfaces", "sightings",
                           "turns", "notes", "batches"]
    notes = kinds["notes"]
    assert notes.columns == ["note_id", "seq", "batch_id", "topic", "tags"]
    with notes_store.engine.connect() as connection:
        rows = connection.execute(notes.statement(NoteFilter(topic=["alpha"]))).all()
    assert [tuple(row) for row in rows] == [(A, 1, 1, "alpha", None), (C, 3, 2, "alpha", None)]


def _graphql(store: AuditStore, document: str) -> dict[str, Any]:
    schema = build_schema(listings=(*queries.LISTINGS.values(), NOTES))
    result = asyncio.run(schema.execute(document, context_value=RequestContext(store)))
    assert result.errors is None, result.errors
    assert result.data is not None
    return result.data


def test_the_resolver_factory_serves_it(notes_store: AuditStore) -> None:
    data = _graphql(notes_store, f"""{{
      notes(filter: {{topic: ["alpha"]}}, first: 1) {{
        totalCount pageInfo {{ hasNextPage }} nodes {{ noteId seq batchId topic tags }}
      }}
      note(id: "{B}") {{ noteId topic tags }}
      missing: note(id: "{"d" * 64}") {{ noteId }}
    }}""")
    assert data == {
        "notes": {"totalCount": 2, "pageInfo": {"hasNextPage": True},
                  "nodes": [{"noteId": A, "seq": 1, "batchId": 1, "topic": "alpha",
                             "tags": None}]},
        "note": {"noteId": B, "topic": "beta", "tags": ["x"]},
        "missing": None,
    }


def test_its_schema_has_the_generated_input_and_type() -> None:
    # 3. The SDL export: `core-audit schema > graphql/schema.graphql` prints this schema.
    sdl = str(build_schema(listings=(*queries.LISTINGS.values(), NOTES)))
    assert "input NoteFilter {" in sdl and "  topic: [String!] = null\n" in sdl
    assert '"""One note by its note_id."""\n  note(\n    id: ID!' in sdl
    assert ("type Note {\n  noteId: ID!\n  seq: Int!\n  batchId: Int!\n  topic: String!\n"
            "  tags: [String!]\n") in sdl
    assert "\n  notes(\n    filter: NoteFilter = null\n    first: Int = null\n" in sdl
    assert "): NoteConnection!" in sdl
