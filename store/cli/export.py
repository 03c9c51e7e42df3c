"""`core-audit export`: one record kind as CSV or JSONL, streamed, filtered as the API filters."""

from __future__ import annotations

import csv
import functools
import io
import itertools
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import click
import orjson
from sqlalchemy import Connection
from sqlalchemy.exc import DatabaseError

from store.cli.options import db_option, open_store
from store.db.damage import damage_said
from store.db.queries.errors import QueryError
from store.db.queries.exports import EXPORT_KINDS, ExportFilter, export_lines, export_rows
from store.db.queries.ledger import consistency_proof
from store.model.spreadsheet_cells import neutralized_rows


@click.command()
@click.argument("kind", type=click.Choice(list(EXPORT_KINDS)))
@db_option
@click.option("--filter", "filter_json", metavar="JSON", default=None,
              help='The GraphQL filter input of KIND as JSON, e.g. \'{"kind": ["MISSING_ROLE"]}\''
                   " (occurrences: their residual's ResidualFilter).")
@click.option("--format", "output_format", type=click.Choice(["csv", "jsonl"]), required=True,
              help="csv: a header row, RFC 4180 quoting; jsonl: one object per line.")
@click.option("--as-of", "as_of", type=click.IntRange(min=0), default=None, metavar="N",
              help="The store as it was at tree size N (0 or a recorded head's size, e.g. a "
                   "checkpoint's).")
@click.option("--since", "since", type=click.IntRange(min=0), default=None, metavar="N",
              help="Only records appended after tree size N (0 or a recorded head's size): "
                   "what changed since a checkpoint an auditor holds.")
@click.option("--proof", "proof_out", type=click.Path(dir_okay=False, path_type=Path),
              default=None, metavar="FILE",
              help="With --since: write FILE, the proof that the records exported are the "
                   "leaves of KIND's table between size N and the --as-of size (or the "
                   "newest): `verify-proof FILE --records EXPORT.jsonl` checks it.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to FILE (replaced only once complete); default: standard output.")
@click.option("--csv-raw", "csv_raw", is_flag=True,
              help="CSV: write every cell as stored, also one a spreadsheet would run as a "
                   "formula (starting with = + - @, tab or CR), which is otherwise written "
                   "with a ' in front.")
def export(kind: str, db: str | None, filter_json: str | None, output_format: str,
           as_of: int | None, since: int | None, proof_out: Path | None,
           out: Path | None, csv_raw: bool) -> None:
    """Write every stored record of KIND (residuals, occurrences, assessments, surfaces,
    sightings, turns, batches, turn-constructions, turn-assessments, tree-heads) matching
    --filter, in append order, one row per record and one column per stored column.
    Streamed: memory stays flat however many rows.

    Sightings are the surfaces' (filtered by their surface), occurrences the residuals';
    turn-constructions (what each journal turn's construction evidence came to) and
    turn-assessments (its links to its assessments), batches and tree heads take no filter
    (tree heads in tree-size order).

    Values as stored (enum values lower case, as CORE writes them, which --filter takes
    too), so a record less its seq is its `log` entry's row; JSONL nests the lists and
    objects a record holds (evidence spans, missing bindings, domains, chain ids,
    checked-against files: the row keeps them as canonical JSON text, which CSV writes).
    --filter is read exactly as the API reads the kind's filter input; a bad one exits 2
    naming the field. --as-of takes 0 or a
    recorded head's size; another size exits 2 naming the nearest heads. CSV: a header row,
    RFC 4180 quoting (CRLF, "" inside quoted cells), true/false, an empty cell for null and
    for an empty string (JSONL keeps them apart). JSONL: one object per line, the CSV
    header's keys. CSV cells that a spreadsheet would run as a formula (text starting with
    =, +, -, @, a tab or a carriage return) get a ' in front, as OWASP recommends against CSV
    injection; --csv-raw writes them as stored. --since N --as-of M: the records appended
    between those two tree heads; with --proof, the proof that the tree of M extends the tree
    of N and lists every leaf between them (`verify-proof FILE --records EXPORT.jsonl`: the
    export is exactly the leaves of KIND's table between them).
    """
    if proof_out is not None and since is None:
        raise click.UsageError("--proof needs --since")
    if csv_raw and output_format != "csv":
        raise click.UsageError("--csv-raw is for --format csv")
    where = _filter(kind, filter_json)
    write = (functools.partial(_write_csv, raw=csv_raw) if output_format == "csv"
             else _write_jsonl)
    with open_store(db, read_only=True) as store, store.engine.connect() as connection:
        try:
            try:
                lines = export_lines(connection, kind, output_format, where, as_of, since,
                                     csv_raw=csv_raw)
                rows = (export_rows(connection, kind, where, as_of, since) if lines is None
                        else None)
                if proof_out is not None:
                    consistency_proof(connection, since or 0, as_of)  # the sizes, checked
            except QueryError as exc:  # checked before anything is written
                if str(exc).startswith(_FILTER_BOUNDS):  # a filter's bound, not the tree's
                    raise click.BadParameter(str(exc), param_hint="'--filter'") from None
                raise click.BadParameter(str(exc).removeprefix("asOf: "),
                                         param_hint="'--as-of' or '--since'") from None
            if proof_out is not None:
                _write_since_proof(connection, proof_out, kind, filter_json is not None,
                                   since or 0, as_of)
            with _output(out) as stream:
                if lines is not None:
                    count = _write_lines(kind, output_format, lines, stream)
                else:
                    assert rows is not None
                    count = write(kind, rows, stream)
        except (DatabaseError, UnicodeDecodeError) as exc:  # a malformed page, say: --out
            # is left as it was
            raise click.ClickException(f"{store.url}: {damage_said(exc)}") from exc
    if out is not None:
        click.echo(f"{count} {kind} written to {out}", err=True)


# Filter fields whose bounds the query layer checks (their messages start with the name).
_FILTER_BOUNDS = ("timeFrom: ", "timeTo: ", "batchIdFrom: ", "batchIdTo: ")


def _write_since_proof(connection: Connection, path: Path, kind: str, filtered: bool,
                       first: int, second: int | None) -> None:
    """The proof file, written beside `path` and moved into place once complete."""
    from store.db.queries.since_proofs import write_since_proof

    table = EXPORT_KINDS[kind].table.name
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("wb") as stream:
            write_since_proof(connection, stream, kind, table, filtered, first, second)
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise click.ClickException(f"{path}: cannot write the proof: {exc.strerror}") from exc


def _filter(kind: str, filter_json: str | None) -> ExportFilter | None:
    if filter_json is None:
        return None
    from store.api.filter_json import FilterInputError, filter_from_json  # loads strawberry

    filter_type = EXPORT_KINDS[kind].filter_type
    if filter_type is None:
        raise click.BadParameter(f"{kind} take no filter", param_hint="'--filter'")
    try:
        return filter_from_json(filter_json, filter_type)
    except FilterInputError as exc:
        raise click.BadParameter(str(exc), param_hint="'--filter'") from None


@contextmanager
def _output(out: Path | None) -> Iterator[IO[bytes]]:
    """Standard output, or FILE written beside it and moved into place only when complete."""
    if out is None:
        try:
            yield sys.stdout.buffer
            sys.stdout.buffer.flush()
        except BrokenPipeError:  # `| head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    partial = out.with_name(out.name + ".partial")
    try:
        with partial.open("wb") as stream:
            yield stream
        os.replace(partial, out)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise click.ClickException(f"{out}: cannot write: {exc.strerror}") from exc
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


_JSON_BOOLEAN = {True: "true", False: "false", None: None}
_CHUNK_ROWS = 2000
T = TypeVar("T")


def _json_booleans(rows: Iterable[Sequence[Any]], positions: list[int]
                   ) -> Iterator[Sequence[Any]]:
    """true/false as JSON spells them, not Python's True/False (null stays an empty cell)."""
    for row in rows:
        cells = list(row)
        for i in positions:
            cells[i] = _JSON_BOOLEAN[cells[i]]
        yield cells


def _write_csv(kind: str, rows: Iterable[Sequence[Any]], stream: IO[bytes], *,
               raw: bool = False) -> int:
    booleans = EXPORT_KINDS[kind].boolean_columns
    if booleans:
        rows = _json_booleans(rows, booleans)
    if not raw:
        rows = neutralized_rows(rows, EXPORT_KINDS[kind].text_columns)
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
    writer = csv.writer(text)  # RFC 4180: CRLF line ends, quotes doubled inside quoted cells
    writer.writerow(EXPORT_KINDS[kind].columns)
    count = 0
    for chunk in _chunks(rows):
        writer.writerows(chunk)
        count += len(chunk)
    text.flush()
    text.detach()  # the caller closes the byte stream
    return count


def _write_lines(kind: str, output_format: str, chunks: Iterable[list[bytes]],
                 stream: IO[bytes]) -> int:
    """Lines SQLite finished (export_lines): written a chunk at a time, the CSV header first."""
    end = b"\r\n" if output_format == "csv" else b"\n"
    if output_format == "csv":
        stream.write(",".join(EXPORT_KINDS[kind].columns).encode() + end)
    count = 0
    try:
        for lines in chunks:
            lines.append(b"")  # for the last line's end
            data = end.join(lines)
            try:  # SQLite hands text back as stored: damaged bytes would pass through unread
                data.decode("utf-8")
            except UnicodeDecodeError:
                raise click.ClickException(_not_utf8(kind, output_format, lines, count, end,
                                                     stream)) from None
            count += len(lines) - 1
            stream.write(data)
    finally:  # its cursor closed now, while the connection is open
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    return count


def _not_utf8(kind: str, output_format: str, lines: list[bytes], before: int, end: bytes,
              stream: IO[bytes]) -> str:
    """The lines before the first that is not UTF-8 written; which record that is, by its
    seq, and where."""
    for index, line in enumerate(lines):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            stream.write(b"".join(good + end for good in lines[:index]))
            number = before + index + 1
            text = line.decode("utf-8", errors="replace")
            if output_format == "jsonl":
                seq = orjson.loads(text.encode()).get("seq")
            else:
                [cells] = list(csv.reader(io.StringIO(text, newline="")))
                seq = cells[EXPORT_KINDS[kind].columns.index("seq")]
            return (f"{kind}: record {number} of the export (seq {seq}) holds bytes that are "
                    f"not UTF-8 ({exc.reason} at byte {exc.start} of its line): the store is "
                    f"damaged; the export stopped after {number - 1} records; "
                    "run `core-audit verify` on it")
    raise AssertionError("a chunk that is not UTF-8 has a line that is not")


def _chunks(rows: Iterable[T]) -> Iterator[list[T]]:
    """Rows a few thousand at a time: one call per chunk, not per row, where it can."""
    rows = iter(rows)
    while chunk := list(itertools.islice(rows, _CHUNK_ROWS)):
        yield chunk


def _write_jsonl(kind: str, rows: Iterable[Sequence[Any]], stream: IO[bytes]) -> int:
    export_kind = EXPORT_KINDS[kind]
    columns = export_kind.columns
    nested = export_kind.json_columns
    dumps, newline, write = orjson.dumps, orjson.OPT_APPEND_NEWLINE, stream.write
    count = 0
    for chunk in _chunks(rows):
        for row in chunk:  # a write per line into the buffered stream: cheaper than a join
            write(dumps(export_kind.jsonl_row(row) if nested
                        else dict(zip(columns, row, strict=True)), option=newline))
        count += len(chunk)
    return count
