"""Where `packs/` and `teaching/` live: override, environment, then the bundled data."""

from __future__ import annotations

import os
from pathlib import Path

from store.bundled import bundled_dir

PACKS_ENV = "CORE_AUDIT_PACKS"
TEACHING_ENV = "CORE_AUDIT_TEACHING"


def _locate(name: str, env: str, override: Path | str | None) -> Path:
    if override is not None:
        return Path(override)
    from_env = os.environ.get(env)
    if from_env:
        return Path(from_env)
    return bundled_dir(name)


def packs_dir(override: Path | str | None = None) -> Path:
    return _locate("packs", PACKS_ENV, override)


def teaching_dir(override: Path | str | None = None) -> Path:
    return _locate("teaching", TEACHING_ENV, override)
