"""The full-text indexes (revision 0013): one per text table, built by the engine itself.

SQLite: an FTS5 table with external content (`content=` the text table, `content_rowid=`
its record_seq), so the documents are stored once, in the append-only text table, and the
index holds only tokens; the writer inserts a batch's documents into it in the batch's
transaction. PostgreSQL: a stored generated `document tsvector` column on the text table
with a GIN index over it. Neither is a leaf: `verify` checks them against the rows (FTS5's
own integrity check and a count; PostgreSQL: every document equal to its recomputation).

A virtual table takes no trigger, and FTS5 rewrites its own shadow tables as it merges its
segments: the append-only guards are on the text tables the indexes are built from.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, Table, inspect

from store.db.schema.search_text_tables import residual_texts, surface_texts, turn_texts
from store.db.schema.tables import contract_residuals, surface_records, turns
from store.db.schema.tally_tables import residual_record_tallies

# Each engine's tokenizer, fixed: words are cut and folded the same way when indexed and
# when searched. PostgreSQL's `simple` configuration lowercases and does not stem.
FTS5_TOKENIZER = "unicode61 remove_diacritics 2"
PG_CONFIG = "simple"


@dataclass(frozen=True, slots=True)
class TextIndex:
    """A record table's searchable text: its text table, the columns indexed (in order) and
    the full-text index over them."""

    records: Table  # the listed records' table (its seq is the text row's record_seq)
    texts: Table
    columns: tuple[str, ...]

    @property
    def fts(self) -> str:
        """The SQLite FTS5 table's name."""
        return f"{self.texts.name}_fts"

    @property
    def gin(self) -> str:
        """The PostgreSQL GIN index's name."""
        return f"ix_{self.texts.name}_document"

    def pg_document(self) -> str:
        """The tsvector the generated column holds (and `verify` recomputes)."""
        joined = " || ' ' || ".join(f"coalesce({c}, '')" for c in self.columns)
        return f"to_tsvector('{PG_CONFIG}'::regconfig, {joined})"


TEXT_INDEXES: dict[str, TextIndex] = {index.records.name: index for index in (
    TextIndex(contract_residuals, residual_texts, ("problem_text", "explanation")),
    TextIndex(surface_records, surface_texts, ("surface", "prompt")),
    TextIndex(turns, turn_texts, ("prompt", "surface")),
)}
TEXT_TABLES: tuple[str, ...] = tuple(str(index.texts.name) for index in TEXT_INDEXES.values())


def index_of(records: Table) -> TextIndex | None:
    return TEXT_INDEXES.get(str(records.name))


# The search's derived tables, each created by a later revision than the writer may meet.
SEARCH_TABLES: tuple[str, ...] = (*TEXT_TABLES, str(residual_record_tallies.name))


def absent_search_tables(connection: Connection) -> frozenset[str]:
    """The search's derived tables the store does not have yet: the text tables before
    revision 0013, the residual record tallies before 0015. The writer of an earlier
    revision's backfill (0012) runs on a store without them."""
    if connection.dialect.name == "sqlite":
        found = connection.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
            f"({', '.join(repr(name) for name in SEARCH_TABLES)})").scalars().all()
        return frozenset(SEARCH_TABLES) - set(found)
    inspector = inspect(connection)
    return frozenset(name for name in SEARCH_TABLES if not inspector.has_table(name))
