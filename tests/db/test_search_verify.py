"""`verify` holds the search texts and their indexes to the ledgered rows (revision 0013): a
document changed, dropped or added out of band is named, on SQLite and on PostgreSQL, with
one process and with two. The documents are the ADR-0225 examples' (seq 2: "Tom gained 3." /
"The action cue role is unbound.")."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from backends import EXAMPLE_FILES, libpq_url
from cli_runs import cli
from store_support import first_problem, refused_verify, triggers_bypassed


@pytest.fixture
def store(tmp_path: Path) -> Path:
    db = tmp_path / "audit.db"
    assert cli("ingest", EXAMPLE_FILES[0], "--db", db).exit_code == 0
    return db


def test_a_document_changed_with_its_index_is_named(store: Path) -> None:
    with triggers_bypassed(store) as connection:
        connection.execute("UPDATE residual_texts SET explanation = 'nothing to see' "
                           "WHERE record_seq = 2")
        # and the index made to agree, as a careful hand would
        connection.execute("INSERT INTO residual_texts_fts (residual_texts_fts) "
                           "VALUES ('rebuild')")
    result = refused_verify(store)
    assert first_problem(result.stderr) == (
        "seq 2: residual_texts record_seq 2: row differs from the text the record's stored "
        "rows give")


def test_a_document_dropped_is_named(store: Path) -> None:
    with triggers_bypassed(store) as connection:
        connection.execute("DELETE FROM residual_texts WHERE record_seq = 2")
        connection.execute("INSERT INTO residual_texts_fts (residual_texts_fts) "
                           "VALUES ('rebuild')")
    result = refused_verify(store)
    assert first_problem(result.stderr) == "seq 2: residual_texts record_seq 2: row is missing"


def test_an_index_that_finds_what_the_rows_do_not_say_is_named(store: Path) -> None:
    with triggers_bypassed(store) as connection:
        # Tokens planted under a stored document's rowid: its count of documents unchanged.
        connection.execute("INSERT INTO residual_texts_fts (rowid, problem_text, explanation) "
                           "VALUES (4, 'planted', 'planted')")
    result = refused_verify(store)
    assert "residual_texts_fts term 'planted': indexed otherwise than residual_texts's rows " \
           "give it" in result.stderr


@pytest.mark.postgres
def test_postgres_a_document_changed_is_named(pg_url: str) -> None:
    assert cli("ingest", "--db", pg_url, EXAMPLE_FILES[0]).exit_code == 0
    with psycopg.connect(libpq_url(pg_url), autocommit=True) as connection:
        connection.execute("ALTER TABLE residual_texts DISABLE TRIGGER USER")
        connection.execute("UPDATE residual_texts SET explanation = 'nothing to see' "
                           "WHERE record_seq = 2")
        connection.execute("ALTER TABLE residual_texts ENABLE TRIGGER USER")
    result = refused_verify(pg_url)
    assert first_problem(result.stderr) == (
        "seq 2: residual_texts record_seq 2: row differs from the text the record's stored "
        "rows give")
