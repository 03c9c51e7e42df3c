"""The README is checked: its command table covers every command, its GraphQL is valid."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from graphql import build_schema, parse, validate

from store.cli import main

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
GRAPHQL_BLOCKS = re.findall(r"```graphql\n(.*?)```", README, flags=re.S)


def test_the_first_lines_give_the_main_job_and_the_test_command() -> None:
    first_block = re.search(r"```sh\n(.*?)```", README, flags=re.S)
    assert first_block is not None
    main_job, tests = first_block.group(1).strip().splitlines()
    assert main_job.endswith("core-audit demo")
    assert tests.endswith("python -m pytest")
    assert tests in (REPO / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_is_in_the_reference_table(command: str) -> None:
    assert re.search(rf"^\| `{command}[ `]", README, flags=re.M), command


def test_the_readme_shows_graphql_examples() -> None:
    assert len(GRAPHQL_BLOCKS) >= 3


@pytest.mark.parametrize("block", GRAPHQL_BLOCKS)
def test_each_graphql_example_is_valid_against_the_reviewed_schema(block: str) -> None:
    schema = build_schema((REPO / "graphql" / "schema.graphql").read_text(encoding="utf-8"))
    assert validate(schema, parse(block)) == []


def test_every_file_the_checklist_names_exists() -> None:
    section = README.split("### Changing what is stored: a checklist", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`((?:store|migrations|graphql|tests)/[\w/.-]*)`", section))
    assert len(named) >= 10
    assert [path for path in sorted(named) if not (REPO / path).exists()] == []
