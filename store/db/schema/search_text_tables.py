"""The search text tables (revision 0013): per record, the text it is searched by. Beside the
residuals' documents, their facet columns (revision 0015) are a tally table
(store/db/schema/tally_tables.py)."""

from __future__ import annotations

from sqlalchemy import Column, Integer, Table, Text

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
