"""Record kinds are declared once, and a declaration that disagrees with its table fails."""

from __future__ import annotations

import pytest
from log_leaves import LEAF_KEYS
from sqlalchemy import Column, Integer, MetaData, String, Table, Text

from store.db.schema import content_ids
from store.db.schema.record_kinds import (
    APPEND_ONLY_TABLES,
    DERIVED_TABLES,
    LEDGERED_KEYS,
    RECORD_KINDS,
    RecordKind,
    RecordKindError,
    check_record_kinds,
)
from store.db.schema.tables import metadata


def test_every_table_of_the_schema_is_declared_once() -> None:
    names = [kind.name for kind in RECORD_KINDS]
    assert sorted(names) == sorted(metadata.tables)
    assert len(set(names)) == len(names)


def test_the_log_s_leaves_and_the_guarded_tables_follow_from_the_declarations() -> None:
    # The leaf tables and their keys as docs/design.md and revision 0006 define them.
    assert dict(LEDGERED_KEYS) == LEAF_KEYS
    derived = ("residual_tallies", "log_subtrees", "tree_heads", "log_origin", "checkpoints",
               "checkpoint_cosignatures",  # these two: revision 0009
               "sighting_counts",  # revision 0010
               "turn_fields",  # revision 0011
               "residual_texts", "surface_texts", "turn_texts",  # revision 0013
               "residual_record_tallies")  # revision 0015
    assert tuple(APPEND_ONLY_TABLES) == (*LEDGERED_KEYS, *derived)


def _tables() -> tuple[MetaData, Table, Table]:
    schema = MetaData()
    parent = Table("parent", schema, Column("parent_id", String(64), primary_key=True),
                   Column("seq", Integer), Column("batch_id", Integer),
                   Column("note", Text, nullable=False))
    child = Table("child", schema, Column("parent_id", String(64), primary_key=True),
                  Column("n", Integer, primary_key=True), Column("seq", Integer),
                  Column("batch_id", Integer))
    return schema, parent, child


def test_well_formed_declarations_pass() -> None:
    schema, parent, child = _tables()
    check_record_kinds((
        RecordKind(parent, ("parent_id",), content_ids=content_ids.residual_ids),
        RecordKind(child, ("parent_id", "n"), part_of="parent"),
    ), schema)


@pytest.mark.parametrize(("declare", "message"), [
    (lambda p, c: (RecordKind(p, ("parent_id",)),),
     "table child: not declared in RECORD_KINDS"),
    (lambda p, c: (RecordKind(p, ("note",)), RecordKind(c, ("parent_id", "n"))),
     "parent: key ('note',) is not the primary key ('parent_id',)"),
    (lambda p, c: (RecordKind(p, ("parent_id",), late_columns=frozenset({"note"})),
                   RecordKind(c, ("parent_id", "n"))),
     "parent: late column note is not a nullable column"),
    (lambda p, c: (RecordKind(p, ("parent_id",)),
                   RecordKind(c, ("parent_id", "n"), content_ids=content_ids.turn_keys)),
     "child: a content-addressed key is one sha256 column"),
    (lambda p, c: (RecordKind(p, ("parent_id",)),
                   RecordKind(c, ("parent_id", "n"), part_of="elsewhere")),
     "child: its key does not start with elsewhere's key"),
])
def test_a_declaration_that_disagrees_with_its_table_fails(declare, message: str) -> None:  # type: ignore[no-untyped-def]
    schema, parent, child = _tables()
    with pytest.raises(RecordKindError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_record_kinds(declare(parent, child), schema)


def test_a_derived_table_needs_no_seq_but_a_ledgered_one_does() -> None:
    schema = MetaData()
    tally = Table("tally", schema, Column("k", Integer, primary_key=True),
                  Column("batch_id", Integer))
    check_record_kinds((RecordKind(tally, ("k",), ledgered=False, derived=True),), schema)
    with pytest.raises(RecordKindError, match="a ledgered table needs seq and batch_id"):
        check_record_kinds((RecordKind(tally, ("k",)),), schema)


def test_a_table_that_is_not_a_leaf_must_say_whether_each_batch_writes_it() -> None:
    """The rule the batch proof and verify records rest on (docs/design.md): a new derived
    table is declared derived=True, or the module refuses to load."""
    schema = MetaData()
    tally = Table("tally", schema, Column("k", Integer, primary_key=True),
                  Column("batch_id", Integer))
    with pytest.raises(RecordKindError, match="tally: not ledgered: say derived=True"):
        check_record_kinds((RecordKind(tally, ("k",), ledgered=False),), schema)
    kept = Table("kept", schema, Column("k", Integer, primary_key=True))
    with pytest.raises(RecordKindError, match="a derived table needs a batch_id column"):
        check_record_kinds((RecordKind(tally, ("k",), ledgered=False, derived=True),
                            RecordKind(kept, ("k",), ledgered=False, derived=True)), schema)


def test_the_derived_tables_are_those_each_batch_writes_beside_its_leaves() -> None:
    assert DERIVED_TABLES == ("residual_tallies", "log_subtrees", "tree_heads",
                              "sighting_counts", "turn_fields", "residual_texts",
                              "surface_texts", "turn_texts", "residual_record_tallies")


def test_flat_query_records_carry_their_tables_columns() -> None:
    from store.db.queries.records import FLAT_RECORDS, Batch, check_flat_records

    check_flat_records()
    assert {record.__name__ for record, *_ in FLAT_RECORDS} == {
        "Batch", "StoredSurface", "SurfaceOccurrence", "StoredTurn", "TurnFields"}
    schema = MetaData()
    columns = metadata.tables["ingest_batches"].columns
    grown = Table("ingest_batches", schema, *(Column(c.name, c.type) for c in columns),
                  Column("operator", Text))
    with pytest.raises(TypeError, match=r"Batch: missing \['operator'\]"):
        check_flat_records(((Batch, grown, frozenset(), frozenset()),))

