"""Test stores on both backends: SQLite files and PostgreSQL schemas (one store per schema)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

PG_ENV = "CORE_AUDIT_TEST_PG"
PG_SKIP_REASON = (
    f"set {PG_ENV}=postgresql+psycopg://user@host:port/db to run the PostgreSQL variants"
)
BACKENDS = ("sqlite", pytest.param("postgresql", marks=pytest.mark.postgres))

# The bundled examples, one batch each, in this order: residuals, more residuals, surfaces.
EXAMPLE_FILES = tuple(
    Path(__file__).resolve().parent.parent / "examples" / name
    for name in ("adr_0225_frames.jsonl", "core_frames_families.jsonl", "adr_0052_surfaces.jsonl")
)


def pg_server_url() -> str:
    """The PostgreSQL server the tests may use; skips the test when none is configured."""
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(PG_SKIP_REASON)
    return url


def schema_url(server_url: str, schema: str) -> str:
    """`server_url` with every connection's search_path set to `schema` (a store per schema)."""
    url = make_url(server_url).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


@contextmanager
def pg_schema(server_url: str | None = None) -> Iterator[str]:
    """A new, empty schema named from a uuid; yields its store URL; drops it with CASCADE."""
    server = server_url or pg_server_url()
    schema = f"t_{uuid.uuid4().hex}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        yield schema_url(server, schema)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def libpq_url(url: str) -> str:
    """A PostgreSQL store URL as libpq takes it (for raw psycopg connections)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def raw_query(url: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Rows from a raw driver connection, outside the store's code (`?` placeholders)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        import sqlite3

        connection = sqlite3.connect(f"file:{parsed.database}?mode=ro", uri=True)
        try:
            return connection.execute(sql, params).fetchall()
        finally:
            connection.close()
    import psycopg

    with psycopg.connect(libpq_url(url)) as connection:
        return [tuple(row) for row in connection.execute(sql.replace("?", "%s"), params)]
