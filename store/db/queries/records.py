"""The plain records the query layer returns (no SQL here); a flat record has its table's
columns, checked when the module loads."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy import Table

from store.db.schema.tables import (
    ingest_batches,
    surface_occurrences,
    surface_records,
    turn_fields,
    turns,
)
from store.model.records import ContractAssessment, ContractResidual
from store.model.surface_records import CheckedFile, SurfaceForm, SurfaceVerification
from store.model.taxonomy import (
    family_of,
)
from store.model.teaching_surface import GroundingSource

T = TypeVar("T")


class Sequenced(Protocol):
    @property
    def seq(self) -> int: ...


SeqT = TypeVar("SeqT", bound=Sequenced)


@dataclass(frozen=True, slots=True)
class Batch:
    batch_id: int
    seq: int
    source: str
    input_sha256: str
    record_type: str
    lines: int
    new_rows: int
    present_rows: int
    rejected_lines: int
    ingested_at: str
    store_version: str


@dataclass(frozen=True, slots=True)
class StoredResidual:
    seq: int
    batch_id: int
    residual: ContractResidual
    occurrence_count: int  # its sightings by the list's head, read in the same statement


@dataclass(frozen=True, slots=True)
class StoredAssessment:
    assessment_id: str
    seq: int
    problem_text: str | None
    source_ref: str | None
    assessment: ContractAssessment
    batch: Batch

    @property
    def family_id(self) -> str | None:
        return family_of(self.assessment.candidate_organ)


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One sighting of a residual: which assessment (in which batch) produced it."""

    seq: int
    residual_id: str
    ordinal: int
    assessment: StoredAssessment


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    cursors: list[str]
    has_next_page: bool  # rows follow this page's last (in the list, whatever the cursors)
    has_previous_page: bool = False  # rows precede its first

    @property
    def start_cursor(self) -> str | None:
        return self.cursors[0] if self.cursors else None

    @property
    def end_cursor(self) -> str | None:
        return self.cursors[-1] if self.cursors else None


@dataclass(frozen=True, slots=True)
class StoredSurface:
    """A surface_records row: what CORE said, its provenance and the re-derivation outcome."""

    surface_id: str
    seq: int
    batch_id: int
    grounding_source: GroundingSource
    surface: str | None
    subject: str | None
    intent: str | None
    corpus_id: str | None
    chain_id: str | None
    chain_provenance: str | None
    pack_id: str | None
    pack_version: str | None
    connective: str | None
    object: str | None
    subject_domains: tuple[str, ...] | None
    object_domains: tuple[str, ...] | None
    verification: SurfaceVerification
    expected_surface: str | None
    occurrence_count: int  # the turns that emitted it by the list's head (same statement)
    # Revision 0005 (None for records stored before it):
    surface_form: SurfaceForm | None = None
    hops: int | None = None
    hop_chain_ids: tuple[str, ...] = ()
    candidate_chain_ids: tuple[str, ...] = ()
    surface_prefix: str | None = None
    checked_against: tuple[CheckedFile, ...] = ()


@dataclass(frozen=True, slots=True)
class SurfaceOccurrence:
    """One sighting of a surface: the turn that emitted it, and the batch that recorded it."""

    occurrence_id: str
    seq: int
    surface_id: str
    session_id: str | None
    turn_id: str | None
    prompt: str | None
    batch: Batch
    turn_key: str | None = None  # the stored turn, for sightings ingested as turns


@dataclass(frozen=True, slots=True)
class FacetCount:
    value: str | None  # as CORE serializes it: lower case; None for a null column
    count: int  # distinct records (residuals or surfaces)
    occurrences: int  # sightings of those records


@dataclass(frozen=True, slots=True)
class ResidualFacets:
    total: int
    occurrences: int
    by_kind: list[FacetCount]
    by_axis: list[FacetCount]
    by_organ: list[FacetCount]
    by_family: list[FacetCount]
    by_code: list[FacetCount]


@dataclass(frozen=True, slots=True)
class SurfaceFacets:
    total: int
    occurrences: int
    by_grounding_source: list[FacetCount]
    by_corpus: list[FacetCount]
    by_intent: list[FacetCount]
    by_verification: list[FacetCount]


@dataclass(frozen=True, slots=True)
class LedgerStatus:
    tree_size: int
    root_hash: str  # hex
    origin: str | None  # fixed by the store's first checkpoint


@dataclass(frozen=True, slots=True)
class InclusionProof:
    """RFC 9162 section 2.1.3, with the entry itself: as `core-audit prove` prints it."""

    leaf_index: int
    tree_size: int
    entry: str
    leaf_hash: str
    inclusion_path: list[str]
    root_hash: str


@dataclass(frozen=True, slots=True)
class ConsistencyProof:
    """RFC 9162 section 2.1.4: as `core-audit prove --consistency` prints it."""

    first: int
    second: int
    first_root: str
    second_root: str
    consistency_path: list[str]



@dataclass(frozen=True, slots=True)
class ProposalCandidate:
    """One of a journal turn's proposal_candidates, as CORE wrote it."""

    candidate_id: str
    source_kind: str


@dataclass(frozen=True, slots=True)
class TurnFields:
    """A turn_fields row (revision 0011): what the turn's line says beyond the turns row;
    every field None when the row is missing (verify names it)."""

    turn_key: str | None
    batch_id: int | None
    turn_seq: int | None
    core_time: int | None
    journal_id: str | None
    turn_id: int | None
    articulation_surface: str | None
    walk_surface: str | None
    verdict_identity_detail: str | None
    verdict_safety_detail: str | None
    verdict_ethics_detail: str | None
    proposal_candidates: tuple[ProposalCandidate, ...] | None
    turn_cost_ms: int | None
    checkpoint_emitted: bool | None


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """A turns row: one CORE turn as recorded, with the surface record it emitted."""

    turn_key: str
    seq: int
    batch_id: int
    kind: str
    turn_id: int | None
    prompt: str | None
    timestamp: str | None
    grounding_source: GroundingSource
    epistemic_state: str | None
    normative_clearance: str | None
    normative_detail: str | None
    verdict_identity: str | None
    verdict_safety: str | None
    verdict_ethics: str | None
    refusal_emitted: bool | None
    hedge_injected: bool | None
    trace_hash: str | None
    trace_integrity: str | None
    journal_digest: str | None
    line: str
    surface: StoredSurface
    fields: TurnFields


@dataclass(frozen=True, slots=True)
class Journal:
    """A stored Workbench journal: named by its turn 1's turn_key (what finding it reads;
    its summary is read apart, when asked for: it counts every turn of the journal)."""

    journal_id: str
    seq: int  # its turn 1's
    started_at: str | None  # the timestamp of turn 1, as CORE wrote it


@dataclass(frozen=True, slots=True)
class JournalSummary:
    """A journal's turns: how many, its last one's time and the batches that stored them (a
    grown file stored again adds a batch)."""

    turn_count: int
    updated_at: str | None  # the timestamp of its last turn, as CORE wrote it
    batch_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TurnFacets:
    total: int
    by_grounding_source: list[FacetCount]
    by_verification: list[FacetCount]
    by_epistemic_state: list[FacetCount]
    by_normative_clearance: list[FacetCount]
    by_corpus: list[FacetCount]


# (record, its table, fields it adds, columns it leaves out): a column added to a table must
# be read into its record (or left out here, on purpose), or the module does not load.
FLAT_RECORDS: tuple[tuple[type[Any], Table, frozenset[str], frozenset[str]], ...] = (
    (Batch, ingest_batches, frozenset(), frozenset()),
    (StoredSurface, surface_records, frozenset({"occurrence_count"}), frozenset()),
    (SurfaceOccurrence, surface_occurrences, frozenset({"batch"}), frozenset({"batch_id"})),
    (StoredTurn, turns, frozenset({"surface", "fields"}),
     frozenset({"surface_id", "line_number"})),
    (TurnFields, turn_fields, frozenset(), frozenset()),
)


def check_flat_records(
    records: tuple[tuple[type[Any], Table, frozenset[str], frozenset[str]], ...] = FLAT_RECORDS,
) -> None:
    problems = []
    for record, table, added, left_out in records:
        expected = (set(table.c.keys()) - left_out) | added
        found = {f.name for f in fields(record)}
        if found != expected:
            problems.append(f"{record.__name__}: missing {sorted(expected - found)}, "
                            f"not in {table.name} {sorted(found - expected)}")
    if problems:
        raise TypeError("; ".join(problems))


check_flat_records()
