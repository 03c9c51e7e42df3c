"""`core-audit corpus check` and `core-audit surface`: ADR-0052's corpora and surface."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson

from store.cli.options import db_option, open_store
from store.db.writer import BatchRejected
from store.model.corpora import (
    CorpusError,
    TeachingIntent,
    TeachingRegistry,
    load_teaching_registry,
)
from store.model.locations import PACKS_ENV, TEACHING_ENV, packs_dir, teaching_dir
from store.model.packs import PackError
from store.model.teaching_surface import (
    EMPTY_VAULT,
    OUTPUT_LANGUAGE,
    NotEngaged,
    engage_teaching_surface,
)

F = TypeVar("F", bound=Callable[..., Any])

_DIR = click.Path(file_okay=False, path_type=Path)


def data_dir_options(command: F) -> F:
    command = click.option(
        "--teaching", "teaching", type=_DIR, default=None,
        help=f"Teaching dir with corpora.json (default: ${TEACHING_ENV}, else the bundled"
             " copy, else the repository's teaching/).",
    )(command)
    return click.option(
        "--packs", "packs", type=_DIR, default=None,
        help=f"Folder of pack folders (default: ${PACKS_ENV}, else the bundled copy,"
             " else the repository's packs/).",
    )(command)


def _load(packs: Path | None, teaching: Path | None) -> TeachingRegistry:
    # Loaded fresh, not cached: a check must see the files as they are now.
    try:
        return load_teaching_registry(teaching_dir(teaching), packs_dir(packs))
    except (CorpusError, PackError) as exc:
        raise click.ClickException(str(exc)) from exc


@click.group()
def corpus() -> None:
    """Reviewed teaching corpora (ADR-0052)."""


@corpus.command("check")
@data_dir_options
@click.option("-v", "--verbose", is_flag=True,
              help="Also list valid chains that do not resolve (overridden, retired, shadowed).")
def check(packs: Path | None, teaching: Path | None, verbose: bool) -> None:
    """List every corpus or lexicon line the loader drops, as FILE:LINE: reason.

    Exit status 1 when any line was dropped or a file cannot be used at all, else 0.
    """
    registry = _load(packs, teaching)
    dropped = registry.dropped
    inactive_chains = registry.inactive
    for line in dropped:
        click.echo(str(line))
    if verbose:
        for inactive in inactive_chains:
            chain = inactive.chain
            click.echo(f"{chain.source}:{chain.line}: inactive: {inactive.reason}")
    corpora = len(registry.corpora)
    click.echo(
        f"checked {corpora} {'corpus' if corpora == 1 else 'corpora'}"
        f" ({len(registry.packs)} {'pack' if len(registry.packs) == 1 else 'packs'}):"
        f" {len(registry.chains)} chains resolve, {len(inactive_chains)} inactive,"
        f" {len(dropped)} lines dropped"
    )
    sys.exit(1 if dropped else 0)


def _record(payload: dict[str, Any], registry: TeachingRegistry, db: str | None) -> dict[str, Any]:
    """Append the outcome as a surface record, through the same path as `core-audit ingest`."""
    line = {key: payload[key] for key in ("grounding_source", "surface", "subject", "intent")}
    line.update({key: payload[key] for key in ("corpus_id", "chain_id") if key in payload})
    with open_store(db) as store:
        try:
            summary = store.ingest([orjson.dumps(line)], source="core-audit surface",
                                   registry=lambda: registry)
        except BatchRejected as exc:
            raise click.ClickException("; ".join(exc.summary.as_dict()["errors"])) from exc
    return {"batch_id": summary.batch_id,
            "new_rows": summary.new_rows}


@click.command()
@click.argument("subject")
@click.option("--intent", required=True,
              type=click.Choice([i.value for i in TeachingIntent], case_sensitive=False))
@click.option("--gate-source", default=EMPTY_VAULT, show_default=True,
              help="The UnknownDomainGate source of the turn.")
@click.option("--language", default=OUTPUT_LANGUAGE, show_default=True,
              help="The runtime's output language.")
@data_dir_options
@click.option("--record", is_flag=True, help="Also append the surface record to the store.")
@db_option
def surface(subject: str, intent: str, gate_source: str, language: str,
            packs: Path | None, teaching: Path | None, record: bool, db: str | None) -> None:
    """Compose the teaching-grounded surface for SUBJECT and print it with its provenance.

    Prints one JSON object; when the branch does not engage, "surface" is null,
    "grounding_source" is "none" and "reason" says why (exit status 0). With --record
    the outcome is appended to the store (--db) as a surface record, checked like any other.
    """
    registry = _load(packs, teaching)
    outcome = engage_teaching_surface(registry, subject, intent,
                                      gate_source=gate_source, output_language=language)
    if isinstance(outcome, NotEngaged):
        payload: dict[str, Any] = {
            "surface": None,
            "grounding_source": outcome.grounding_source.value,
            "reason": outcome.reason.value,
            "detail": outcome.detail,
            "subject": subject,
            "intent": intent,
        }
    else:
        payload = outcome.as_dict()
    if record:
        payload["recorded"] = _record(payload, registry, db)
    sys.stdout.buffer.write(orjson.dumps(payload) + b"\n")
    sys.stdout.buffer.flush()
