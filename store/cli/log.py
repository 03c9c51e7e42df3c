"""`core-audit log`: the log's entries in leaf order, as JSONL anyone can rebuild the tree from."""

from __future__ import annotations

import sys

import click
import orjson

from store.cli.options import db_option, open_store
from store.db import queries


@click.command()
@db_option
@click.option("--start", type=int, default=0, show_default=True, metavar="N",
              help="First leaf index.")
@click.option("--end", type=int, default=None, metavar="M",
              help="Stop before this leaf index (default: the newest tree head's size).")
def log(db: str | None, start: int, end: int | None) -> None:
    """Print leaves START..END-1 as JSONL {"index": i, "entry": "<entry>"}: leaf i's hash is
    SHA-256(0x00 ‖ entry as UTF-8). Streamed: memory stays flat however long the log."""
    out = sys.stdout.buffer  # bytes: no text layer between the entries and the output
    with open_store(db, read_only=True) as store, store.engine.connect() as connection:
        try:
            entries = queries.log_entries(connection, start, end)
        except queries.QueryError as exc:
            raise click.ClickException(str(exc)) from exc
        for index, entry in entries:
            # the entry as a JSON string: decoding it gives back exactly the hashed bytes
            out.write(orjson.dumps({"index": index, "entry": entry.decode("utf-8")}) + b"\n")
    out.flush()
