"""SQLAlchemy table definitions: alembic's target_metadata. DDL itself lives in migrations/."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    Table,
    Text,
)

from store.db.schema.metadata import LogPosition, Sha256, batch_reference

# Every table is on it once this module is imported (search_text_tables' and tally_tables'
# too, below): the metadata to import, from here.
from store.db.schema.metadata import metadata as metadata


def _seq() -> Column[int]:
    """The row's position in append order: its leaf index in the log is seq - 1. Not a UNIQUE
    constraint (one more key for REPLACE to delete through): verify checks one row a leaf."""
    return Column("seq", LogPosition, nullable=False, index=True)


def _batch() -> Column[int]:
    return Column("batch_id", Integer, batch_reference(), nullable=False)


ingest_batches = Table(
    "ingest_batches",
    metadata,
    Column("batch_id", Integer, primary_key=True, autoincrement=False),
    _seq(),
    Column("source", Text, nullable=False),
    Column("input_sha256", Sha256, nullable=False),
    Column("record_type", Text, nullable=False),
    Column("lines", Integer, nullable=False),
    Column("new_rows", Integer, nullable=False),
    Column("present_rows", Integer, nullable=False),
    Column("rejected_lines", Integer, nullable=False),
    Column("ingested_at", Text, nullable=False),
    Column("store_version", Text, nullable=False),
)

contract_assessments = Table(
    "contract_assessments",
    metadata,
    Column("assessment_id", Sha256, primary_key=True),
    _seq(),
    _batch(),
    Column("problem_text", Text, nullable=True),
    Column("source_ref", Text, nullable=True),
    Column("candidate_organ", Text, nullable=False),
    Column("runnable", Boolean(create_constraint=False), nullable=False),
    Column("missing_bindings", Text, nullable=False),
    Column("unresolved_hazards", Text, nullable=False),
    Column("explanation", Text, nullable=False),
    Column("evidence_spans", Text, nullable=False),
    # Revision 0010: the console's facets by organ and runnable.
    Index(None, "candidate_organ", "runnable"),
    # Its column orders' (revision 0017; on PostgreSQL the texts' are COLLATE "C").
    Index(None, "candidate_organ", "seq"),
    Index(None, "runnable", "seq"),
    Index(None, "problem_text", "seq"),
)

contract_residuals = Table(
    "contract_residuals",
    metadata,
    Column("residual_id", Sha256, primary_key=True),
    _seq(),
    _batch(),
    Column("candidate_organ", Text, nullable=False),
    Column("family_id", Text, nullable=True),
    Column("residual_kind", Text, nullable=False),
    Column("residual_code", Text, nullable=False),
    Column("source_axis", Text, nullable=False),
    Column("evidence_spans", Text, nullable=False),
    Column("explanation", Text, nullable=False),
    Index(None, "residual_kind", "seq"),
    Index(None, "source_axis", "seq"),
    Index(None, "candidate_organ", "seq"),
    Index(None, "family_id", "seq"),
    Index(None, "residual_code", "seq"),
)

residual_occurrences = Table(
    "residual_occurrences",
    metadata,
    Column(
        "assessment_id",
        Sha256,
        ForeignKey("contract_assessments.assessment_id", deferrable=True, initially="DEFERRED"),
        primary_key=True,
    ),
    Column("ordinal", Integer, primary_key=True, autoincrement=False),
    Column(
        "residual_id",
        Sha256,
        ForeignKey("contract_residuals.residual_id", deferrable=True, initially="DEFERRED"),
        nullable=False,
    ),
    _seq(),
    _batch(),
    Index(None, "residual_id", "seq"),
)

surface_records = Table(
    "surface_records",
    metadata,
    Column("surface_id", Sha256, primary_key=True),
    _seq(),
    _batch(),
    Column("grounding_source", Text, nullable=False),
    Column("surface", Text, nullable=True),
    Column("subject", Text, nullable=True),
    Column("intent", Text, nullable=True),
    Column("corpus_id", Text, nullable=True),
    Column("chain_id", Text, nullable=True),
    Column("chain_provenance", Text, nullable=True),
    Column("pack_id", Text, nullable=True),
    Column("pack_version", Text, nullable=True),
    Column("connective", Text, nullable=True),
    Column("object", Text, nullable=True),
    Column("subject_domains", Text, nullable=True),
    Column("object_domains", Text, nullable=True),
    Column("verification", Text, nullable=False),
    Column("expected_surface", Text, nullable=True),
    # Revision 0005: how the surface was verified and against which files.
    Column("surface_form", Text, nullable=True),
    Column("hops", Integer, nullable=True),
    Column("hop_chain_ids", Text, nullable=True),
    Column("candidate_chain_ids", Text, nullable=True),
    Column("surface_prefix", Text, nullable=True),
    Column("checked_against", Text, nullable=True),
    Index(None, "grounding_source", "seq"),
    Index(None, "corpus_id", "seq"),
    Index(None, "chain_id", "seq"),
    Index(None, "intent", "seq"),
    Index(None, "subject", "seq"),
    Index(None, "verification", "seq"),
    Index(None, "surface_form", "seq"),
    Index(None, "surface", "seq"),  # TEXT_ASC/DESC (0017; PostgreSQL: COLLATE "C")
)

surface_occurrences = Table(
    "surface_occurrences",
    metadata,
    Column("occurrence_id", Sha256, primary_key=True),
    Column(
        "surface_id",
        Sha256,
        ForeignKey("surface_records.surface_id", deferrable=True, initially="DEFERRED"),
        nullable=False,
    ),
    _seq(),
    _batch(),
    Column("session_id", Text, nullable=True),
    Column("turn_id", Text, nullable=True),
    Column("prompt", Text, nullable=True),
    Column("turn_key", Sha256, nullable=True),  # revision 0005: the turn that emitted it
    Index(None, "surface_id", "seq"),
)

# One CORE turn: a Workbench journal line, a ChatRuntime output or a TurnEvent, kept verbatim
# in `line` (so its journal_digest can be re-checked by anyone) with the fields auditors filter.
turns = Table(
    "turns",
    metadata,
    Column("turn_key", Sha256, primary_key=True),
    _seq(),
    _batch(),
    Column("kind", Text, nullable=False),
    Column("turn_id", Integer, nullable=True),
    Column("prompt", Text, nullable=True),
    Column("timestamp", Text, nullable=True),
    Column("grounding_source", Text, nullable=False),
    Column("epistemic_state", Text, nullable=True),
    Column("normative_clearance", Text, nullable=True),
    Column("normative_detail", Text, nullable=True),
    Column("verdict_identity", Text, nullable=True),
    Column("verdict_safety", Text, nullable=True),
    Column("verdict_ethics", Text, nullable=True),
    Column("refusal_emitted", Boolean(create_constraint=False), nullable=True),
    Column("hedge_injected", Boolean(create_constraint=False), nullable=True),
    Column("trace_hash", Text, nullable=True),
    Column("trace_integrity", Text, nullable=True),
    Column("journal_digest", Text, nullable=True),
    Column(
        "surface_id",
        Sha256,
        ForeignKey("surface_records.surface_id", deferrable=True, initially="DEFERRED"),
        nullable=False,
    ),
    Column("line", Text, nullable=False),
    # Outside a journal, the line's number in its input: part of the turn's key.
    Column("line_number", Integer, nullable=True),
    Index(None, "grounding_source", "seq"),
    Index(None, "epistemic_state", "seq"),
    Index(None, "normative_clearance", "seq"),
    Index(None, "surface_id", "seq"),
    # Revision 0011: CORE's own identities, looked up by the Workbench.
    Index(None, "trace_hash", "seq"),
    Index(None, "journal_digest", "seq"),
    Index(None, "turn_id", "seq"),
    Index(None, "prompt", "seq"),  # PROMPT_ASC/DESC (0017; PostgreSQL: COLLATE "C")
)

# Derived, not ledgered (revision 0011): per turn, what its verbatim line says beyond the
# columns of `turns` (store.model.turn_fields): CORE's own time as a number that orders
# across offsets, the journal it belongs to (the turn_key of that journal's turn 1) and the
# typed TurnJournalEntry fields. Written with the turn's batch; `verify` derives every row
# again from the lines.
turn_fields = Table(
    "turn_fields",
    metadata,
    Column("turn_key", Sha256, primary_key=True),
    Column("batch_id", Integer, batch_reference(), nullable=False),
    Column("turn_seq", LogPosition, nullable=False),  # the turn's seq: ties by it
    Column("core_time", BigInteger, nullable=True),  # µs since 0000-12-31T00:00Z; no offset: null
    Column("journal_id", Sha256, nullable=True),  # journal turns only
    Column("turn_id", Integer, nullable=True),  # journal turns only: its place in the journal
    Column("articulation_surface", Text, nullable=True),
    Column("walk_surface", Text, nullable=True),
    Column("verdict_identity_detail", Text, nullable=True),
    Column("verdict_safety_detail", Text, nullable=True),
    Column("verdict_ethics_detail", Text, nullable=True),
    Column("proposal_candidates", Text, nullable=True),  # canonical JSON
    Column("turn_cost_ms", BigInteger, nullable=True),
    Column("checkpoint_emitted", Boolean(create_constraint=False), nullable=True),
    Index(None, "journal_id", "turn_id"),  # a turn by CORE's identity
    Index(None, "journal_id", "turn_seq"),  # a journal's turns in order, read in index order
    Index(None, "core_time", "turn_seq"),
    Index(None, "journal_id", "core_time", "turn_seq"),  # a journal's turns in CORE time (0014)
    Index(None, "batch_id", "turn_seq"),
)

# Revision 0012: what a Workbench journal line's construction_evidence came to (one row per
# journal turn whose line carries a payload; none: CORE's "not persisted"), as CORE's seam
# reads it (store/model/construction.py). Recorded evidence's assessments are stored as the
# equivalent frame stores them (source_ref: the turn's key) and linked in order below.
turn_constructions = Table(
    "turn_constructions",
    metadata,
    Column(
        "turn_key",
        Sha256,
        ForeignKey("turns.turn_key", deferrable=True, initially="DEFERRED"),
        primary_key=True,
    ),
    _seq(),
    _batch(),
    Column("status", Text, nullable=False),  # recorded or missing_evidence
    Column("missing_reason", Text, nullable=True),
)

turn_assessments = Table(
    "turn_assessments",
    metadata,
    Column(
        "turn_key",
        Sha256,
        ForeignKey("turn_constructions.turn_key", deferrable=True, initially="DEFERRED"),
        primary_key=True,
    ),
    Column("ordinal", Integer, primary_key=True, autoincrement=False),
    Column(
        "assessment_id",
        Sha256,
        ForeignKey("contract_assessments.assessment_id", deferrable=True, initially="DEFERRED"),
        nullable=False,
    ),
    _seq(),
    _batch(),
    Index(None, "assessment_id", "seq"),
)

# The search text tables (revision 0013) and the tally tables are declared in
# store/db/schema/search_text_tables.py and store/db/schema/tally_tables.py, imported here so
# that metadata.tables keeps its order (verify reports tables in it).
from store.db.schema import search_text_tables, tally_tables  # noqa: E402, F401

# Covering for the turn facets (revision 0018): every turn column they group by, the emitted
# surface and seq (an asOf bound), so they read this narrow index, not each turn's row with
# its verbatim line (from 230 to 18 ms at 100k turns).
Index("ix_turns_facets", turns.c.grounding_source, turns.c.epistemic_state,
      turns.c.normative_clearance, turns.c.kind, turns.c.trace_integrity, turns.c.surface_id,
      turns.c.seq)

# Derived, not ledgered (revision 0010): per batch, each record it sighted (a residual or a
# surface) with the record's sightings stored by the end of that batch. A MOST_SEEN page
# walks the index below in order instead of counting every sighting; as of a tree head, a
# record's count is its row of the newest batch up to that head. `verify` recomputes them.
# Revision 0019: a record is named by its seq (its leaf's position, unique in the log), not
# by its 64-character id, which each row held four times over (186 -> 46 MiB at 1M).
sighting_counts = Table(
    "sighting_counts",
    metadata,
    Column("batch_id", Integer, batch_reference(), primary_key=True, autoincrement=False),
    Column("record_seq", LogPosition, primary_key=True, autoincrement=False),
    Column("record_table", Text, nullable=False),  # contract_residuals or surface_records
    Column("sightings", LogPosition, nullable=False),
)
# Covering, in MOST_SEEN order: a page reads it from its cursor on, not every count.
Index("ix_sighting_counts_most_seen", sighting_counts.c.record_table,
      sighting_counts.c.sightings.desc(), sighting_counts.c.record_seq,
      sighting_counts.c.batch_id)
# A record's newest count (as of a batch): one index range.
Index("ix_sighting_counts_record_seq", sighting_counts.c.record_seq, sighting_counts.c.batch_id,
      sighting_counts.c.sightings)

# The transparency log (revision 0006): every row of a LEDGERED_KEYS table is one leaf of an
# RFC 9162 Merkle tree, leaf index = seq - 1. Stored: the hash of every full, aligned subtree
# of at least 2**SUBTREE_LEVEL leaves (smaller ones are recomputed from at most that many
# rows), and one tree head per batch. Neither is a leaf; `verify` recomputes both.
SUBTREE_LEVEL = 8
log_subtrees = Table(
    "log_subtrees",
    metadata,
    Column("level", Integer, primary_key=True, autoincrement=False),
    Column("start", LogPosition, primary_key=True, autoincrement=False),
    Column("hash", Sha256, nullable=False),
)

tree_heads = Table(
    "tree_heads",
    metadata,
    Column("batch_id", Integer, batch_reference(), primary_key=True, autoincrement=False),
    Column("tree_size", LogPosition, nullable=False, unique=True),
    Column("root_hash", Sha256, nullable=False),
)

# The origin line of the store's checkpoints, fixed by the first `core-audit checkpoint`.
log_origin = Table(
    "log_origin",
    metadata,
    Column("origin", Text, primary_key=True),
)

# Kept checkpoints (revision 0009): each signed checkpoint `core-audit checkpoint --key`
# issued, as signed (several log keys during a rotation); witnesses' cosignatures are appended
# beside it as they arrive. `verify` checks each one against the log.
checkpoints = Table(
    "checkpoints",
    metadata,
    Column("checkpoint_id", Integer, primary_key=True, autoincrement=False),
    Column("tree_size", LogPosition, nullable=False, index=True),
    Column("root_hash", Sha256, nullable=False),
    Column("signers", Text, nullable=False),  # the log keys' names that signed, space-separated
    Column("note", Text, nullable=False),  # the signed note, verbatim
)

checkpoint_cosignatures = Table(
    "checkpoint_cosignatures",
    metadata,
    Column("checkpoint_id", Integer,
           ForeignKey("checkpoints.checkpoint_id", deferrable=True, initially="DEFERRED"),
           primary_key=True, autoincrement=False),
    Column("witness", Text, primary_key=True),  # the witness key's name
    Column("line", Text, nullable=False),  # its cosignature/v1 signature line, verbatim
)
