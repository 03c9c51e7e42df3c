"""Errors a user can act on: the API lets exactly these through unmasked."""

from __future__ import annotations


class QueryError(ValueError):
    """A request the query layer refuses, with a message fit to show the caller."""


class CursorError(QueryError):
    """An `after` cursor this API did not hand out."""


class PageSizeError(QueryError):
    """`first` outside 0..MAX_PAGE_SIZE."""


class QueryTimeout(QueryError):
    """A query ran past the request's time limit and was aborted."""
