"""The docs stay true: the README's first lines are CI's commands, docs/cli.md is the commands'
own reference, and every command and GraphQL example in the README and docs/*.md runs."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from backends import PG_ENV, pg_schema
from cli_runs import cli, subprocess_environ
from graphql import build_schema, parse, validate
from surface_form_data import COGNITION, CROSS_IDENTITY, JUDGMENT_SINGLE, TRUTH_GROUNDS_REALITY
from teaching_data import LIGHT_SURFACE, write_core_checkout
from turn_data import journal_entry, journal_line

from store import AuditStore
from store.api.execution import execute_operation
from store.cli import main
from store.cli.reference import BEGIN, END, reference, undocumented

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
PAGES = {"README.md": README} | {
    f"docs/{p.name}": p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md"))}
CLI_PAGE = PAGES["docs/cli.md"]
SDL = (REPO / "graphql" / "schema.graphql").read_text(encoding="utf-8")


def _blocks(language: str) -> list[tuple[str, str]]:
    return [(name, block) for name, page in PAGES.items()
            for block in re.findall(rf"```{language}\n(.*?)```", page, flags=re.S)]


GRAPHQL_BLOCKS = _blocks("graphql")
# The README's first block is CI's (it sets up a venv); every other shell block is run here.
SH_BLOCKS = _blocks("sh")[1:]


def test_the_first_lines_give_the_main_job_and_the_test_command() -> None:
    first_block = re.search(r"```sh\n(.*?)```", README, flags=re.S)
    assert first_block is not None
    main_job, tests = first_block.group(1).strip().splitlines()
    assert main_job.endswith("core-audit demo")
    assert tests.endswith("python -m pytest")
    assert tests in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_is_a_front_page() -> None:
    assert len(README.splitlines()) <= 150
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)\)", README))
    assert linked == {name for name in PAGES if name.startswith("docs/")}


@pytest.mark.parametrize("command", sorted(c for c in main.commands if not main.commands[c].hidden))
def test_every_command_is_in_the_reference(command: str) -> None:
    assert f"### `core-audit {command}`" in CLI_PAGE, command


def test_the_cli_reference_is_generated_from_the_commands() -> None:
    generated = CLI_PAGE.split(BEGIN, 1)[1].split(END, 1)[0]
    assert generated.strip() == reference(main).strip(), (
        "docs/cli.md is stale: run core-audit cli-reference --write docs/cli.md")


def test_every_command_and_option_says_what_it_does() -> None:
    assert undocumented(main) == []


def test_the_docs_show_graphql_examples() -> None:
    assert len(GRAPHQL_BLOCKS) >= 3


@pytest.mark.parametrize("block", [b for _, b in GRAPHQL_BLOCKS])
def test_each_graphql_example_is_valid_against_the_reviewed_schema(block: str) -> None:
    assert validate(build_schema(SDL), parse(block)) == []


def test_every_file_the_checklist_names_exists() -> None:
    design = PAGES["docs/design.md"]
    section = design.split("## Changing what is stored: a checklist", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`((?:store|migrations|graphql|tests)/[\w/.-]*)`", section))
    assert len(named) >= 10
    assert [path for path in sorted(named) if not (REPO / path).exists()] == []


def test_nothing_cites_the_design_outside_the_repository() -> None:
    cited = [str(p.relative_to(REPO)) for folder in ("store", "tests", "migrations", "bench")
             for p in (REPO / folder).rglob("*.py")
             if re.search(r"(?<![/\w])DESIGN\.md", p.read_text(encoding="utf-8"))]
    assert cited == []


# --- every example runs ----------------------------------------------------------------------

# A residual of examples/adr_0225_frames.jsonl, as the docs' examples name it.
EXAMPLE_RESIDUAL = "54b43aa2d7a9ec73c55f994d92be93d9f3148b28f72ac43c1f99fdf360f5fc42"
# Commands that serve until stopped: their arguments are parsed, as click would, not run
# (tests/cli/test_serve_cli.py runs the server itself).
SERVING = {"serve", "demo", "witness"}  # witness: `witness serve`
PG_EXAMPLE = re.compile(r"postgresql\+psycopg://\w+@db\.example/audit\?options=-csearch_path%3D"
                        r"core_audit_store")


@pytest.fixture(scope="module")
def docs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working directory as the docs assume: the repository's examples and contract, and the
    example store `core-audit demo` makes (heads 29, 47, 66, 83)."""
    work = tmp_path_factory.mktemp("docs")
    for folder in ("examples", "graphql"):
        shutil.copytree(REPO / folder, work / folder)
    with AuditStore.open(str(work / "core-audit.db")) as store:
        for path in sorted((work / "examples").glob("*.jsonl")):
            with path.open("rb") as lines:
                store.ingest(lines, source=path.name)
    return work


@pytest.fixture(scope="module")
def core_checkout(docs_dir: Path) -> Path:
    """A CORE-checkout-shaped tree (tests/teaching_data.py) with a Workbench journal, for the
    docs' `--core ~/src/core` lines, and ChatRuntime outputs beside the store."""
    core = write_core_checkout(docs_dir / "core", {
        "cognition_chains_v1": COGNITION, "relations_chains_v1": [TRUTH_GROUNDS_REALITY],
    }, cross_pack=[CROSS_IDENTITY])
    journal = core / "workbench_data" / "turn_journal.jsonl"
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text(journal_line(journal_entry(
        1, "Why does judgment matter?", JUDGMENT_SINGLE, "teaching")) + "\n", encoding="utf-8")
    (docs_dir / "chat_outputs.jsonl").write_text(json.dumps({
        "prompt": "Why does light exist?", "surface": LIGHT_SURFACE,
        "grounding_source": "teaching", "epistemic_state": "decoded"}) + "\n",
        encoding="utf-8")
    return core


@dataclass
class Line:
    page: str
    command: str
    expected: list[str]  # what its output shows, from the `# ...` lines that follow it


def _lines(block: str) -> Iterator[tuple[str, list[str]]]:
    joined = re.sub(r"\\\n\s*", " ", block)
    command: str | None = None
    expected: list[str] = []
    follows = False  # a `# ...` line right under a command shows its output
    for raw in joined.splitlines():
        stripped = raw.strip()
        if stripped.startswith("#") or not stripped:
            follows = follows and stripped.startswith("# ")
            if follows and command is not None:
                expected.append(stripped[2:])
            continue
        follows = True
        if command is not None:
            yield command, expected
        command, expected = stripped, []
    if command is not None:
        yield command, expected


def _words(command: str) -> list[str]:
    """The command's words without its trailing `# comment`."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars="><|")
    lexer.whitespace_split, lexer.commenters = True, "#"
    return list(lexer)


DOC_LINES = [Line(page, command, expected) for page, block in SH_BLOCKS
             for command, expected in _lines(block)]


def test_the_docs_show_commands() -> None:
    assert len([line for line in DOC_LINES if line.command.startswith("core-audit")]) >= 30


@pytest.fixture(scope="module")
def pg_schema_url() -> Iterator[str | None]:
    """The docs' PostgreSQL store, a fresh schema of the test server (None without one)."""
    if not os.environ.get(PG_ENV):
        yield None
        return
    with pg_schema() as url:
        yield url


def _substituted(command: str, docs_dir: Path, core: Path, pg: str | None) -> str | None:
    """The command as run here: the CORE checkout and PostgreSQL server it names are this
    test's own (None: it needs a PostgreSQL server and there is none)."""
    command = command.replace("~/src/core", str(core))
    if PG_EXAMPLE.search(command):
        if pg is None:
            return None
        command = PG_EXAMPLE.sub(pg.replace("\\", "\\\\"), command)
    return command


def _run_core_audit(words: list[str], env: dict[str, str]) -> tuple[int, str]:
    """In-process, in the current directory; `> FILE` writes its standard output there."""
    out_file = None
    if ">" in words:
        at = words.index(">")
        words, out_file = words[:at], Path(words[at + 1])
    name = words[1]
    if name in SERVING:
        main.commands[name].make_context(name, words[2:])  # refuses what click would refuse
        return 0, ""
    result = cli(*words[1:], env=env)
    if out_file is not None:
        out_file.write_bytes(result.stdout_bytes)
    return result.exit_code, result.stdout + result.stderr


@functools.cache
def _bench_help(script: Path) -> str:
    """A benchmark's `--help`, asked once a script: the docs run the same ones many times,
    and each start costs 0.5-1 s."""
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                          text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _check_bench(words: list[str]) -> None:
    """A benchmark's command: the script exists and takes every option the docs give it (its
    runs take minutes; docs/benchmarks.md gives their figures)."""
    script = REPO / words[1]
    assert script.is_file(), words[1]
    shown = _bench_help(script)
    for word in words[2:]:
        if word.startswith("--"):
            assert word.split("=", 1)[0] in shown, f"{words[1]}: {word}"


def test_every_command_in_the_docs_runs(docs_dir: Path, core_checkout: Path,
                                        pg_schema_url: str | None,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    env = subprocess_environ(PYTHONPATH=str(REPO))
    failures = []
    workdirs: dict[str, Path] = {}
    for line in DOC_LINES:
        if line.page not in workdirs:  # each page starts from the example store as demo makes it
            workdirs[line.page] = docs_dir.parent / f"{docs_dir.name}-{len(workdirs)}"
            shutil.copytree(docs_dir, workdirs[line.page], symlinks=True)
            monkeypatch.chdir(workdirs[line.page])
        work = workdirs[line.page]
        command = _substituted(line.command, work, core_checkout, pg_schema_url)
        if command is None:
            continue
        assignments = {}
        words = _words(command)
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
            key, value = words.pop(0).split("=", 1)
            assignments[key] = value
        if words[0].endswith("bench/frames.py") or words[0] in {"psql", "python3"}:
            continue  # a bench's setup (a schema, a data file), not an example of this project
        if words[:2] == [".", ".venv/bin/activate"]:
            continue  # the shell's own; tests/test_readme_walk.py runs the README in a shell
        if words[0] == ".venv/bin/python":
            _check_bench(words)
            continue
        if words[0] == "alembic":
            words = [sys.executable, "-m", "alembic", "-c", str(REPO / "alembic.ini"),
                     *words[1:]]
            done = subprocess.run(words, cwd=work, env={**env, **assignments},
                                  capture_output=True, text=True, timeout=300)
            status, output = done.returncode, done.stdout + done.stderr
        else:
            assert words[0] == "core-audit", f"{line.page}: {line.command}"
            words = [w for w in words if w != "examples/*.jsonl"] + (
                sorted(str(p.relative_to(docs_dir)) for p in (docs_dir / "examples").glob(
                    "*.jsonl")) if "examples/*.jsonl" in words else [])
            status, output = _run_core_audit(words, assignments)
        if status != 0:
            failures.append(f"{line.page}: {line.command}\n  exit {status}: {output[-600:]}")
        for shown in line.expected:
            pieces = [p.strip() for p in shown.split("...") if p.strip()]
            if not all(piece in output for piece in pieces):
                failures.append(f"{line.page}: {line.command}\n  shows {shown!r}, printed "
                                f"{output[-300:]!r}")
    assert failures == [], "\n".join(failures)


# Values for the variables the docs' operations declare as required.
VARIABLES = {"id": EXAMPLE_RESIDUAL}


@pytest.mark.parametrize("block", [b for _, b in GRAPHQL_BLOCKS])
def test_each_graphql_example_runs_on_the_example_store(block: str, docs_dir: Path) -> None:
    document = parse(block)
    names = {v.variable.name.value for d in document.definitions
             for v in getattr(d, "variable_definitions", None) or ()}
    variables = {name: VARIABLES[name] for name in names if name in VARIABLES}
    with AuditStore.open(str(docs_dir / "core-audit.db"), read_only=True) as store:
        result = asyncio.run(execute_operation(store, block, variables, None))
    assert result.get("errors") is None, result
    assert result["data"]


# --- the auditor's ten questions --------------------------------------------------------------

QUESTIONS = PAGES["docs/graphql.md"].split("## Questions an auditor asks", 1)[1].split(
    "\n## ", 1)[0]
QUESTION_BLOCKS = re.findall(r"```graphql\n(.*?)```", QUESTIONS, flags=re.S)


def test_the_ten_questions_each_have_one_query() -> None:
    asked = re.findall(r"^(\d+)\. ", QUESTIONS, flags=re.M)
    assert asked == [str(n) for n in range(1, 11)]
    assert len(QUESTION_BLOCKS) == 10


def _unanswered(name: str, value: object) -> list[str]:
    """Where an answer holds no records: a null root field, an empty page, no groups, no
    entries, a zero total."""
    if value is None:
        return [name]
    if not isinstance(value, dict):
        return []
    empty = [f"{name}.{key}" for key in ("groups", "nodes", "entries", "corpora")
             if key in value and not value[key]]
    if value.get("totalCount") == 0 or value.get("total") == 0:
        empty.append(f"{name}: total 0")
    return empty


@pytest.mark.parametrize("number", range(1, 11))
def test_each_question_is_answered_with_records(number: int, docs_dir: Path) -> None:
    block = QUESTION_BLOCKS[number - 1]
    with AuditStore.open(str(docs_dir / "core-audit.db"), read_only=True) as store:
        result = asyncio.run(execute_operation(store, block, None, None))
    assert result.get("errors") is None, result
    assert [where for name, value in result["data"].items()
            for where in _unanswered(name, value)] == []
