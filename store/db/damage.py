"""A store that cannot be read as stored: a malformed page, text that is not UTF-8, a log row
missing. What the server answers 503 for (console pages, downloads, tiles, GraphQL) and a
command says in one line, each naming `core-audit verify`, with no traceback anywhere: the
store is damaged, not the code."""

from __future__ import annotations

from sqlalchemy.exc import DatabaseError

from store.db.log.stored_log import LogError
from store.errors import one_line

# The driver's errors (SQLAlchemy wraps them as DatabaseError and its OperationalError), the
# SQLite driver's decoding of a text column, and the log's own rows missing or unreadable.
DAMAGE: tuple[type[Exception], ...] = (DatabaseError, UnicodeDecodeError, LogError)


def damage_said(exc: BaseException) -> str:
    """One line: what could not be read, and what to run."""
    reason = getattr(exc, "orig", None) or exc
    if isinstance(reason, UnicodeDecodeError):
        reason = f"text that is not UTF-8 ({reason.reason} at byte {reason.start})"
    return one_line(f"the store cannot be read: {reason}; run `core-audit verify` on it")[:500]
