"""Where `packs/` and `teaching/` live (override, environment, then the bundled data), or the
CORE checkout that replaces them."""

from __future__ import annotations

import os
from pathlib import Path

from store.bundled import bundled_dir

PACKS_ENV = "CORE_AUDIT_PACKS"
TEACHING_ENV = "CORE_AUDIT_TEACHING"
CORE_ENV = "CORE_AUDIT_CORE"  # a CORE checkout: its registry, corpora and packs/data/


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


def core_dir(override: Path | str | None = None) -> Path | None:
    """A CORE checkout to read instead of the data dirs, or None."""
    if override is not None:
        return Path(override)
    from_env = os.environ.get(CORE_ENV)
    return Path(from_env) if from_env else None
