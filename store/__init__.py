"""core-audit: an append-only audit store for CORE's diagnostic records.

The public Python API is `__all__`: the store, its records' parsers, the offline verifiers of
its transparency log, and the errors (all under `CoreAuditError`). Everything else is internal:
reachable through its module, documented in docs/design.md, and free to change.
"""

__version__ = "0.1.0"  # before the imports below: store.db.write.writer reads it

from store.db.audit_store import AuditStore
from store.db.verify.store_checks import VerifyReport
from store.db.write.writer import BatchSummary
from store.errors import (
    BatchRejected,
    CheckpointError,
    CoreAuditError,
    InputError,
    ProofError,
    QueryError,
    SignatureError,
    StoreError,
    VerificationError,
)
from store.model.checkpoint import Checkpoint, open_checkpoint
from store.model.merkle import verify_consistency, verify_inclusion
from store.model.parsing import parse_frame
from store.model.projection import project_residuals
from store.model.proofs import check_proof
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
    "CheckpointError",
    "CoreAuditError",
    "InputError",
    "ProofError",
    "QueryError",
    "SignatureError",
    "StoreError",
    "VerificationError",
    "VerifyReport",
    "__version__",
    "check_proof",
    "check_surface",
    "load_core_registry",
    "load_teaching_registry",
    "open_checkpoint",
    "parse_frame",
    "parse_surface_record",
    "parse_turn_line",
    "project_residuals",
    "verify_consistency",
    "verify_inclusion",
]
