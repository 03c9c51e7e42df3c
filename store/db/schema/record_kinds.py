"""Every kind of stored record, declared once: its table, its key, how its content names it,
and whether its rows are leaves of the log or derived from them.

The writer's lookups, the log's leaves, `verify`'s content checks, `copy` and the append-only
guards all read these declarations; `check_record_kinds` holds them to the tables when this
module loads, so a table added without a declaration (or a key that is not the table's
primary key) fails at import, not in an auditor's hands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import MetaData, Row, Table

from store.db.schema import content_ids
from store.db.schema.metadata import Sha256
from store.db.schema.search_text_tables import (
    residual_texts,
    surface_texts,
    turn_texts,
)
from store.db.schema.tables import (
    checkpoint_cosignatures,
    checkpoints,
    contract_assessments,
    contract_residuals,
    ingest_batches,
    log_origin,
    log_subtrees,
    metadata,
    residual_occurrences,
    sighting_counts,
    surface_occurrences,
    surface_records,
    tree_heads,
    turn_assessments,
    turn_constructions,
    turn_fields,
    turns,
)
from store.db.schema.tally_tables import residual_record_tallies, residual_tallies, turn_tallies

ContentIds = Callable[[Row[Any]], set[str]]


@dataclass(frozen=True, slots=True)
class RecordKind:
    table: Table
    key: tuple[str, ...]
    # A leaf of the log (with seq and batch_id), or derived: recomputed by verify, not a leaf.
    ledgered: bool = True
    # Not a leaf: True if each batch writes rows of it beside its leaves (then the batch proof
    # reads them back and compares their values, and a verify record sums them per table);
    # False if only another command writes it (checkpoints, the origin). Required for every
    # table that is not ledgered: a new table must say which, or this module fails to load.
    derived: bool | None = None
    # The ids a stored row's content may carry (None: the key is not a content hash).
    content_ids: ContentIds | None = None
    # Nullable columns a later revision added: a null one is left out of the row's leaf.
    late_columns: frozenset[str] = frozenset()
    # Its key starts with this kind's key: only rows of an already stored parent can exist.
    part_of: str | None = None
    # Its rows repeat across a batch's chunks: keep their stored content, boundedly.
    repeats: bool = False
    # Each row is one sighting of a record of this table, named by that table's key column:
    # sighting_counts keeps each record's running count.
    sights: str | None = None

    @property
    def name(self) -> str:
        return str(self.table.name)  # a plain str: SQLAlchemy's quoted_name is a subclass


RECORD_KINDS: tuple[RecordKind, ...] = (
    RecordKind(ingest_batches, ("batch_id",)),
    RecordKind(contract_assessments, ("assessment_id",),
               content_ids=content_ids.assessment_ids),
    RecordKind(contract_residuals, ("residual_id",), content_ids=content_ids.residual_ids,
               repeats=True),
    RecordKind(residual_occurrences, ("assessment_id", "ordinal"),
               part_of="contract_assessments", sights="contract_residuals"),
    RecordKind(surface_records, ("surface_id",), content_ids=content_ids.surface_ids,
               late_columns=frozenset({"surface_form", "hops", "hop_chain_ids",
                                       "candidate_chain_ids", "surface_prefix",
                                       "checked_against"})),
    RecordKind(surface_occurrences, ("occurrence_id",), content_ids=content_ids.sighting_ids,
               late_columns=frozenset({"turn_key"}), sights="surface_records"),
    RecordKind(turns, ("turn_key",), content_ids=content_ids.turn_keys),
    RecordKind(turn_constructions, ("turn_key",), part_of="turns"),
    RecordKind(turn_assessments, ("turn_key", "ordinal"), part_of="turn_constructions"),
    RecordKind(residual_tallies, ("batch_id", "ordinal"), ledgered=False, derived=True),
    RecordKind(log_subtrees, ("level", "start"), ledgered=False, derived=True),
    RecordKind(tree_heads, ("batch_id",), ledgered=False, derived=True),
    RecordKind(log_origin, ("origin",), ledgered=False, derived=False),
    RecordKind(checkpoints, ("checkpoint_id",), ledgered=False, derived=False),
    RecordKind(checkpoint_cosignatures, ("checkpoint_id", "witness"), ledgered=False,
               derived=False),
    RecordKind(sighting_counts, ("batch_id", "record_seq"), ledgered=False, derived=True),
    RecordKind(turn_fields, ("turn_key",), ledgered=False, derived=True),
    RecordKind(residual_texts, ("record_seq",), ledgered=False, derived=True),
    RecordKind(surface_texts, ("record_seq",), ledgered=False, derived=True),
    RecordKind(turn_texts, ("record_seq",), ledgered=False, derived=True),
    RecordKind(residual_record_tallies, ("record_seq", "batch_id"), ledgered=False,
               derived=True),
    RecordKind(turn_tallies, ("batch_id", "ordinal"), ledgered=False, derived=True),
)

KINDS_BY_TABLE: Mapping[str, RecordKind] = {kind.name: kind for kind in RECORD_KINDS}

# Tables whose rows are leaves of the log, with the columns that make up each row's key.
LEDGERED_KEYS: Mapping[str, tuple[str, ...]] = {
    kind.name: kind.key for kind in RECORD_KINDS if kind.ledgered}
LATE_COLUMNS: Mapping[str, frozenset[str]] = {
    kind.name: kind.late_columns for kind in RECORD_KINDS if kind.late_columns}
# Per sighting table: the table whose records it sights and the column naming them.
SIGHTED: Mapping[str, tuple[str, str]] = {
    kind.name: (kind.sights, KINDS_BY_TABLE[kind.sights].key[0])
    for kind in RECORD_KINDS if kind.sights is not None}
# Tables each batch writes beside its leaves, not leaves themselves: the batch proof compares
# the values it wrote to those read back, and a verify record keeps their sums, for each one.
DERIVED_TABLES: tuple[str, ...] = tuple(kind.name for kind in RECORD_KINDS if kind.derived)
# The one derived table whose rows carry no batch_id: a batch's are those ending past the
# tree it extended (the subtrees its leaves completed).
SUBTREES_TABLE = "log_subtrees"
# Every table the append-only triggers guard: all of them.
APPEND_ONLY_TABLES: tuple[str, ...] = tuple(kind.name for kind in RECORD_KINDS)


class RecordKindError(TypeError):
    """A declaration disagrees with its table."""


def _problems(kind: RecordKind, by_table: Mapping[str, RecordKind]) -> list[str]:
    table, found = kind.table, []
    primary = tuple(column.name for column in table.primary_key.columns)
    if set(primary) != set(kind.key):
        found.append(f"key {kind.key} is not the primary key {primary}")
    if kind.ledgered and not {"seq", "batch_id"} <= set(table.c.keys()):
        found.append("a ledgered table needs seq and batch_id columns")
    if kind.ledgered and kind.derived is not None:
        found.append("a ledgered table is not derived: leave `derived` unset")
    if not kind.ledgered and kind.derived is None:
        found.append("not ledgered: say derived=True (each batch writes rows of it: the "
                     "batch proof and verify records must cover it, docs/design.md) or "
                     "derived=False (only another command writes it)")
    if kind.derived and "batch_id" not in table.c and kind.name != "log_subtrees":
        found.append("a derived table needs a batch_id column naming the batch that wrote "
                     "each row (the batch proof reads a batch's rows back by it)")
    for column in kind.late_columns:
        if column not in table.c or not table.c[column].nullable:
            found.append(f"late column {column} is not a nullable column")
    if kind.content_ids is not None and (
            len(kind.key) != 1 or not isinstance(table.c[kind.key[0]].type, type(Sha256))):
        found.append("a content-addressed key is one sha256 column")
    if kind.sights is not None:
        sighted = by_table.get(kind.sights)
        if sighted is None or len(sighted.key) != 1 or sighted.key[0] not in table.c:
            found.append(f"it sights {kind.sights}, whose one-column key it has no column of")
    if kind.part_of is not None:
        parent = by_table.get(kind.part_of)
        if parent is None or kind.key[:len(parent.key)] != parent.key:
            found.append(f"its key does not start with {kind.part_of}'s key")
    return found


def check_record_kinds(kinds: tuple[RecordKind, ...] = RECORD_KINDS,
                       tables: MetaData = metadata) -> None:
    by_table = {kind.name: kind for kind in kinds}
    undeclared = set(tables.tables) - set(by_table)
    problems = [f"table {name}: not declared in RECORD_KINDS" for name in sorted(undeclared)]
    problems += [f"{kind.name}: {p}" for kind in kinds for p in _problems(kind, by_table)]
    if problems:
        raise RecordKindError("; ".join(problems))


check_record_kinds()
