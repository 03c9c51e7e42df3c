"""Stores built once per test process (an xdist worker) and then shared or copied.

Ingesting the example files into a new store runs every migration and three batches: about a
second on SQLite and several on PostgreSQL, which paid per test was most of the suite's time.
A test that reads a store through read-only handles gets the one built for its backend and
files; a test that may write gets a copy of it on SQLite (a closed store is one file), and a
store of its own on PostgreSQL.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

import pytest
from backends import pg_schema

from store.db.audit_store import AuditStore

# The fixtures that open the example store read-only (tests/conftest.py); any other fixture
# or test asking for `example_store_url` may write to it, and gets a store of its own.
READ_ONLY_HANDLES = ("example_db", "journal_db")


def ingest_files(url: str, files: Sequence[Path]) -> None:
    """`files` into the store at `url` (created if new), one batch each, in order."""
    with AuditStore.open(url) as store:
        for path in files:
            store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)


def reads_only(request: pytest.FixtureRequest) -> bool:
    """True when the requesting test reaches the example store only through the read-only
    handles: neither it nor any fixture it uses asks for `example_store_url`, or for the
    `backend_url` that store is at (a CLI run on it would expect the examples there)."""
    info = request.node._fixtureinfo
    if {"example_store_url", "backend_url"} & set(info.argnames):
        return False
    return not any({"example_store_url", "backend_url"} & set(definitions[-1].argnames)
                   for name, definitions in info.name2fixturedefs.items()
                   if name not in (*READ_ONLY_HANDLES, "example_store_url"))


class BuiltStores:
    """The stores this process built, by backend and files; PostgreSQL schemas are dropped at
    `close`."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._urls: dict[tuple[str, tuple[Path, ...]], str] = {}
        self._schemas = ExitStack()

    def shared(self, backend_url: str, files: Sequence[Path]) -> str:
        """The URL of a store holding `files` on `backend_url`'s backend, built on first use:
        open it read-only only, as other tests read it too."""
        backend = "sqlite" if backend_url.startswith("sqlite") else "postgresql"
        key = (backend, tuple(files))
        if key not in self._urls:
            if backend == "sqlite":
                url = f"sqlite:///{self._folder / f'store{len(self._urls)}.db'}"
            else:
                url = self._schemas.enter_context(pg_schema())
            ingest_files(url, files)
            self._urls[key] = url
        return self._urls[key]

    def copy(self, backend_url: str, files: Sequence[Path]) -> str:
        """`backend_url`, now holding `files`: on SQLite, where no store is yet, a copy of the
        shared store's file; elsewhere ingested there."""
        target = Path(backend_url.removeprefix("sqlite:///"))
        if not backend_url.startswith("sqlite:///") or target.exists():  # appended to
            ingest_files(backend_url, files)
            return backend_url
        shutil.copyfile(self.shared(backend_url, files).removeprefix("sqlite:///"), target)
        return backend_url

    def close(self) -> None:
        self._schemas.close()
