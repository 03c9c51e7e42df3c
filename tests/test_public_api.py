"""The public Python API: importable from the package root, typed, and mypy --strict clean."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import store

REPO = Path(__file__).resolve().parent.parent


def test_every_public_name_is_importable_from_the_package_root() -> None:
    assert sorted(store.__all__) == sorted(set(store.__all__))
    for name in store.__all__:
        assert getattr(store, name) is not None, name
    from store import AuditStore, BatchRejected, check_surface, project_residuals

    assert AuditStore.open and BatchRejected and check_surface and project_residuals


def test_the_package_says_it_is_typed() -> None:
    assert (REPO / "store" / "py.typed").is_file()


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_strict_is_clean_on_the_package() -> None:
    """pyproject.toml's [tool.mypy]: strict on store/ (strawberry's decorators are untyped)."""
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
