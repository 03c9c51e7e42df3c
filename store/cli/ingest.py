"""`core-audit ingest`: append JSONL files, one batch each, all or nothing per file."""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack
from pathlib import Path

import click
import orjson
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TimeRemainingColumn
from sqlalchemy.exc import DBAPIError

from store.cli.inputs import display_name, open_input
from store.cli.options import db_option, open_store
from store.cli.teaching import data_dir_options
from store.db.write.batch_summary import BatchSummary
from store.errors import BatchRejected
from store.model.corpora import CorpusError, TeachingRegistry
from store.model.packs import PackError
from store.model.teaching_surface import default_registry


@click.command()
@click.argument("paths", nargs=-1, required=True)
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print a machine-readable summary.")
@data_dir_options
def ingest(paths: tuple[str, ...], db: str | None, as_json: bool,
           packs: Path | None, teaching: Path | None, core: Path | None) -> None:
    """Append CORE frames, assessments or surface records from PATHS (`-` = stdin).

    Each file is one batch, written in one transaction: a file with any bad line
    writes nothing, its bad lines are listed as PATH:LINE: reason, exit status 2.

    Records already stored are counted "present"; the same key with different content
    rejects the file. A file with nothing new writes no batch at all (no batch row, no tree
    head), and the summary names the batch that holds it: the earlier batch of the same
    input, else the batches holding its rows (--json: "batch_id": null, "already_in",
    "same_input"). Every input path (and --core) is checked before the store is opened: a
    mistake in the command creates no store. A progress bar on a terminal; a one-line
    summary, or --json.
    """
    summaries: list[BatchSummary] = []

    def registry() -> TeachingRegistry:
        # Teaching surfaces are checked against these corpora; loaded only if one arrives.
        try:
            return default_registry(packs, teaching, core)
        except (CorpusError, PackError) as exc:
            raise click.ClickException(f"cannot check teaching surfaces: {exc}") from exc

    # Inputs and a named checkout are checked first: a mistake creates no store.
    for path in paths:
        if path != "-" and not os.access(path, os.R_OK):
            reason = "No such file or directory" if not os.path.exists(path) else "not readable"
            raise click.ClickException(f"{path}: cannot open: {reason}")
    if core is not None:
        registry()
    with open_store(db) as store:
        for path in paths:
            name = display_name(path)
            with open_input(path) as stream, ExitStack() as stack:
                on_bytes = None
                if sys.stderr.isatty() and not as_json:
                    progress = stack.enter_context(_progress())
                    size = os.fstat(stream.fileno()).st_size if path != "-" else None
                    task = progress.add_task(name, total=size or None)
                    def on_bytes(n: int, task: TaskID = task,
                                 progress: Progress = progress) -> None:
                        progress.advance(task, n)
                try:
                    summaries.append(store.ingest(stream, source=name, on_bytes=on_bytes,
                                                  registry=registry))
                except BatchRejected as exc:
                    summaries.append(exc.summary)
                except DBAPIError as exc:
                    done = ", ".join(s.source for s in summaries if not s.rejected) or "none"
                    raise click.ClickException(
                        f"{name}: nothing written: the store refused the batch ({exc.orig}); "
                        f"files already ingested by this command: {done}"
                    ) from exc
    rejected = [s for s in summaries if s.rejected]
    if as_json:
        click.echo(orjson.dumps({
            "files": len(summaries),
            "rejected_files": len(rejected),
            "batches": [s.as_dict() for s in summaries],
        }, option=orjson.OPT_INDENT_2).decode())
    else:
        for summary in rejected:
            echo_rejection(summary)
        for summary in summaries:
            if summary.already_in:
                click.echo(_already_stored(summary))
        click.echo(_one_line(summaries))
    if rejected:
        sys.exit(2)


def echo_rejection(summary: BatchSummary) -> None:
    """On stderr: each bad line as PATH:LINE: reason, then that nothing was written."""
    for failure in summary.failures:
        click.echo(summary.describe(failure), err=True)
    hidden = summary.failure_count - len(summary.failures)
    if hidden:
        click.echo(f"{summary.source}: ... and {hidden} more bad line(s)", err=True)
    click.echo(f"{summary.source}: rejected, nothing written", err=True)


def _progress() -> Progress:
    return Progress(
        "[progress.description]{task.description}", BarColumn(), DownloadColumn(),
        TimeRemainingColumn(), transient=True, redirect_stdout=False,
    )


def _already_stored(summary: BatchSummary) -> str:
    if summary.same_input:
        where = f"the same input is batch {summary.already_in[0]}"
    else:
        where = "its rows are in batch(es) " + ", ".join(map(str, summary.already_in))
    return f"{summary.source}: already stored, no batch written: {where}"


def _one_line(summaries: list[BatchSummary]) -> str:
    accepted = [s for s in summaries if not s.rejected]
    lines = sum(s.lines for s in summaries)
    tables: dict[str, list[int]] = {}
    for summary in accepted:
        for table, counts in summary.tables.items():
            total = tables.setdefault(table, [0, 0])
            total[0] += counts.new
            total[1] += counts.present
    parts = ", ".join(f"{t} {new} new/{present} present" for t, (new, present) in tables.items()
                      if new or present)
    rejected = len(summaries) - len(accepted)
    present = (f"; {PRESENT_SAID}" if any(present for _, present in tables.values()) else "")
    return (f"{len(summaries)} file(s), {lines} line(s): {parts or 'no rows'}; "
            f"{rejected} file(s) rejected{present}")


# What a "present" count counts, said wherever one is shown.
PRESENT_SAID = ("present: rows already stored (by an earlier batch, or earlier in the same "
                "input), kept once and counted")
