"""`core-audit` run by the tests: in-process through click, or as a subprocess, either way
cut off from the settings of the shell the tests run in."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner, Result

from store.cli import main

# The variables that choose the CLI's inputs: a developer's own store or data dirs must never
# reach a test. Not CORE_AUDIT_SERVE_SETTINGS: `serve --workers` writes it for its workers,
# and a test reads it after the run (CliRunner restores every variable it was given).
INPUT_VARIABLES = ("CORE_AUDIT_DB", "CORE_AUDIT_PACKS", "CORE_AUDIT_TEACHING", "CORE_AUDIT_CORE",
                   "CORE_AUDIT_IMMUTABLE")


def cli(*args: str | Path, env: dict[str, str] | None = None, input: str | None = None) -> Result:
    """`core-audit ARGS` in-process, stdout and stderr kept apart, with only `env`'s settings.

    An exception the CLI lets out fails the test with its traceback instead of becoming exit
    status 1; click's own exits (SystemExit) still end up in `exit_code`.
    """
    settings: dict[str, str | None] = {**dict.fromkeys(INPUT_VARIABLES), **(env or {})}
    return CliRunner().invoke(main, [str(a) for a in args], env=settings, input=input,
                              catch_exceptions=False)


def subprocess_environ(**env: str) -> dict[str, str]:
    """The environment for a `core-audit` subprocess: this one without any CORE_AUDIT_*
    variable, plus `env`."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("CORE_AUDIT_")}
    return {**kept, **env}
