"""The read/query layer: every SELECT the API and the CLI run is written in this package.

Each public function takes a SQLAlchemy `Connection` first and returns plain records, so
callers (GraphQL resolvers through `Database.run`, the CLI, benchmarks) never write SQL.
Lists are keyset-paginated over `seq`, the row's ledger position, i.e. its append order.
One module per concept: errors, records, filters, pages, facets, and one per record kind.
"""

from store.db.queries.assessments import (
    assessment_by_id,
    count_assessments,
    list_assessments,
)
from store.db.queries.batches import count_batches, list_batches
from store.db.queries.errors import CursorError, PageSizeError, QueryError, QueryTimeout
from store.db.queries.filters import AssessmentFilter, ResidualFilter, SurfaceFilter, TurnFilter
from store.db.queries.ledger import (
    consistency_proof,
    inclusion_proof,
    inclusion_proof_at,
    ledger_status,
    log_entries,
)
from store.db.queries.occurrences import assessment_residuals, list_occurrences
from store.db.queries.pages import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    decode_cursor,
    encode_cursor,
    page_size,
)
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
    "MAX_PAGE_SIZE",
    "AssessmentFilter",
    "Batch",
    "ConsistencyProof",
    "CursorError",
    "FacetCount",
    "InclusionProof",
    "LedgerStatus",
    "Occurrence",
    "Page",
    "PageSizeError",
    "QueryError",
    "QueryTimeout",
    "ResidualFacets",
    "ResidualFilter",
    "SeqT",
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
    "residual_by_id",
    "residual_facets",
    "surface_by_id",
    "surface_facets",
    "turn_by_key",
    "turn_facets",
]
