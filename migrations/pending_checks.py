"""Deferred foreign key checks run before a revision's DDL, for revisions to call. Frozen:
revisions must not change meaning."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from alembic import op


@contextmanager
def pending_checks_first() -> Iterator[bool]:
    """Around DDL on tables (0014, 0017, 0018: indexes). PostgreSQL refuses to index a table
    with deferred foreign key checks pending (rows an earlier revision wrote in this same
    transaction): run those checks now, then defer again (every foreign key of the store is
    DEFERRABLE INITIALLY DEFERRED). Yields whether the store is PostgreSQL's."""
    postgresql = bool(op.get_bind().dialect.name == "postgresql")
    if postgresql:
        op.execute("SET CONSTRAINTS ALL IMMEDIATE")
    yield postgresql
    if postgresql:
        op.execute("SET CONSTRAINTS ALL DEFERRED")
