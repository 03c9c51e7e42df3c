"""The `core-audit` command: thin; every command calls the library.

Commands are imported when run (the pip way): `core-audit --help` lists them from the table
below and loads none, so it imports neither SQLAlchemy, strawberry nor the migrations; a
command loads only its own module. A test holds each summary to its command's own help.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any, NamedTuple

import click

from store import __version__
from store.errors import CoreAuditError, one_line


class CommandEntry(NamedTuple):
    module: str
    attribute: str
    summary: str  # the first sentence of the command's help: what `--help` lists
    hidden: bool = False


COMMANDS: dict[str, CommandEntry] = {
    "project": CommandEntry("store.cli.project", "project", "Project CORE assessments (JSONL "
                            "frames or bare assessments) into residuals."),
    "ingest": CommandEntry("store.cli.ingest", "ingest", "Append CORE frames, assessments or "
                           "surface records from PATHS (`-` = stdin)."),
    "follow": CommandEntry("store.cli.follow", "follow", "Tail Workbench journals (or any "
                           "JSONL input `ingest` takes) at PATHS: each time a file holds new "
                           "complete lines, they become a batch, as `ingest PATH` of the "
                           "grown file would."),
    "verify": CommandEntry("store.cli.verify", "verify", "Recompute every leaf, the tree and "
                           "its heads from the rows; check keys, triggers and the file; with "
                           "--checkpoint, prove the store extends it."),
    "checkpoint": CommandEntry("store.cli.checkpoints", "checkpoint", "Print the newest tree "
                               "head as a C2SP tlog-checkpoint."),
    "checkpoints": CommandEntry("store.cli.checkpoints", "checkpoints", "List the signed "
                                "checkpoints this store issued and kept, newest first, with "
                                "who signed and which witnesses cosigned; `verify` checks the "
                                "store extends every one."),
    "witness": CommandEntry("store.cli.witness", "witness", "Witness other logs: cosign "
                            "their checkpoints once each is shown to extend the last."),
    "tiles": CommandEntry("store.cli.tiles", "tiles", "Write the log as C2SP tlog-tiles static "
                          "files: serve DIR as the log's URL prefix."),
    "keygen": CommandEntry("store.cli.keygen", "keygen", "Make a new Ed25519 key NAME: sign "
                           "checkpoints with `checkpoint --key PREFIX.key`, check them with "
                           "`verify --checkpoint FILE --key PREFIX.pub`."),
    "prove": CommandEntry("store.cli.prove", "prove", "Print an RFC 9162 inclusion proof of "
                          "one record (or leaf), or a consistency proof, as JSON; check it "
                          "offline against a checkpoint with `core-audit verify-proof`."),
    "verify-proof": CommandEntry("store.cli.verify_proof", "verify_proof", "Check a "
                                 "`core-audit prove` proof, offline (no store, no network): a "
                                 "JSON proof against --checkpoint (inclusion of an entry in, or "
                                 "consistency of an older tree with, its tree), or a C2SP "
                                 "tlog-proof bundle (`prove --bundle`) against the keys given."),
    "log": CommandEntry("store.cli.log", "log", 'Print leaves START..END-1 as JSONL {"index": '
                        'i, "entry": "<entry>"}: leaf i\'s hash is SHA-256(0x00 ‖ entry as '
                        'UTF-8).'),
    "export": CommandEntry("store.cli.export", "export", "Write every stored record of KIND "
                           "(residuals, occurrences, assessments, surfaces, sightings, turns, "
                           "batches, turn-constructions, turn-assessments, tree-heads) matching "
                           "--filter, in append order, one row per record and one column per "
                           "stored column."),
    "db": CommandEntry("store.cli.db", "db", "Upgrade, downgrade and inspect the store's "
                       "schema revision."),
    "copy": CommandEntry("store.cli.copy", "copy", "Copy every row, id, leaf and tree head "
                         "from one store to another, from one snapshot of the source, "
                         "verified before it is committed; idempotent when re-run."),
    "corpus": CommandEntry("store.cli.teaching", "corpus", "Reviewed teaching corpora "
                           "(ADR-0052)."),
    "surface": CommandEntry("store.cli.teaching", "surface", "Compose the teaching-grounded "
                            "surface for SUBJECT and print it with its provenance."),
    "serve": CommandEntry("store.cli.serve", "serve", "Serve the query-only GraphQL API at "
                          "/graphql and the auditor's console at / (the store is opened "
                          "read-only)."),
    "trusted-documents": CommandEntry("store.cli.trusted_documents", "trusted_documents",
                                      "Print the manifest of the trusted documents in DIR, as "
                                      "JSON."),
    "query": CommandEntry("store.cli.query", "query", "Run the GraphQL DOCUMENT (or --file) "
                          "against the store; print the JSON result."),
    "schema": CommandEntry("store.cli.schema", "schema", "Print the GraphQL schema as SDL: "
                           "`core-audit schema > graphql/schema.graphql`."),
    "demo": CommandEntry("store.cli.demo", "demo", "Ingest the bundled examples into PATH "
                         "(again is a counted no-op) and serve them."),
    "cli-reference": CommandEntry("store.cli.reference", "cli_reference", "Print the command "
                                  "reference (docs/cli.md's generated part).", hidden=True),
}


class _LazyCommands(MutableMapping[str, click.Command]):
    """click's `Group.commands`, importing a command's module the first time it is looked up."""

    def __init__(self, table: dict[str, CommandEntry]) -> None:
        self._table = table
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is None:
            entry = self._table[name]  # KeyError for an unknown name, as a dict would
            command = getattr(importlib.import_module(entry.module), entry.attribute)
            assert isinstance(command, click.Command), entry
            self._loaded[name] = command
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self._loaded.pop(name, None)
        self._table = {key: entry for key, entry in self._table.items() if key != name}

    def __iter__(self) -> Iterator[str]:
        yield from self._table
        yield from (name for name in self._loaded if name not in self._table)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def summary(self, name: str) -> click.Command:
        """What `--help` shows for NAME, without importing it unless it is loaded already."""
        entry = self._table.get(name)
        if name in self._loaded or entry is None:
            return self[name]
        return click.Command(name, help=entry.summary, hidden=entry.hidden)


class _CommandGroup(click.Group):
    """Any error a command lets out is one line (exit status 1), never a traceback: the
    package's errors as their diagnostics, a database's as "cannot be read", anything else
    named by its type; every URL's password is masked in all of them."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CoreAuditError as exc:
            raise click.ClickException(exc.diagnostics()) from exc
        except click.ClickException as exc:
            exc.message = one_line(exc.message)  # type: ignore[misc]
            raise
        except (click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            raise click.ClickException(_unexpected(ctx, exc)) from exc


    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        commands = self.commands
        if not isinstance(commands, _LazyCommands):
            return super().format_commands(ctx, formatter)
        shown = [(name, commands.summary(name)) for name in self.list_commands(ctx)]
        shown = [(name, command) for name, command in shown if not command.hidden]
        if shown:
            limit = formatter.width - 6 - max(len(name) for name, _ in shown)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit))
                                    for name, command in shown])


@click.group(cls=_CommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="core-audit")
def main() -> None:
    """Append-only audit store for CORE's residuals and teaching-grounded surfaces."""


main.commands = _LazyCommands(COMMANDS)


def _unexpected(ctx: click.Context, exc: Exception) -> str:
    sub = ctx.invoked_subcommand
    where = "the store" if sub is None else f"core-audit {sub}"
    orig = getattr(exc, "orig", None)  # a driver's error, wrapped by SQLAlchemy
    if orig is not None:
        return one_line(f"{where}: the store cannot be read: {type(orig).__name__}: {orig}")[:500]
    return one_line(f"{where}: {type(exc).__name__}: {exc}")[:500]
