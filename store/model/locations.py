"""Where `packs/` and `teaching/` live: override, environment, bundled copy, then the repo."""

from __future__ import annotations

import os
from pathlib import Path

import store

PACKS_ENV = "CORE_AUDIT_PACKS"
TEACHING_ENV = "CORE_AUDIT_TEACHING"

_PACKAGE = Path(store.__file__).resolve().parent
# A wheel carries copies here (pyproject force-include); an editable install has none.
_BUNDLED = _PACKAGE / "_bundled"
_REPO = _PACKAGE.parent


def _locate(name: str, env: str, override: Path | str | None) -> Path:
    if override is not None:
        return Path(override)
    from_env = os.environ.get(env)
    if from_env:
        return Path(from_env)
    bundled = _BUNDLED / name
    if bundled.is_dir():
        return bundled
    return _REPO / name


def packs_dir(override: Path | str | None = None) -> Path:
    return _locate("packs", PACKS_ENV, override)


def teaching_dir(override: Path | str | None = None) -> Path:
    return _locate("teaching", TEACHING_ENV, override)
