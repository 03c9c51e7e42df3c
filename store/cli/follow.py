"""`core-audit follow`: tail journals (any JSONL `ingest` takes); new complete lines become a
batch, through the writer `ingest` uses."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, cast

import click
import orjson

from store.cli.ingest import echo_rejection
from store.cli.options import db_option, open_store
from store.cli.teaching import data_dir_options
from store.db.write.batch_summary import BatchSummary
from store.db.write.followed_file import FileChanged, FollowedFile
from store.errors import BatchRejected
from store.model.corpora import CorpusError, TeachingRegistry
from store.model.packs import PackError
from store.model.teaching_surface import default_registry

if TYPE_CHECKING:
    from store.db.audit_store import AuditStore

DEFAULT_INTERVAL = 0.1  # seconds between two stat() calls of each file
_EMPTY = "no records: the input is empty"


class Abandoned(BaseException):
    """A second SIGTERM or Ctrl-C during a batch: the batch's transaction is rolled back."""


class StopRequest:
    """SIGTERM and SIGINT ask to stop: between batches at once, during one once it is written;
    a second signal during a batch abandons it (rolled back, nothing of it written)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self.in_batch = False

    def __call__(self, signum: int, _: FrameType | None) -> None:
        if self.signal is not None and self.in_batch:
            raise Abandoned
        self.signal = signum

    @contextmanager
    def installed(self) -> Iterator[None]:
        previous = {s: signal.signal(s, self) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


@click.command()
@click.argument("paths", nargs=-1, required=True)
@db_option
@click.option("--interval", type=click.FloatRange(0.01, 60), default=DEFAULT_INTERVAL,
              show_default=True, metavar="SECONDS", help="How often each file is stat()ed.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object a line for each batch written or found stored.")
@data_dir_options
def follow(paths: tuple[str, ...], db: str | None, interval: float, as_json: bool,
           packs: Path | None, teaching: Path | None, core: Path | None) -> None:
    """Tail Workbench journals (or any JSONL input `ingest` takes) at PATHS: each time a file
    holds new complete lines, they become a batch, as `ingest PATH` of the grown file would.

    A last line without its newline is not a line until the newline arrives. After a restart
    or a crash nothing is duplicated or skipped: the first batch of a run is the whole file,
    as `ingest` re-reads a grown file (lines stored before are counted present, the rest
    written); later ones are the new lines, every earlier line checked unchanged. A file that
    no longer holds a line it held (truncated, rewritten, replaced by other content) and a
    line `ingest` would reject stop the command, naming the line, with nothing of that batch
    written (exit status 2). SIGTERM or Ctrl-C stops it once the
    current batch is written (exit status 0); a second one abandons that batch, rolled back.
    """
    def registry() -> TeachingRegistry:
        try:
            return default_registry(packs, teaching, core)
        except (CorpusError, PackError) as exc:
            raise click.ClickException(f"cannot check teaching surfaces: {exc}") from exc

    for path in paths:  # as `ingest` checks them: a mistake in the command creates no store
        if path == "-":
            raise click.ClickException("-: standard input cannot be followed; name a file")
        if not os.access(path, os.R_OK):
            reason = "No such file or directory" if not os.path.exists(path) else "not readable"
            raise click.ClickException(f"{path}: cannot open: {reason}")
    if core is not None:
        registry()
    files = [FollowedFile(path) for path in dict.fromkeys(paths)]
    stop = StopRequest()
    refused = False
    with open_store(db) as store, stop.installed():
        try:
            while stop.signal is None and not refused:
                for followed in files:
                    if stop.signal is not None:
                        break
                    refused = not _poll(store, followed, stop, registry, as_json)
                    if refused:
                        break
                if not refused:
                    time.sleep(interval)
        except Abandoned:
            click.echo("follow: stopped during a batch: it was abandoned, nothing of it "
                       "written", err=True)
            sys.exit(128 + (stop.signal or signal.SIGTERM))
    if refused:
        sys.exit(2)
    if stop.signal is not None:
        click.echo(f"follow: stopped ({signal.Signals(stop.signal).name})", err=True)


def _poll(store: AuditStore, followed: FollowedFile, stop: StopRequest,
          registry: Callable[[], TeachingRegistry], as_json: bool) -> bool:
    """One look at one file, and its batch if it holds new lines; False if it was refused."""
    try:
        if not followed.changed() or _only_a_partial_line(followed):
            return True
        with open(followed.path, "rb") as stream:
            reader = followed.reader(stream)
            stop.in_batch = True
            try:
                # The writer reads through readline() only, as it reads any stream.
                summary = store.ingest(cast("IO[bytes]", reader), source=followed.path,
                                       registry=registry, parallel=False, start=reader.start)
            finally:
                stop.in_batch = False
    except FileChanged as exc:
        summary = BatchSummary(source=followed.path)
        summary.fail(exc.line, exc.reason)
        return _refused(summary, as_json)
    except BatchRejected as exc:
        if exc.summary.failure_count == 1 and exc.summary.failures[0].reason == _EMPTY:
            followed.advance(reader)  # blank lines only, so far: nothing to store yet
            return True
        return _refused(exc.summary, as_json)
    except FileNotFoundError:
        return True  # gone between stat() and open(): the next poll says what it is
    first = followed.lines + 1
    replaced = followed.advance(reader)
    if replaced:
        click.echo(f"{followed.path}: replaced by a file holding the {first - 1} line(s) "
                   "followed, and more: following it", err=True)
    if summary.lines >= first or summary.batch_id is not None:
        _report(summary, first, as_json)
    return True


def _only_a_partial_line(followed: FollowedFile) -> bool:
    """The same file, grown by bytes holding no newline: nothing to read yet (and no batch).
    Reads only what follows the lines followed."""
    now = followed.state()
    seen = followed.seen
    if now is None or seen is None or now[:2] != seen[:2] or now.size < followed.size:
        return False
    with open(followed.path, "rb") as stream:
        stream.seek(followed.size)
        while chunk := stream.read(1 << 16):
            if b"\n" in chunk:
                return False
    followed.seen = now
    return True


def _refused(summary: BatchSummary, as_json: bool) -> bool:
    if as_json:
        click.echo(orjson.dumps(summary.as_dict()).decode())
    echo_rejection(summary)
    return False


def _report(summary: BatchSummary, first: int, as_json: bool) -> None:
    if as_json:
        click.echo(orjson.dumps({**summary.as_dict(), "first_line": first}).decode())
        return
    lines = f"lines {first}-{summary.lines}" if summary.lines > first else f"line {first}"
    if summary.batch_id is None:
        click.echo(f"{summary.source}: {lines}: already stored, no batch written")
        return
    counts = ", ".join(f"{table} {c.new} new" for table, c in summary.tables.items() if c.new)
    click.echo(f"{summary.source}: batch {summary.batch_id}: {lines}: {counts}")
