"""The search text tables (revision 0013): per record, the text it is searched by; and beside
the residuals' documents, their facet columns (revision 0015)."""

from __future__ import annotations

from sqlalchemy import Column, Index, Integer, Table, Text

from store.db.schema.metadata import LogPosition, batch_reference, metadata

# Derived, not ledgered (revision 0013): the text each record is searched by, one document per
# record (never per sighting), keyed by the record's own seq. A residual's: the problem text
# of the assessment that first sighted it, and its explanation; a surface's: its text and the
# prompt of its first sighting; a turn's: its prompt and the text of the surface it emitted.
# Written with the record's batch; `verify` derives every row again from the ledgered rows.
# The engines' full-text indexes are built over these tables (store/db/schema/text_search.py).


def _texts(name: str, *columns: str) -> Table:
    """A search text table: per record (by its seq), the batch that stored it and its text."""
    return Table(
        name,
        metadata,
        Column("record_seq", LogPosition, primary_key=True, autoincrement=False),
        Column("batch_id", Integer, batch_reference(), nullable=False),
        *(Column(column, Text, nullable=True) for column in columns),
    )


residual_texts = _texts("residual_texts", "problem_text", "explanation")
surface_texts = _texts("surface_texts", "surface", "prompt")
turn_texts = _texts("turn_texts", "prompt", "surface")

# Derived, not ledgered (revision 0015): the residual tallies one residual at a time. Per
# residual (by its seq, as its search document is keyed) and per batch that stored or sighted
# it: the residual's facet columns, `residuals` 1 if that batch first stored it (else 0), and
# `occurrences` the sightings of it that batch recorded. A search's facets and groups sum the
# matches' rows here (narrow, keyed by the document's record_seq) instead of reading every
# matching residual row and its sightings one by one. The columns bear residual_tallies'
# names, so a residual filter's conditions apply to them as they do to the tallies (a batch
# range on `batch_id` counts what the tallies count). Written by the batch that stores or
# sights the residual; `verify` derives every row again from the ledgered rows.
residual_record_tallies = Table(
    "residual_record_tallies",
    metadata,
    Column("record_seq", LogPosition, primary_key=True, autoincrement=False),
    Column("batch_id", Integer, batch_reference(), primary_key=True, autoincrement=False),
    Column("residual_kind", Text, nullable=False),
    Column("source_axis", Text, nullable=False),
    Column("candidate_organ", Text, nullable=False),
    Column("family_id", Text, nullable=True),
    Column("residual_code", Text, nullable=False),
    Column("residuals", Integer, nullable=False),
    Column("occurrences", Integer, nullable=False),
)
# A batch's proof reads back the rows it wrote by batch_id.
Index("ix_residual_record_tallies_batch_id", residual_record_tallies.c.batch_id)
