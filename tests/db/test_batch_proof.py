"""The writer proves its batch before COMMIT (issue 21): an out-of-band trigger, rule or policy
that drops or hides rows makes `ingest` fail, naming the table, with nothing written."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from backends import libpq_url, pg_schema, pg_server_url
from cli_runs import cli
from sqlalchemy.engine import make_url
from store_support import raw_connect

REPO = Path(__file__).resolve().parents[2]
JOURNAL = REPO / "examples" / "workbench_turn_journal.jsonl"  # 6 turns, one journal
FRAMES = REPO / "examples" / "core_frames_families.jsonl"  # the store holds adr_0225's
SURFACES = REPO / "examples" / "adr_0052_surfaces.jsonl"

STATE = ("SELECT (SELECT count(*) FROM ingest_batches), (SELECT count(*) FROM turns), "
         "(SELECT count(*) FROM tree_heads), (SELECT max(tree_size) FROM tree_heads)")


def _state(connection: object) -> tuple[object, ...]:
    return tuple(connection.execute(STATE).fetchone())  # type: ignore[attr-defined]


def _refusal(result: object) -> str:
    assert result.exit_code == 1, result.stdout  # type: ignore[attr-defined]
    return result.stderr.strip()  # type: ignore[attr-defined]


@pytest.mark.parametrize(("table", "source"), [
    ("turns", JOURNAL), ("contract_residuals", FRAMES), ("residual_occurrences", FRAMES),
    ("surface_occurrences", SURFACES), ("ingest_batches", JOURNAL), ("tree_heads", JOURNAL),
    ("residual_tallies", FRAMES), ("sighting_counts", FRAMES), ("sighting_counts", SURFACES),
])
def test_sqlite_a_raise_ignore_trigger_fails_the_batch_naming_its_table(
        examples_store: Path, table: str, source: Path) -> None:
    connection = raw_connect(examples_store)
    before = _state(connection)
    connection.execute(f"CREATE TRIGGER evil BEFORE INSERT ON {table} "
                       "BEGIN SELECT RAISE(IGNORE); END")
    connection.close()

    message = _refusal(cli("ingest", "--db", examples_store, source))

    assert message.startswith(f"Error: {table}: the batch did not read back as written ("), message
    assert "nothing was written" in message
    connection = raw_connect(examples_store)
    assert _state(connection) == before
    connection.close()


def test_sqlite_a_trigger_dropping_every_other_row_is_named(examples_store: Path) -> None:
    connection = raw_connect(examples_store)
    connection.execute("CREATE TRIGGER evil BEFORE INSERT ON turns WHEN NEW.turn_id % 2 = 0 "
                       "BEGIN SELECT RAISE(IGNORE); END")
    connection.close()

    message = _refusal(cli("ingest", "--db", examples_store, JOURNAL))

    assert message.startswith("Error: turns: the batch did not read back as written "
                              "(6 rows were inserted, 3 read back)"), message


@pytest.fixture
def pg_store(pg_url: str, examples_path: Path) -> str:
    assert cli("ingest", "--db", pg_url, examples_path).exit_code == 0
    return pg_url


@pytest.mark.postgres
def test_postgres_a_do_instead_nothing_rule_fails_the_batch(pg_store: str) -> None:
    with psycopg.connect(libpq_url(pg_store), autocommit=True) as connection:
        before = _state(connection)
        connection.execute("CREATE RULE evil AS ON INSERT TO turns DO INSTEAD NOTHING")

        message = _refusal(cli("ingest", "--db", pg_store, JOURNAL))

        assert message.startswith("Error: turns: the batch did not read back as written "
                                  "(6 rows were inserted, 0 read back)"), message
        assert _state(connection) == before


@pytest.fixture
def owner_store(examples_path: Path) -> Iterator[tuple[str, str]]:
    """A store owned by a role that is no superuser (superusers bypass row-level security):
    (its URL as that role, its URL as the server's superuser)."""
    server = pg_server_url()
    role = f"lost_{uuid.uuid4().hex[:12]}"
    admin = psycopg.connect(libpq_url(server), autocommit=True)
    admin.execute(f'CREATE ROLE "{role}" LOGIN')
    try:
        with pg_schema(server) as url:
            schema = make_url(url).query["options"].removeprefix("-csearch_path=")
            admin.execute(f'GRANT ALL ON SCHEMA "{schema}" TO "{role}"')
            as_role = make_url(url).set(username=role).render_as_string(hide_password=False)
            assert cli("ingest", "--db", as_role, examples_path).exit_code == 0
            yield as_role, url
            admin.execute(f'DROP OWNED BY "{role}" CASCADE')
    finally:
        admin.execute(f'DROP ROLE IF EXISTS "{role}"')
        admin.close()


@pytest.mark.postgres
def test_postgres_a_forced_policy_hiding_a_turn_from_the_owner_fails_the_batch(
        owner_store: tuple[str, str]) -> None:
    as_role, as_admin = owner_store
    with psycopg.connect(libpq_url(as_admin), autocommit=True) as connection:
        before = _state(connection)
        for sql in ("ALTER TABLE turns ENABLE ROW LEVEL SECURITY",
                    "ALTER TABLE turns FORCE ROW LEVEL SECURITY",
                    "CREATE POLICY evil_read ON turns FOR SELECT "
                    "USING (turn_id IS DISTINCT FROM 3)",
                    "CREATE POLICY evil_write ON turns FOR INSERT WITH CHECK (true)"):
            connection.execute(sql)

        message = _refusal(cli("ingest", "--db", as_role, JOURNAL))

        assert message.startswith("Error: turns: the batch did not read back as written "
                                  "(6 rows were inserted, 5 read back)"), message
        assert _state(connection) == before



@pytest.mark.postgres
@pytest.mark.parametrize("change", [
    "NEW.prompt := NEW.prompt || ' (edited)'",  # stored, but not as inserted
    # stored as inserted, but as another leaf: the seq moved onto the next leaf's (a row of
    # another table), so the tree head would not cover this row
    "NEW.seq := NEW.seq + 1",
    # a flag read back as another flag
    "NEW.refusal_emitted := NOT coalesce(NEW.refusal_emitted, false)",
])
def test_postgres_a_trigger_changing_a_row_fails_the_batch(pg_store: str, change: str) -> None:
    with psycopg.connect(libpq_url(pg_store), autocommit=True) as connection:
        before = _state(connection)
        connection.execute(
            "CREATE FUNCTION evil() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF NEW.turn_id = 4 THEN {change}; END IF; RETURN NEW; END $$")
        connection.execute("CREATE TRIGGER evil BEFORE INSERT ON turns "
                           "FOR EACH ROW EXECUTE FUNCTION evil()")

        message = _refusal(cli("ingest", "--db", pg_store, JOURNAL))

        assert message.startswith("Error: turns: the batch did not read back as written "
                                  "(rows read back differ from the rows inserted)"), message
        assert _state(connection) == before
