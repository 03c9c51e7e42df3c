"""The read/query layer: every SELECT the API and the CLI run is written in this package.

Each public function takes a SQLAlchemy `Connection` first and returns plain records, so
callers (GraphQL resolvers through `AuditStore.run`, the CLI, benchmarks) never write SQL.
Lists are keyset-paginated in an `Order` (append order by `seq`, the row's ledger position,
by default), forwards (first/after) or backwards (last/before). Every read takes `as_of`, a
recorded tree size: the store as it was then. One module per concept: errors, records,
filters and ranges, keys, orders, cursors, pages, sightings, as_of, facets, and one per
record kind.
"""

from store.db.queries.as_of import Snapshot, snapshot_at
from store.db.queries.assessments import (
    assessment_by_id,
    count_assessments,
    list_assessments,
)
from store.db.queries.batches import count_batches, list_batches
from store.db.queries.errors import CursorError, PageSizeError, QueryError, QueryTimeout
from store.db.queries.filters import AssessmentFilter, ResidualFilter, SurfaceFilter, TurnFilter
from store.db.queries.keys import MAX_KEY
from store.db.queries.ledger import (
    consistency_proof,
    inclusion_proof,
    inclusion_proof_at,
    ledger_status,
    log_entries,
)
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
    LedgerStatus,
    Occurrence,
    Page,
    ResidualFacets,
    SeqT,
    StoredAssessment,
    StoredResidual,
    StoredSurface,
    StoredTurn,
    SurfaceFacets,
    SurfaceOccurrence,
    TurnFacets,
)
from store.db.queries.residuals import (
    count_residuals,
    list_residuals,
    residual_by_id,
    residual_facets,
)
from store.db.queries.surfaces import (
    count_surfaces,
    list_surface_occurrences,
    list_surfaces,
    surface_by_id,
    surface_facets,
)
from store.db.queries.turns import count_turns, list_turns, turn_by_key, turn_facets

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_KEY",
    "MAX_PAGE_SIZE",
    "AssessmentFilter",
    "Batch",
    "BatchRange",
    "ConsistencyProof",
    "CursorError",
    "FacetCount",
    "InclusionProof",
    "LedgerStatus",
    "Occurrence",
    "Order",
    "Page",
    "PageSizeError",
    "QueryError",
    "QueryTimeout",
    "ResidualFacets",
    "ResidualFilter",
    "SeqT",
    "Snapshot",
    "StoredAssessment",
    "StoredResidual",
    "StoredSurface",
    "StoredTurn",
    "SurfaceFacets",
    "SurfaceFilter",
    "SurfaceOccurrence",
    "TurnFacets",
    "TurnFilter",
    "assessment_by_id",
    "assessment_residuals",
    "consistency_proof",
    "count_assessments",
    "count_batches",
    "count_residuals",
    "count_surfaces",
    "count_turns",
    "decode_cursor",
    "encode_cursor",
    "inclusion_proof",
    "inclusion_proof_at",
    "ledger_status",
    "list_assessments",
    "list_batches",
    "list_occurrences",
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
    "turn_facets",
]
