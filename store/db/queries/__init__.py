"""The read/query layer: every SELECT the API and the CLI run is written in this package.

Each public function takes a SQLAlchemy `Connection` first and returns plain records, so
callers (GraphQL resolvers through `AuditStore.run`, the CLI, benchmarks) never write SQL.
Lists are keyset-paginated in an `Order` (append order by `seq`, the row's ledger position,
by default), forwards (first/after) or backwards (last/before). Every read takes `as_of`, a
recorded tree size: the store as it was then. One module per concept: errors, records,
filters and ranges, keys, orders, cursors, pages, sightings, as_of, facets; `listings` is
the one generic list, count and get-by-key (RecordListing), `listing_declarations` declares
each listed record kind once with it (LISTINGS); one module per record kind holds its
facets.
"""

from store.db.queries.as_of import Snapshot, snapshot_at
from store.db.queries.constructions import (
    TurnConstruction,
    TurnLine,
    assessment_turns,
    count_residual_turns,
    list_residual_turns,
    turn_constructions,
)
from store.db.queries.errors import (
    CursorError,
    LimitExceeded,
    PageSizeError,
    PageSizeLimit,
    QueryError,
    QueryTimeout,
)
from store.db.queries.filters import (
    MAX_IDS,
    AssessmentFilter,
    ResidualFilter,
    SurfaceFilter,
    TurnFilter,
)
from store.db.queries.keys import MAX_KEY
from store.db.queries.ledger import (
    consistency_proof,
    inclusion_proof,
    inclusion_proof_at,
    ledger_status,
    log_entries,
)
from store.db.queries.listing_declarations import (
    LISTINGS,
    assessment_by_id,
    count_assessments,
    count_batches,
    count_residuals,
    count_surfaces,
    count_turns,
    list_assessments,
    list_batches,
    list_residuals,
    list_surfaces,
    list_turns,
    residual_by_id,
    residual_facets,
    surface_by_id,
    surface_facets,
    turn_by_key,
    turn_facets,
)
from store.db.queries.listings import Joined, RecordListing
from store.db.queries.occurrences import assessment_residuals, list_occurrences
from store.db.queries.orders import Order
from store.db.queries.pages import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    decode_cursor,
    encode_cursor,
    page_size,
)
from store.db.queries.ranges import BatchRange, parse_ingest_time
from store.db.queries.records import (
    Batch,
    ConsistencyProof,
    FacetCount,
    InclusionProof,
    Journal,
    JournalSummary,
    LedgerStatus,
    Occurrence,
    Page,
    ProposalCandidate,
    ResidualFacets,
    SeqT,
    StoredAssessment,
    StoredResidual,
    StoredSurface,
    StoredTurn,
    SurfaceFacets,
    SurfaceOccurrence,
    TurnFacets,
    TurnFields,
)
from store.db.queries.row_records import RowRecord, flat_record
from store.db.queries.surfaces import list_surface_occurrences

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "LISTINGS",
    "MAX_IDS",
    "MAX_KEY",
    "MAX_PAGE_SIZE",
    "AssessmentFilter",
    "Batch",
    "BatchRange",
    "ConsistencyProof",
    "CursorError",
    "FacetCount",
    "InclusionProof",
    "Joined",
    "Journal",
    "JournalSummary",
    "LedgerStatus",
    "LimitExceeded",
    "Occurrence",
    "Order",
    "Page",
    "PageSizeError",
    "PageSizeLimit",
    "ProposalCandidate",
    "QueryError",
    "QueryTimeout",
    "RecordListing",
    "ResidualFacets",
    "ResidualFilter",
    "RowRecord",
    "SeqT",
    "Snapshot",
    "StoredAssessment",
    "StoredResidual",
    "StoredSurface",
    "StoredTurn",
    "SurfaceFacets",
    "SurfaceFilter",
    "SurfaceOccurrence",
    "TurnConstruction",
    "TurnFacets",
    "TurnFields",
    "TurnFilter",
    "TurnLine",
    "assessment_by_id",
    "assessment_residuals",
    "assessment_turns",
    "consistency_proof",
    "count_assessments",
    "count_batches",
    "count_residual_turns",
    "count_residuals",
    "count_surfaces",
    "count_turns",
    "decode_cursor",
    "encode_cursor",
    "flat_record",
    "inclusion_proof",
    "inclusion_proof_at",
    "ledger_status",
    "list_assessments",
    "list_batches",
    "list_occurrences",
    "list_residual_turns",
    "list_residuals",
    "list_surface_occurrences",
    "list_surfaces",
    "list_turns",
    "log_entries",
    "page_size",
    "parse_ingest_time",
    "residual_by_id",
    "residual_facets",
    "snapshot_at",
    "surface_by_id",
    "surface_facets",
    "turn_by_key",
    "turn_constructions",
    "turn_facets",
]
