"""Every error core-audit raises for a user to act on descends from `CoreAuditError`: a caller
catches one class, and `diagnostics()` gives the message fit to show (no traceback)."""

from __future__ import annotations


class CoreAuditError(Exception):
    """The root of core-audit's errors."""

    def diagnostics(self) -> str:
        """What went wrong and where, in words for the person who ran the command."""
        return str(self)


class StoreError(CoreAuditError):
    """A problem with the store itself (missing, behind head, unreachable)."""
