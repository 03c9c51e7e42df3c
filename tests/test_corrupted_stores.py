"""No traceback ever (issue 21): every read command over a store damaged out of band ends in
one line naming the problem (or `NOT intact: ...`), exit 1 or 2."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli

JOURNAL = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"


def _sql(*statements: str) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        connection = sqlite3.connect(path)
        for statement in statements:
            connection.execute(statement)
        connection.commit()
        connection.close()
    return damage


def _replace_bytes(needle: bytes, at: int, value: int) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        data = bytearray(path.read_bytes())
        start = data.index(needle)
        data[start + at] = value
        path.write_bytes(bytes(data))
    return damage


def _overwrite_page(number: int) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        data = bytearray(path.read_bytes())
        # The page size: the file header's two bytes at offset 16 (SQLite's file format).
        page = int.from_bytes(data[16:18], "big")
        data[(number - 1) * page:number * page] = bytes([0xA5]) * page
        path.write_bytes(bytes(data))
    return damage


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


DAMAGES: dict[str, Callable[[Path], None]] = {
    "log_origin dropped": _sql("DROP TABLE log_origin"),
    "tree_heads dropped": _sql("DROP TABLE tree_heads"),
    "turns dropped": _sql("DROP TABLE turns"),
    "an index name not UTF-8 in sqlite_master": _replace_bytes(b"ix_contract_residuals_seq",
                                                               3, 0xFF),
    "a row's text not UTF-8": _sql("DROP TRIGGER turns_append_only_update",
                                   "UPDATE turns SET prompt = CAST(X'FFFE41' AS TEXT) "
                                   "WHERE turn_id = 3"),
    "a malformed page": _overwrite_page(6),
    "the file cut in half": _truncate,
    "not a database": lambda path: path.write_bytes(b"hello" * 1000),
}

COMMANDS: list[tuple[str, ...]] = [
    ("verify",), ("verify", "--json"), ("log",), ("log", "--start", "3", "--end", "9"),
    ("query", "{ ledger { treeSize rootHash origin } }"),
    ("query", "{ turns(first: 10) { totalCount } }"),
    ("export", "residuals", "--format", "jsonl"), ("export", "turns", "--format", "csv"),
    ("checkpoint",), ("prove", "--index", "2"), ("prove", "--consistency", "3"),
]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pristine") / "audit.db"
    for source in (*EXAMPLE_FILES, JOURNAL):
        assert cli("ingest", "--db", path, source).exit_code == 0
    return path


@pytest.fixture(params=DAMAGES)
def damaged(pristine: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A copy of the pristine store with one of DAMAGES done to it."""
    path = tmp_path / "audit.db"
    shutil.copyfile(pristine, path)
    DAMAGES[request.param](path)
    return path


def test_every_read_command_on_a_damaged_store_ends_in_one_clean_line(damaged: Path) -> None:
    for command in COMMANDS:
        result = cli(*command, "--db", damaged)
        said = f"{command}: exit {result.exit_code}\n{result.stdout[-400:]}\n{result.stderr}"
        assert "Traceback" not in result.stdout + result.stderr, said
        if result.exit_code == 0:  # a damage this command never reads
            continue
        assert result.exit_code in (1, 2), said
        if "--json" in command:
            assert result.stdout.startswith('{"intact":false,"problems":["'), said
            continue
        lines = result.stderr.splitlines()
        assert lines, said
        assert lines[0].startswith(("Error: ", "NOT intact: ")), said


def test_verify_in_one_process_or_two_says_the_same_of_a_damaged_store(damaged: Path) -> None:
    alone = cli("verify", "--db", damaged, "--jobs", "1")
    split = cli("verify", "--db", damaged, "--jobs", "2")
    assert alone.exit_code == 1
    assert (split.exit_code, split.stdout, split.stderr) == (1, alone.stdout, alone.stderr)
