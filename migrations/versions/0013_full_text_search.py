"""Full-text search: per record, the text it is searched by (`residual_texts`, `surface_texts`,
`turn_texts`: derived, like `turn_fields`), and the engine's own index over each: SQLite
FTS5 with external content (the text table), PostgreSQL a stored `document tsvector`
generated column with a GIN index.

One document per record, never per sighting: a residual's is the problem text of the
assessment that first sighted it and its explanation; a surface's its text and its first
sighting's prompt; a turn's its prompt and the text of the surface it emitted. Backfilled
here from the stored rows; the writer adds each batch's from now on.

The text tables are created whole (no batch mode: it would drop the triggers) under the
append-only guards every table has. A virtual table takes no trigger, and FTS5 rewrites its
own shadow tables: the index is derived data, checked by `verify` against the rows. No row
of an existing table changes, so no id, leaf or tree head does.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from append_only import (
    create_append_only_triggers_v2,
    drop_append_only_triggers,
    sqlite_insert_guard_v3,
)
from sqlalchemy.dialects import postgresql

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

KEY = ("record_seq",)
# text table -> its indexed columns, in order
_TEXTS = {
    "residual_texts": ("problem_text", "explanation"),
    "surface_texts": ("surface", "prompt"),
    "turn_texts": ("prompt", "surface"),
}
# Frozen: each text table's rows, derived from the ledgered rows as of this revision.
_BACKFILL = {
    "residual_texts": (
        "SELECT r.seq, r.batch_id, (SELECT a.problem_text FROM residual_occurrences o "
        "JOIN contract_assessments a ON a.assessment_id = o.assessment_id "
        "WHERE o.residual_id = r.residual_id ORDER BY o.seq LIMIT 1), r.explanation "
        "FROM contract_residuals r ORDER BY r.seq"),
    "surface_texts": (
        "SELECT s.seq, s.batch_id, s.surface, (SELECT o.prompt FROM surface_occurrences o "
        "WHERE o.surface_id = s.surface_id ORDER BY o.seq LIMIT 1) "
        "FROM surface_records s ORDER BY s.seq"),
    "turn_texts": (
        "SELECT t.seq, t.batch_id, t.prompt, s.surface FROM turns t "
        "JOIN surface_records s ON s.surface_id = t.surface_id ORDER BY t.seq"),
}
FTS5_TOKENIZER = "unicode61 remove_diacritics 2"
PG_CONFIG = "simple"


def _document(columns: tuple[str, ...]) -> str:
    joined = " || ' ' || ".join(f"coalesce({c}, '')" for c in columns)
    return f"to_tsvector('{PG_CONFIG}'::regconfig, {joined})"


def upgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    position = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    for table, columns in _TEXTS.items():
        # PostgreSQL: the tsvector each row's text gives, kept by the engine itself.
        document = [] if sqlite else [sa.Column(
            "document", postgresql.TSVECTOR(), sa.Computed(_document(columns), persisted=True))]
        op.create_table(
            table,
            sa.Column("record_seq", position, nullable=False, autoincrement=False),
            sa.Column("batch_id", sa.Integer(), nullable=False),
            *(sa.Column(column, sa.Text(), nullable=True) for column in columns),
            *document,
            sa.PrimaryKeyConstraint(*KEY, name=f"pk_{table}"),
            sa.ForeignKeyConstraint(["batch_id"], ["ingest_batches.batch_id"],
                                    name=f"fk_{table}_batch_id_ingest_batches",
                                    deferrable=True, initially="DEFERRED"),
        )
        if not sqlite:  # PostgreSQL refuses CREATE INDEX while the rows' deferred FK checks pend
            op.execute(f"CREATE INDEX ix_{table}_document ON {table} USING gin (document)")
        names = ", ".join(("record_seq", "batch_id", *columns))
        op.execute(f"INSERT INTO {table} ({names}) {_BACKFILL[table]}")
        if sqlite:
            # External content: the documents stay in the text table; 'rebuild' reads them.
            op.execute(f"CREATE VIRTUAL TABLE {table}_fts USING fts5({', '.join(columns)}, "
                       f"content='{table}', content_rowid='record_seq', "
                       f"tokenize='{FTS5_TOKENIZER}')")
            op.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('rebuild')")
        create_append_only_triggers_v2(table, KEY)
        if sqlite:  # record_seq is the rowid itself: the key guard covers an explicit rowid
            op.execute(f"DROP TRIGGER {table}_append_only_insert")
            op.execute(sqlite_insert_guard_v3(table, KEY, rowid=False))


def downgrade() -> None:
    # Derived rows and indexes only: dropping them loses nothing the ledger holds.
    sqlite = op.get_bind().dialect.name == "sqlite"
    for table in reversed(_TEXTS):
        if sqlite:
            op.execute(f"DROP TABLE IF EXISTS {table}_fts")
        drop_append_only_triggers(table)
        op.drop_table(table)
