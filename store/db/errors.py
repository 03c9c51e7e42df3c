"""Errors the store reports to its users, each with a message that says what to do."""

from __future__ import annotations


class StoreError(Exception):
    """A problem with the store itself (missing, behind head, unreachable)."""

