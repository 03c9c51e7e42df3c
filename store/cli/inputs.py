"""Opening CLI inputs: a path or `-` for standard input, always as bytes."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import click


@contextmanager
def open_input(path: str) -> Iterator[IO[bytes]]:
    if path == "-":
        yield sys.stdin.buffer
        return
    try:
        stream = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise click.ClickException(f"{path}: cannot open: {exc.strerror}") from exc
    with stream:
        yield stream


def display_name(path: str) -> str:
    return "<stdin>" if path == "-" else path
