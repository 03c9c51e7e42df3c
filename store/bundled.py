"""Where the repo's data folders are: bundled in the wheel, or beside the package."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
# A wheel carries copies here (pyproject force-include); an editable install has none.
_BUNDLED = _PACKAGE / "_bundled"


def bundled_dir(name: str) -> Path:
    """`migrations`, `graphql`, `examples`, ...: the wheel's copy, else the checkout's."""
    inside = _BUNDLED / name
    return inside if inside.is_dir() else _PACKAGE.parent / name
