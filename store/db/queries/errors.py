"""Errors a user can act on: the API lets exactly these (QueryError and its kinds) through
unmasked. QueryError itself is one of the package's errors (`store.errors`)."""

from __future__ import annotations

from store.errors import QueryError

__all__ = ["CursorError", "LimitExceeded", "PageSizeError", "PageSizeLimit", "QueryError",
           "QueryTimeout"]


class CursorError(QueryError):
    """An `after` cursor this API did not hand out."""


class PageSizeError(QueryError):
    """`first` or `last` outside 0..MAX_PAGE_SIZE, or both given."""


class LimitExceeded(QueryError):
    """A value past a documented cap (a page's size, an id list's length, a range of
    changes): the message names the cap."""


class PageSizeLimit(PageSizeError, LimitExceeded):
    """`first` or `last` above MAX_PAGE_SIZE."""


class QueryTimeout(QueryError):
    """A query ran past the request's time limit and was aborted."""
