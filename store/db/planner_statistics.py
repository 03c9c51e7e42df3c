"""PostgreSQL's planner statistics of a store's tables, gathered by the command that wrote the
rows instead of a minute or more later by autovacuum.

A table PostgreSQL has never analyzed, or one that has grown well past the size its
statistics describe, may have its statements planned as scans: a fresh schema planned the
Trace route's page as one (176 ms for the statement, 0.37 ms once analyzed). `core-audit
copy` analyzes every table of the schema once it has committed; an ingest analyzes the
tables its batch left unanalyzed or more than doubled. Statistics are not the store's rows:
ANALYZE writes none of them, and a failure here (a lock wait cut short, a role that does not
own the tables: PostgreSQL's warning, no statistics) leaves them to autovacuum and the
command's write as it committed. No-op on other backends.
"""

from __future__ import annotations

from sqlalchemy import Engine, TextClause, text
from sqlalchemy.exc import DBAPIError

# The schema's tables whose statistics are missing (reltuples -1: never analyzed or
# vacuumed) or describe less than half their pages now.
_GROWN_TABLES = text(
    "SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace "
    "WHERE n.nspname = current_schema() AND c.relkind = 'r' AND (c.reltuples < 0 "
    "OR pg_relation_size(c.oid) > 2 * c.relpages::bigint * current_setting('block_size')::int) "
    "ORDER BY c.relname")
_EVERY_TABLE = text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                    "ORDER BY tablename")


def analyze_postgres(engine: Engine) -> None:
    """Every table of the store's schema analyzed (after a copy)."""
    _analyze(engine, _EVERY_TABLE)


def analyze_grown_tables(engine: Engine) -> None:
    """The tables of the store's schema without statistics, or grown to more than twice the
    pages their statistics saw, analyzed (after a batch committed). A batch much smaller than
    the store analyzes nothing: autovacuum keeps up with those."""
    _analyze(engine, _GROWN_TABLES)


def _analyze(engine: Engine, tables_statement: TextClause) -> None:
    if engine.dialect.name != "postgresql":
        return
    quote = engine.dialect.identifier_preparer.quote
    try:
        with engine.begin() as connection:
            tables = connection.execute(tables_statement).scalars().all()
            if tables:
                connection.exec_driver_sql("ANALYZE " + ", ".join(quote(t) for t in tables))
    except DBAPIError:
        pass  # statistics only: autovacuum gathers them later
