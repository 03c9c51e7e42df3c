"""core-audit: an append-only audit store for CORE's diagnostic records.

The public Python API is `__all__`: the store, its records' parsers, the offline verifiers of
its transparency log, and the errors (all under `CoreAuditError`). Everything else is internal:
reachable through its module, documented in docs/design.md, and free to change.
"""

__version__ = "0.1.0"

import importlib
from typing import TYPE_CHECKING, Any

# Each public name's module, imported on first use (PEP 562): `import store` (and so every CLI
# command) loads no database, SQLAlchemy or strawberry until a name that needs them is used.
_EXPORTS = {
    "AuditStore": "store.db.audit_store",
    "VerifyReport": "store.db.verify.store_checks",
    "BatchSummary": "store.db.write.writer",
    "BatchRejected": "store.errors",
    "CheckpointError": "store.errors",
    "CoreAuditError": "store.errors",
    "InputError": "store.errors",
    "ProofError": "store.errors",
    "QueryError": "store.errors",
    "SignatureError": "store.errors",
    "StoreError": "store.errors",
    "VerificationError": "store.errors",
    "Checkpoint": "store.model.checkpoint",
    "open_checkpoint": "store.model.checkpoint",
    "verify_consistency": "store.model.merkle",
    "verify_inclusion": "store.model.merkle",
    "parse_frame": "store.model.parsing",
    "project_residuals": "store.model.projection",
    "check_proof": "store.model.proofs",
    "check_surface": "store.model.surface_records",
    "parse_surface_record": "store.model.surface_records",
    "load_core_registry": "store.model.teaching_registry",
    "load_teaching_registry": "store.model.teaching_registry",
    "parse_turn_line": "store.model.turns",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'store' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:

    from store.db.audit_store import AuditStore
    from store.db.verify.store_checks import VerifyReport
    from store.db.write.batch_summary import BatchSummary
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
