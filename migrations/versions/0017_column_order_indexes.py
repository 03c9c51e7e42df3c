"""Every column the console shows can be sorted (issue 33): the indexes those orders read a
page along, (column, seq), so a page is one index range from its cursor rather than every
row sorted.

- contract_assessments: (candidate_organ, seq), (runnable, seq), (problem_text, seq); its id
  order reads the primary key.
- surface_records (surface, seq) and turns (prompt, seq): the long texts (docs/benchmarks.md
  says what each costs in bytes and what page time it buys).
- ingest_batches: none (a store holds one batch per ingest: its orders sort them all).

Texts sort in byte order on both backends (store.db.queries.byte_order): SQLite's BINARY is
already, PostgreSQL's is `COLLATE "C"`, and an index serves it only if built in that collation.
So on PostgreSQL the text indexes above are built `COLLATE "C"`, and so are indexes for the
text orders that existed before (their indexes, in the database's collation, serve the filters
and stay): `ix_<table>_<column>_byte_order` on (column COLLATE "C", seq).

Indexes only: no row, leaf, tree head or trigger changes, and no table is rebuilt (no batch
mode, which would drop the triggers). Downgrade drops them.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op
from pending_checks import pending_checks_first

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

# (table, column, a text) for each new index, named ix_<table>_<column>_seq.
NEW = [
    ("contract_assessments", "candidate_organ", True),
    ("contract_assessments", "runnable", False),
    ("contract_assessments", "problem_text", True),
    ("surface_records", "surface", True),
    ("turns", "prompt", True),
]
# The text orders that existed before, each with its index in the database's collation:
# PostgreSQL only, in byte order.
BYTE_ORDER = [
    ("contract_residuals", "residual_kind"),
    ("contract_residuals", "source_axis"),
    ("contract_residuals", "candidate_organ"),
    ("contract_residuals", "residual_code"),
    ("surface_records", "grounding_source"),
    ("surface_records", "verification"),
    ("surface_records", "corpus_id"),
    ("turns", "grounding_source"),
    ("turns", "epistemic_state"),
    ("turns", "normative_clearance"),
]


def upgrade() -> None:
    with pending_checks_first() as postgresql:
        for table, column, text in NEW:
            collated = ' COLLATE "C"' if postgresql and text else ""
            op.execute(
                f"CREATE INDEX ix_{table}_{column}_seq ON {table} ({column}{collated}, seq)")
        if postgresql:
            for table, column in BYTE_ORDER:
                op.execute(f'CREATE INDEX ix_{table}_{column}_byte_order ON {table} '
                           f'({column} COLLATE "C", seq)')


def downgrade() -> None:
    with pending_checks_first() as postgresql:
        if postgresql:
            for table, column in BYTE_ORDER:
                op.drop_index(f"ix_{table}_{column}_byte_order", table_name=table)
        for table, column, _ in NEW:
            op.drop_index(f"ix_{table}_{column}_seq", table_name=table)
