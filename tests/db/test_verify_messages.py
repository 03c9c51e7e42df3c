"""Verify's messages say what is true, first problem first (issue 32): a rewritten row is
named before the subtrees it upsets; --quick says it checked a tree head; a row hidden from
the verifying role by row-level security is named hidden, not deleted."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from backends import EXAMPLE_FILES, libpq_url, pg_schema, pg_server_url
from cli_runs import cli
from jsonl_files import write_jsonl
from sqlalchemy.engine import make_url
from store_support import distinct_frames, triggers_bypassed


def test_a_rewritten_row_is_the_first_problem_before_the_subtrees_over_it(
        db_path: Path, tmp_path: Path) -> None:
    frames = write_jsonl(tmp_path / "frames.jsonl", distinct_frames(60, "rewrite"))
    assert cli("ingest", "--db", db_path, frames).exit_code == 0  # > 256 leaves: subtrees
    with triggers_bypassed(db_path) as connection:
        seq, key = connection.execute("SELECT seq, residual_id FROM contract_residuals "
                                      "WHERE seq > 3 ORDER BY seq LIMIT 1").fetchone()
        connection.execute("UPDATE contract_residuals SET residual_code = 'rewritten' "
                           "WHERE residual_id = ?", (key,))
        connection.commit()

    result = cli("verify", "--db", db_path, "--jobs", "1")

    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (f"NOT intact: first problem at seq {seq}: contract_residuals {key}: "
                        "residual_id is not the hash of its content"), lines
    assert any(line.startswith("  also log_subtrees 8/0: ") for line in lines), lines


def test_quick_says_it_checked_a_tree_head_of_so_many_leaves(examples_store: Path,
                                                             tmp_path: Path) -> None:
    checkpoint = tmp_path / "checkpoint.txt"
    checkpoint.write_text(cli("checkpoint", "--db", examples_store).stdout)

    result = cli("verify", "--db", examples_store, "--checkpoint", checkpoint, "--quick")

    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("intact: tree head of 18 leaves, root "), result.stdout
    assert result.stdout.endswith("; extends the checkpoint of size 18\n")


@pytest.fixture
def api_role_store() -> Iterator[tuple[str, str]]:
    """A store and a read-only role that is no superuser: (its URL as that role, as owner)."""
    server = pg_server_url()
    role = f"api_{uuid.uuid4().hex[:12]}"
    admin = psycopg.connect(libpq_url(server), autocommit=True)
    admin.execute(f'CREATE ROLE "{role}" LOGIN')
    try:
        with pg_schema(server) as url:
            for path in EXAMPLE_FILES:
                assert cli("ingest", "--db", url, path).exit_code == 0
            schema = make_url(url).query["options"].removeprefix("-csearch_path=")
            admin.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO "{role}"')
            admin.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO "{role}"')
            yield make_url(url).set(username=role).render_as_string(hide_password=False), url
            admin.execute(f'DROP OWNED BY "{role}" CASCADE')
    finally:
        admin.execute(f'DROP ROLE IF EXISTS "{role}"')
        admin.close()


@pytest.mark.postgres
def test_a_row_hidden_by_row_level_security_is_named_hidden_not_deleted(
        api_role_store: tuple[str, str]) -> None:
    as_api, as_owner = api_role_store
    with psycopg.connect(libpq_url(as_owner), autocommit=True) as connection:
        connection.execute("ALTER TABLE contract_residuals ENABLE ROW LEVEL SECURITY")
        connection.execute("CREATE POLICY hide_one ON contract_residuals FOR SELECT "
                           "USING (seq <> 2)")

    result = cli("verify", "--db", as_api, "--jobs", "1")

    assert result.exit_code == 1
    gaps = [line for line in result.stderr.splitlines() if "have no row" in line]
    assert gaps, result.stderr
    role = make_url(as_api).username
    assert all(f"(unreadable here: row-level security on contract_residuals hides rows from "
               f"role {role}; verify as a role that reads every row to tell hidden from deleted "
               "out of band)" in line for line in gaps), gaps
    assert "(deleted out of band)" not in result.stderr
