"""`tiles --out DIR` in a shared publish folder (issue 32, item 8): it never follows a link it
did not make (a symbolic link planted for a tile, a folder or the checkpoint is refused, naming
it, and its target keeps every byte), writes through fresh temporary names only, and a re-run
leaves every tile already written with the same bytes as it is: it only adds files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli
from cli_runs import cli_ok as ok

ORIGIN = "audit.example/log"
JOURNAL = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The example store (66 leaves, the origin's one: 67), a kept signed checkpoint, its key."""
    folder = tmp_path_factory.mktemp("signed")
    ok("keygen", ORIGIN, "--out", folder / "log")
    for source in EXAMPLE_FILES:
        ok("ingest", "--db", folder / "audit.db", source)
    ok("checkpoint", "--db", folder / "audit.db", "--key", folder / "log.key", "--origin", ORIGIN)
    return {"db": folder / "audit.db", "key": folder / "log.key"}


@pytest.fixture
def store(signed: dict[str, Path], tmp_path: Path) -> Path:
    shutil.copyfile(signed["db"], tmp_path / "audit.db")
    return tmp_path / "audit.db"


def files_of(out: Path) -> dict[str, tuple[int, int]]:
    """Every file below `out` with its inode and modification time (ns)."""
    return {str(p.relative_to(out)): (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in sorted(out.rglob("*")) if p.is_file()}


def test_a_rerun_leaves_every_unchanged_tile_as_it_is(store: Path, signed: dict[str, Path],
                                                      tmp_path: Path) -> None:
    out = tmp_path / "public"
    first = ok("tiles", "--db", store, "--out", out)
    assert first == f"wrote 2 tiles and the checkpoint of size 67 to {out}\n"
    before = files_of(out)
    assert sorted(before) == ["checkpoint", "tile/0/000.p/67", "tile/entries/000.p/67"]
    again = ok("tiles", "--db", store, "--out", out)
    assert again == (f"wrote 0 tiles and the checkpoint (unchanged) of size 67 to {out} "
                     "(2 tiles already there, unchanged)\n")
    assert files_of(out) == before  # same inodes, same times: not one file rewritten
    # The log grows and a new checkpoint is signed: only the new tiles and checkpoint come.
    ok("ingest", "--db", store, JOURNAL)
    ok("checkpoint", "--db", store, "--key", signed["key"])
    grown = ok("tiles", "--db", store, "--out", out)
    # 84's partial tiles are new; 67's, the older kept checkpoint's, are there already.
    assert grown == (f"wrote 2 tiles and the checkpoint of size 84 to {out} "
                     "(2 tiles already there, unchanged)\n")
    after = files_of(out)
    assert {name: after[name] for name in before if name != "checkpoint"} == {
        name: before[name] for name in before if name != "checkpoint"}
    assert not [name for name in after if name.endswith(".tmp")]


def test_a_symlink_planted_for_a_tile_is_refused_and_its_target_untouched(
        store: Path, tmp_path: Path) -> None:
    out, victim = tmp_path / "public", tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    (out / "tile" / "0").mkdir(parents=True)
    (out / "tile" / "0" / "000.p").mkdir()
    os.symlink(victim, out / "tile" / "0" / "000.p" / "67")
    refused = cli("tiles", "--db", store, "--out", out)
    assert refused.exit_code == 1
    assert refused.stderr == (
        f"Error: {out}/tile/0/000.p/67: a symbolic link core-audit did not make: refusing to "
        "replace or follow it; remove it and run `tiles` again\n")
    assert victim.read_bytes() == b"precious\n"
    assert (out / "tile" / "0" / "000.p" / "67").is_symlink()
    assert not (out / "checkpoint").exists()  # the checkpoint comes last: never published


def test_a_symlink_planted_for_a_folder_or_the_checkpoint_is_refused(
        store: Path, tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "public", tmp_path / "elsewhere"
    (out / "tile").mkdir(parents=True)
    elsewhere.mkdir()
    os.symlink(elsewhere, out / "tile" / "0")
    refused = cli("tiles", "--db", store, "--out", out)
    assert refused.exit_code == 1
    assert refused.stderr.startswith(f"Error: {out}/tile/0: not a folder core-audit made (a "
                                     "symbolic link or a file): refusing to write through it")
    assert list(elsewhere.iterdir()) == []
    os.unlink(out / "tile" / "0")
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    os.symlink(victim, out / "checkpoint")
    refused = cli("tiles", "--db", store, "--out", out)
    assert refused.exit_code == 1
    assert f"{out}/checkpoint: a symbolic link core-audit did not make" in refused.stderr
    assert victim.read_bytes() == b"precious\n"


def test_a_symlink_planted_at_the_old_temporary_name_is_never_written_through(
        store: Path, tmp_path: Path) -> None:
    out, victim = tmp_path / "public", tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    (out / "tile" / "0" / "000.p").mkdir(parents=True)
    os.symlink(victim, out / "tile" / "0" / "000.p" / "67.tmp")  # where 0.x wrote it
    os.symlink(victim, out / "checkpoint.tmp")
    ok("tiles", "--db", store, "--out", out)
    assert victim.read_bytes() == b"precious\n"
    assert (out / "tile" / "0" / "000.p" / "67").is_file()
    assert not (out / "tile" / "0" / "000.p" / "67").is_symlink()
