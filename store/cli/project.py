"""`core-audit project`: assessments in, residuals out, as JSONL."""

from __future__ import annotations

import sys

import click
import orjson

from store.cli.inputs import display_name, open_input
from store.model.fields import RecordError
from store.model.jsonl import iter_json_lines
from store.model.parsing import parse_frame
from store.model.projection import project_residuals


@click.command()
@click.argument("path", default="-")
def project(path: str) -> None:
    """Project CORE assessments (JSONL frames or bare assessments) into residuals.

    Reads PATH (or standard input with `-`), writes one residual a line to
    standard output. An invalid line stops the run with exit status 2.
    """
    name = display_name(path)
    out = sys.stdout.buffer
    with open_input(path) as stream:
        for line in iter_json_lines(stream):
            if line.error is not None:
                _fail(name, line.number, line.error)
            try:
                frame = parse_frame(line.value)
            except RecordError as exc:
                _fail(name, line.number, str(exc))
            for residual in project_residuals(frame.assessments):
                out.write(orjson.dumps(residual.as_dict()) + b"\n")
    out.flush()


def _fail(name: str, number: int, reason: str) -> None:
    sys.stdout.buffer.flush()
    click.echo(f"{name}:{number}: {reason}", err=True)
    sys.exit(2)
