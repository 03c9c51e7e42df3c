"""`core-audit corpus check` and `core-audit surface`: ADR-0052's corpora and surface."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson

from store.cli.options import db_option, open_store
from store.errors import BatchRejected
from store.model.corpora import CorpusError, TeachingIntent, TeachingRegistry
from store.model.locations import (
    CORE_ENV,
    PACKS_ENV,
    TEACHING_ENV,
    core_dir,
    packs_dir,
    teaching_dir,
)
from store.model.packs import PackError
from store.model.surface_forms import DEFAULT_MAX_DEPTH, SurfaceForm
from store.model.teaching_registry import load_core_registry, load_teaching_registry
from store.model.teaching_surface import (
    EMPTY_VAULT,
    OUTPUT_LANGUAGE,
    NotEngaged,
    engage_teaching_surface,
    render_chain,
)

F = TypeVar("F", bound=Callable[..., Any])

_DIR = click.Path(file_okay=False, path_type=Path)


def data_dir_options(command: F) -> F:
    command = click.option(
        "--core", "core", type=_DIR, default=None,
        help=f"A CORE checkout: its registry, teaching/ corpora and packs/data/ (default:"
             f" ${CORE_ENV} when neither --packs nor --teaching is given).",
    )(command)
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


def load_registry_or_exit(packs: Path | None, teaching: Path | None, core: Path | None
                          ) -> TeachingRegistry:
    """The corpora and packs the options name, loaded as they are now; else a clean error."""
    checkout = core_dir(core) if packs is None and teaching is None else core
    try:
        if checkout is not None:
            return load_core_registry(checkout)
        return load_teaching_registry(teaching_dir(teaching), packs_dir(packs))
    except (CorpusError, PackError) as exc:
        raise click.ClickException(str(exc)) from exc


@click.group()
def corpus() -> None:
    """Reviewed teaching corpora (ADR-0052)."""


@corpus.command("check")
@data_dir_options
@click.option("-v", "--verbose", is_flag=True,
              help="Also list valid chains that do not resolve (overridden, shadowed).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead.")
def check(packs: Path | None, teaching: Path | None, core: Path | None, verbose: bool,
          as_json: bool) -> None:
    """List every corpus or lexicon line the loader refuses or CORE treats outside ADR-0052,
    as FILE:LINE: error|warning: reason.

    Exit status 1 when there are errors (or a file cannot be used at all), else 0: warnings
    (other intents, connectives outside the 26, retired lines) never fail the check.
    """
    registry = load_registry_or_exit(packs, teaching, core)
    errors, warnings = registry.errors, registry.warnings
    inactive_chains = registry.inactive
    if as_json:
        click.echo(orjson.dumps({
            "errors": [str(line) for line in errors],
            "warnings": [str(line) for line in warnings],
            "chains": len(registry.chains),
            "cross_pack_chains": len(registry.cross_pack.chains) if registry.cross_pack else 0,
            "corpora": [c.corpus_id for c in registry.corpora],
            "packs": sorted(registry.packs),
            "inactive": [f"{i.chain.source}:{i.chain.line}: {i.reason}"
                         for i in inactive_chains],
        }, option=orjson.OPT_INDENT_2).decode())
        sys.exit(1 if errors else 0)
    for line in registry.dropped:
        click.echo(f"{line.source}{':' + str(line.line) if line.line else ''}:"
                   f" {line.severity.value}: {line.reason}")
    if verbose:
        for inactive in inactive_chains:
            chain = inactive.chain
            click.echo(f"{chain.source}:{chain.line}: inactive: {inactive.reason}")
    corpora = len(registry.corpora)
    click.echo(
        f"checked {corpora} {'corpus' if corpora == 1 else 'corpora'}"
        f" ({len(registry.packs)} {'pack' if len(registry.packs) == 1 else 'packs'}):"
        f" {len(registry.chains)} chains resolve, {len(inactive_chains)} inactive,"
        f" {len(errors)} errors, {len(warnings)} warnings"
    )
    sys.exit(1 if errors else 0)


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
    return {"batch_id": summary.batch_id, "new_rows": summary.new_rows,
            "already_in": summary.already_in}


@click.command()
@click.argument("subject")
@click.option("--intent", required=True,
              type=click.Choice([i.value for i in TeachingIntent], case_sensitive=False),
              help="The question the surface answers (ADR-0052's two intents).")
@click.option("--gate-source", default=EMPTY_VAULT, show_default=True,
              help="The UnknownDomainGate source of the turn.")
@click.option("--language", default=OUTPUT_LANGUAGE, show_default=True,
              help="The runtime's output language.")
@click.option("--form", "form", default=SurfaceForm.SINGLE.value, show_default=True,
              type=click.Choice([SurfaceForm.SINGLE.value, SurfaceForm.COMPOSED.value,
                                 SurfaceForm.TRANSITIVE.value]),
              help="CORE's surface mode; a cross-pack chain always has its own form.")
@click.option("--max-depth", "max_depth", type=int, default=DEFAULT_MAX_DEPTH,
              show_default=True, help="Transitive mode's hop limit (transitive_max_depth).")
@data_dir_options
@click.option("--record", is_flag=True, help="Also append the surface record to the store.")
@db_option
def surface(subject: str, intent: str, gate_source: str, language: str, form: str,
            max_depth: int, packs: Path | None, teaching: Path | None, core: Path | None,
            record: bool, db: str | None) -> None:
    """Compose the teaching-grounded surface for SUBJECT and print it with its provenance.

    Prints one JSON object; when the branch does not engage, "surface" is null,
    "grounding_source" is "none" and "reason" says why (exit status 0). With --record
    the outcome is appended to the store (--db) as a surface record, checked like any other.
    """
    registry = load_registry_or_exit(packs, teaching, core)
    outcome = engage_teaching_surface(registry, subject, intent,
                                      gate_source=gate_source, output_language=language)
    if not isinstance(outcome, NotEngaged):
        chain = registry.chain(subject, intent)
        assert chain is not None  # engaged, so the chain resolved
        outcome = render_chain(registry, chain, SurfaceForm(form), max_depth)
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
