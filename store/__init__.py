"""core-audit: an append-only audit store for CORE's diagnostic records.

The public Python API; everything else is reachable through its module.
"""

__version__ = "0.1.0"  # before the imports below: store.db.write.writer reads it

from store.db.audit_store import AuditStore
from store.db.verify.store_checks import VerifyReport
from store.db.write.writer import BatchRejected, BatchSummary
from store.errors import StoreError
from store.model.checkpoint import Checkpoint
from store.model.parsing import parse_frame
from store.model.projection import project_residuals
from store.model.surface_records import check_surface, parse_surface_record
from store.model.teaching_registry import (
    load_core_registry,
    load_teaching_registry,
)
from store.model.turns import parse_turn_line

__all__ = [
    "AuditStore",
    "BatchRejected",
    "BatchSummary",
    "Checkpoint",
    "StoreError",
    "VerifyReport",
    "__version__",
    "check_surface",
    "load_core_registry",
    "load_teaching_registry",
    "parse_frame",
    "parse_surface_record",
    "parse_turn_line",
    "project_residuals",
]
