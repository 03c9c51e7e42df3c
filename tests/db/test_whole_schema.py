"""`verify` compares the whole schema with the head revision's (issue 21): each change below
was made out of band (stdlib sqlite3, raw psycopg) and is named, on the backends it applies to."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from backends import EXAMPLE_FILES, libpq_url, pg_schema, pg_server_url, schema_url
from cli_runs import cli
from sqlalchemy.engine import make_url
from store_support import raw_connect

JOURNAL = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"
FK = "fk_turns_surface_id_surface_records"


def _problems(db: str | Path) -> list[str]:
    result = cli("verify", "--db", db)
    assert result.exit_code == 1, result.stdout
    assert "Traceback" not in result.stderr
    return [line.removeprefix("NOT intact: first problem at ").removeprefix("  also ")
            for line in result.stderr.splitlines()]


@pytest.mark.parametrize(("statements", "named"), [
    (["ALTER TABLE turns ADD COLUMN note TEXT"],
     "turns: column turns.note is not the schema's: TEXT"),
    (["CREATE INDEX evil ON turns (prompt)"],
     "turns: index evil is not the schema's: CREATE INDEX evil ON turns (prompt)"),
    (["CREATE VIEW visible_turns AS SELECT * FROM turns WHERE turn_id <> 3"],
     "visible_turns: view visible_turns is not the schema's"),
    (["CREATE TRIGGER evil BEFORE INSERT ON turns BEGIN SELECT RAISE(IGNORE); END"],
     "turns: trigger evil is not one of the store's"),
    (["CREATE TABLE shadow (x)"], "shadow: table shadow is not the schema's: CREATE TABLE"),
])
def test_sqlite_a_schema_change_is_named(examples_store: Path, statements: list[str],
                                         named: str) -> None:
    connection = raw_connect(examples_store)
    for sql in statements:
        connection.execute(sql)
    connection.close()
    problems = _problems(examples_store)
    assert any(p.startswith(named) for p in problems), problems


@pytest.fixture
def pg_store() -> Iterator[tuple[str, str]]:
    """A PostgreSQL store holding the examples and a journal: (its URL, its schema)."""
    with pg_schema() as url:
        for path in (*EXAMPLE_FILES, JOURNAL):
            assert cli("ingest", "--db", url, path).exit_code == 0
        schema = make_url(url).query["options"].removeprefix("-csearch_path=")
        yield url, str(schema)


PG_CASES = [
    (["CREATE RULE evil AS ON INSERT TO turns DO INSTEAD NOTHING"],
     "turns: rule evil on turns is not the schema's"),
    (["ALTER TABLE turns ENABLE ROW LEVEL SECURITY",
      "CREATE POLICY evil ON turns FOR SELECT TO PUBLIC USING (turn_id <> 3)"],
     "turns: policy evil on turns is not the schema's"),
    (["ALTER TABLE turns ENABLE ROW LEVEL SECURITY"],
     "turns: table turns is logged, row-level security enabled, not logged"),
    # (turn_constructions, a logged table, refers to turns: PostgreSQL keeps turns logged)
    (["ALTER TABLE turn_assessments SET UNLOGGED"],
     "turn_assessments: table turn_assessments is UNLOGGED, not logged"),
    ([f"ALTER TABLE turns DROP CONSTRAINT {FK}"], f"turns: constraint {FK} on turns is missing"),
    (["ALTER TABLE turns ALTER COLUMN kind DROP NOT NULL"],
     "turns: column turns.kind is text, not text NOT NULL"),
    (["ALTER TABLE turns ALTER COLUMN prompt SET DEFAULT 'x'"],
     "turns: column turns.prompt is text DEFAULT 'x'::text, not text"),
    (["ALTER TABLE turns ADD COLUMN note text"],
     "turns: column turns.note is not the schema's: text"),
    (["ALTER FUNCTION core_audit_reject_change() SECURITY DEFINER"],
     "schema: function core_audit_reject_change() is plpgsql f volatility v SECURITY DEFINER AS"),
    (["ALTER FUNCTION core_audit_reject_change() SET search_path = public"],
     "schema: function core_audit_reject_change() is plpgsql f volatility v "
     "SET {search_path=public} AS"),
    (["CREATE VIEW visible_turns AS SELECT * FROM turns"],
     "visible_turns: view visible_turns is not the schema's"),
]


@pytest.mark.postgres
@pytest.mark.parametrize(("statements", "named"), PG_CASES)
def test_postgres_a_schema_change_is_named(pg_store: tuple[str, str], statements: list[str],
                                           named: str) -> None:
    url, _ = pg_store
    with psycopg.connect(libpq_url(url), autocommit=True) as connection:
        for sql in statements:
            connection.execute(sql)
    problems = _problems(url)
    assert any(p.startswith(named) for p in problems), problems


@pytest.mark.postgres
def test_postgres_a_same_named_function_on_the_search_path_is_named(
        pg_store: tuple[str, str]) -> None:
    _, schema = pg_store
    other = f"t_{uuid.uuid4().hex}"
    server = pg_server_url()
    with psycopg.connect(libpq_url(server), autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA "{other}"')
        try:
            connection.execute(f'CREATE FUNCTION "{other}".core_audit_reject_change() '
                               "RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$")
            both = schema_url(server, f"{schema},{other}")
            problems = _problems(both)
        finally:
            connection.execute(f'DROP SCHEMA "{other}" CASCADE')
    assert (f"schema: function core_audit_reject_change also exists in schema {other}: "
            "on the search path it can shadow the store's own") in problems, problems
