"""Where packs/ and teaching/ are found: option, environment, bundled copy, repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import bundled
from store.model.locations import packs_dir, teaching_dir

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CORE_AUDIT_PACKS", raising=False)
    monkeypatch.delenv("CORE_AUDIT_TEACHING", raising=False)


def test_an_editable_install_reads_the_repository() -> None:
    assert packs_dir() == REPO / "packs"
    assert teaching_dir() == REPO / "teaching"


def test_a_bundled_copy_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "packs").mkdir()
    monkeypatch.setattr(bundled, "_BUNDLED", tmp_path)
    assert packs_dir() == tmp_path / "packs"
    assert teaching_dir() == REPO / "teaching"  # no bundled teaching/: the repository's


def test_environment_then_option_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORE_AUDIT_PACKS", str(tmp_path / "env-packs"))
    monkeypatch.setenv("CORE_AUDIT_TEACHING", str(tmp_path / "env-teaching"))
    assert packs_dir() == tmp_path / "env-packs"
    assert teaching_dir() == tmp_path / "env-teaching"
    assert packs_dir(tmp_path / "opt") == tmp_path / "opt"
    assert teaching_dir(str(tmp_path / "opt")) == tmp_path / "opt"
