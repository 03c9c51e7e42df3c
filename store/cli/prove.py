"""`core-audit prove`: RFC 9162 inclusion and consistency proofs, as JSON `verify-proof` checks."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from sqlalchemy import Connection

from store.cli.options import db_option, open_store
from store.db import queries
from store.db.log.stored_log import LogError
from store.db.queries.ledger import note_origin
from store.db.schema.record_kinds import KINDS_BY_TABLE
from store.model.proof_file import checkpoint_note, proof_file

_HEX_ID = re.compile(r"[0-9a-f]{64}", re.ASCII)
# option name -> its listing: every listing with a get-by-key (`one`), in the API's order.
_RECORDS: dict[str, queries.RecordListing[Any, Any]] = {
    listing.one: listing for listing in queries.LISTINGS.values() if listing.one is not None}
_CHOICES = ", ".join(f"--{name}" for name in (*_RECORDS, "index")) + " or --consistency"


def _record_options(command: Callable[..., None]) -> Callable[..., None]:
    """An --<one> ID option per listing, in their order."""
    for name, listing in reversed(_RECORDS.items()):
        command = click.option(f"--{name}", metavar="ID",
                               help=f"Prove this {listing.key} is in the log.")(command)
    return command


def _prove(connection: Connection, ids: dict[str, str | None], index: int | None,
           consistency: int | None, tree_size: int | None
           ) -> queries.InclusionProof | queries.ConsistencyProof:
    if consistency is not None:
        return queries.consistency_proof(connection, consistency, tree_size)
    if index is not None:
        return queries.inclusion_proof_at(connection, index, tree_size)
    kind, value = next((k, v) for k, v in ids.items() if v is not None)
    table, id_name = _RECORDS[kind].table.name, _RECORDS[kind].key
    if KINDS_BY_TABLE[table].content_ids is not None and not _HEX_ID.fullmatch(value):
        raise queries.QueryError(f"--{kind}: a {id_name} is 64 lowercase hex digits, got "
                                 f"{value[:80]!r}")
    proof = queries.inclusion_proof(connection, table, (value,), tree_size)
    if proof is None:
        raise queries.QueryError(f"no {kind} with {id_name} {value} in this store")
    return proof


@click.command()
@db_option
@_record_options
@click.option("--index", type=int, metavar="N", help="Prove leaf N (any table) is in the log.")
@click.option("--consistency", type=int, metavar="FIRST",
              help="Prove the tree extends the tree of its first FIRST leaves.")
@click.option("--tree-size", type=int, metavar="N",
              help="Prove against the tree of N leaves (default: the newest tree head).")
@click.option("--with-checkpoint", is_flag=True,
              help="Print an inclusion proof as a proof file (format core-audit-proof/1, what "
                   "the console's 'download proof' gives): the proof and the unsigned "
                   "checkpoint of its tree.")
@click.option("--bundle", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write a C2SP tlog-proof bundle (entry, inclusion path and the newest kept "
                   "checkpoint with its cosignatures; with --tree-size, the newest kept one of "
                   "that size) to FILE instead of JSON.")
def prove(db: str | None, index: int | None, consistency: int | None, tree_size: int | None,
          with_checkpoint: bool, bundle: Path | None, **ids: str | None) -> None:
    """Print an RFC 9162 inclusion proof of one record (or leaf), or a consistency proof, as
    JSON; check it offline against a checkpoint with `core-audit verify-proof`.

    Inclusion: leaf_index, tree_size, entry, leaf_hash, inclusion_path, root_hash.
    Consistency (--consistency FIRST): first, second, first_root, second_root,
    consistency_path. Default tree: the newest head. An unknown id or a size out of range
    exits 1. With --bundle, one file `verify-proof FILE --key K` checks with no store and no
    network: the proof is against the newest kept signed checkpoint (with --tree-size N,
    the newest kept one of tree size N: what the console's "download proof" gives at asOf=N).
    """
    chosen = [v for v in (*ids.values(), index, consistency) if v is not None]
    if len(chosen) != 1:
        raise click.UsageError(f"give exactly one of {_CHOICES}")
    if with_checkpoint and consistency is not None:
        raise click.UsageError("--with-checkpoint: a proof file holds an inclusion proof")
    if bundle is not None and (consistency is not None or with_checkpoint):
        raise click.UsageError("--bundle proves a record in a kept signed checkpoint: "
                               "not with --consistency or --with-checkpoint")
    if bundle is not None:
        _write_bundle(db, ids, index, tree_size, bundle)
        return
    with open_store(db, read_only=True) as store, store.engine.connect() as connection:
        try:
            proof = _prove(connection, ids, index, consistency, tree_size)
        except queries.QueryError as exc:
            raise click.ClickException(str(exc)) from exc
        except LogError as exc:  # a damaged store: say what is missing, point at verify
            raise click.ClickException(f"{exc}; run `core-audit verify`") from exc
        origin = note_origin(connection, store.origin()) if with_checkpoint else ""
    if with_checkpoint:
        assert isinstance(proof, queries.InclusionProof)
        note = checkpoint_note(origin, proof.tree_size, proof.root_hash)
        sys.stdout.buffer.write(proof_file(dataclasses.asdict(proof), note))
        return
    click.echo(json.dumps(dataclasses.asdict(proof), ensure_ascii=False, indent=2))


def _write_bundle(db: str | None, ids: dict[str, str | None], index: int | None,
                  tree_size: int | None, path: Path) -> None:
    from store.db.queries.bundles import proof_bundle

    with open_store(db, read_only=True) as store, store.engine.connect() as connection:
        try:
            if index is not None:
                text = proof_bundle(connection, index=index, tree_size=tree_size)
            else:
                kind, value = next((k, v) for k, v in ids.items() if v is not None)
                table, id_name = _RECORDS[kind].table.name, _RECORDS[kind].key
                if KINDS_BY_TABLE[table].content_ids is not None and \
                        not _HEX_ID.fullmatch(value):
                    raise queries.QueryError(f"--{kind}: a {id_name} is 64 lowercase hex "
                                             f"digits, got {value[:80]!r}")
                text = proof_bundle(connection, table=table, key=(value,),
                                    tree_size=tree_size)
        except queries.QueryError as exc:
            raise click.ClickException(str(exc)) from exc
        except LogError as exc:
            raise click.ClickException(f"{exc}; run `core-audit verify`") from exc
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"{path}: cannot write: {exc.strerror}") from exc
    index_line = text.split("\n")[2 if text.split("\n")[1].startswith("extra ") else 1]
    click.echo(f"wrote {path}: {index_line.replace('index', 'leaf')}, checked by "
               "`core-audit verify-proof FILE --key LOG.pub`")
