"""Every error core-audit raises for a user to act on descends from `CoreAuditError` (the
sigstore-python way): a caller catches one class, and `diagnostics()` gives the one line fit to
show (the CLI prints it; no traceback reaches a user).

    CoreAuditError
    ├── StoreError          the store itself: missing, behind head, unreachable, damaged
    ├── QueryError          a read the store cannot answer as asked (cursor, page size, time)
    ├── BatchRejected       an input with bad lines: nothing of it was written
    ├── InputError          a line, file, pack, corpus or filter that is not what it must be
    └── VerificationError   something that does not verify, saying expected vs got
        ├── CheckpointError     a checkpoint, note or key (SignatureError: not signed so)
        └── ProofError          an inclusion or consistency proof

Errors that are a defect of this code's own declarations (a record kind that disagrees with
its table, found at import) stay `TypeError`s: they are for a developer, not a user.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the summary's type only: errors sit below every other module
    from store.db.write.batch_summary import BatchSummary


# scheme://user:password@host: the password, wherever a URL is quoted (drivers quote them).
_URL_PASSWORD = re.compile(r"([A-Za-z][\w+.-]*://[^\s:/@]*:)[^\s@/]*@")


def without_passwords(text: str) -> str:
    """`text` with the password of every URL in it replaced by ***: a password is never
    printed, whichever layer (driver, SQLAlchemy, alembic) wrote the message."""
    return _URL_PASSWORD.sub(r"\1***@", text)


def one_line(text: str) -> str:
    return without_passwords(" ".join(text.split()))


class CoreAuditError(Exception):
    """The root of core-audit's errors."""

    def __str__(self) -> str:
        return without_passwords(super().__str__())

    def diagnostics(self) -> str:
        """What went wrong and where, in one line for the person who ran the command."""
        return one_line(str(self)) or type(self).__name__


class StoreError(CoreAuditError):
    """A problem with the store itself (missing, behind head, unreachable)."""


# The ValueError bases below keep `except ValueError` callers of earlier versions working.
class QueryError(CoreAuditError, ValueError):
    """A query the store cannot answer as asked: bad cursor, page size, order or as-of size."""


class InputError(CoreAuditError, ValueError):
    """An input that is not what it must be: a record line, pack, corpus, filter or document."""


class BatchRejected(CoreAuditError):
    """An input with bad lines: nothing of it was written; `summary` lists every bad line."""

    def __init__(self, summary: BatchSummary) -> None:
        super().__init__(f"{summary.source}: {summary.failure_count} bad line(s), nothing written")
        self.summary = summary


class VerificationError(CoreAuditError):
    """Something that does not verify; the message says what was expected and what was found."""


class CheckpointError(VerificationError, ValueError):
    """The text is not a well-formed checkpoint, note or key."""


class SignatureError(CheckpointError):
    """The note carries no valid signature by the expected key."""


class ProofError(VerificationError, ValueError):
    """An inclusion or consistency proof that is malformed or does not prove its claim."""
