"""core-audit: an append-only audit store for CORE's diagnostic records."""

__version__ = "0.1.0"
