"""The tally tables: derived, not ledgered, per batch what it added per combination of
columns, so facets, groups and histograms sum these few rows instead of reading every row.
`verify` recomputes each from the ledgered rows."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, Column, Index, Integer, Table, Text

from store.db.schema.metadata import LogPosition, batch_reference, metadata


def _residual_counts() -> list[Column[Any]]:
    """A residual tally's (kind, axis, organ, family, code) and what it counts of them."""
    return [
        Column("residual_kind", Text, nullable=False),
        Column("source_axis", Text, nullable=False),
        Column("candidate_organ", Text, nullable=False),
        Column("family_id", Text, nullable=True),
        Column("residual_code", Text, nullable=False),
        Column("residuals", Integer, nullable=False),
        Column("occurrences", Integer, nullable=False),
    ]


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
    *_residual_counts(),
)
# A batch's proof reads back the rows it wrote by batch_id.
Index("ix_residual_record_tallies_batch_id", residual_record_tallies.c.batch_id)

# Derived, not ledgered: per batch, the residuals and occurrences it added for each
# (kind, axis, organ, family, code). Facets and filtered counts sum these few rows instead of
# scanning every residual; `verify` recomputes them from the ledgered rows.
residual_tallies = Table(
    "residual_tallies",
    metadata,
    Column("batch_id", Integer, batch_reference(), primary_key=True, autoincrement=False),
    Column("ordinal", Integer, primary_key=True, autoincrement=False),
    *_residual_counts(),
)

# The columns a tally groups by, in its sort order.
TALLY_DIMENSIONS: tuple[str, ...] = (
    "residual_kind", "source_axis", "candidate_organ", "family_id", "residual_code",
)
# Covering, in grouping order: facets read it in order instead of sorting every tally row
# (2M tally rows: 0.9 s instead of 5.1 s, bench/tallies.py).
Index("ix_residual_tallies_combo", *(residual_tallies.c[name] for name in TALLY_DIMENSIONS),
      residual_tallies.c.residuals, residual_tallies.c.occurrences)

# Derived, not ledgered (revision 0016): per batch, the turns it added per combination of
# their low-cardinality columns and CORE's hour (UTC; core_time // HOUR_MICROSECONDS, null:
# no time). Turn groups and histograms sum these rows; `verify` recomputes them.
# The columns of `turns` a tally groups by, in its sort order; then core_hour.
TURN_TALLY_COLUMNS: tuple[str, ...] = (
    "kind", "grounding_source", "epistemic_state", "normative_clearance", "trace_integrity")
turn_tallies = Table(
    "turn_tallies",
    metadata,
    Column("batch_id", Integer, batch_reference(), primary_key=True, autoincrement=False),
    Column("ordinal", Integer, primary_key=True, autoincrement=False),
    *(Column(name, Text, nullable=name not in ("kind", "grounding_source"))
      for name in TURN_TALLY_COLUMNS),
    Column("core_hour", BigInteger, nullable=True),
    Column("turns", Integer, nullable=False),
)
HOUR_MICROSECONDS = 3_600_000_000
