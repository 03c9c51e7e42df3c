"""A command loads only what it uses: `core-audit --help` imports no database, GraphQL or
migration code, and the help it lists is each command's own (docs/design.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import click
import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli_ok

from store.cli import COMMANDS, main

HEAVY = ("sqlalchemy", "strawberry", "graphql", "alembic", "migrations", "starlette", "uvicorn",
         "psycopg", "store.db", "store.api")


def loaded_after(code: str, also: tuple[str, ...] = ()) -> list[str]:
    """The heavy modules (and those of `also`) a fresh interpreter holds after running CODE."""
    script = textwrap.dedent(f"""
        import json, sys
        {code}
        heavy = {HEAVY + also!r}
        print(json.dumps(sorted(m for m in sys.modules
                                if any(m == h or m.startswith(h + ".") for h in heavy))))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    return list(json.loads(result.stdout.splitlines()[-1]))


def test_help_imports_no_database_graphql_or_migrations() -> None:
    loaded = loaded_after("from store.cli import main\n"
                          "        main(['--help'], standalone_mode=False)")
    assert loaded == []


def test_import_store_loads_nothing_heavy_until_a_name_is_used() -> None:
    assert loaded_after("import store; store.ProofError; store.check_proof") == []
    assert "sqlalchemy" in loaded_after("import store; store.AuditStore")


def test_verify_proof_loads_no_store() -> None:
    loaded = loaded_after("from store.cli import main\n"
                          "        main(['verify-proof', '--help'], standalone_mode=False)")
    assert loaded == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_listed_summary_is_the_commands_own_help(name: str) -> None:
    """--help lists COMMANDS' summaries without importing the commands: they must say what the
    command itself says, at any terminal width."""
    command = main.commands[name]
    entry = COMMANDS[name]
    assert command.name == name
    assert command.hidden is entry.hidden
    listed = click.Command(name, help=entry.summary)
    for limit in (30, 45, 80, 1000):
        assert listed.get_short_help_str(limit) == command.get_short_help_str(limit), limit


def test_every_command_is_listed() -> None:
    assert sorted(main.list_commands(click.Context(main))) == sorted(COMMANDS)


def test_an_ingest_into_a_store_at_head_loads_no_migrations_or_signing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Creating the store runs alembic; a store already at head is checked by its one
    # alembic_version row (store/db/schema/schema_version.py), and nothing signs in an ingest:
    # ~10 and ~6 MiB of the writer's memory.
    db, first, second = tmp_path / "audit.db", str(EXAMPLE_FILES[0]), str(EXAMPLE_FILES[1])
    cli_ok("ingest", "--db", db, first)
    loaded = loaded_after("from store.cli import main\n"
                          f"        main(['ingest', '--db', {str(db)!r}, {second!r}],"
                          " standalone_mode=False)", also=("cryptography",))
    assert "sqlalchemy" in loaded
    assert not [m for m in loaded
                if m.split(".")[0] in ("alembic", "migrations", "cryptography")]
