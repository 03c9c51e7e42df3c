"""A record page's inclusion proof (checked in the browser by static/proof-check.js) and the
proof downloads: the JSON proof file and the C2SP tlog-proof bundle `prove --bundle` writes."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from store.console.parameters import ParameterError, integer
from store.console.record_keys import RECORD_KINDS, not_found, record_key, then
from store.db import queries
from store.db.log.kept_checkpoints import KeptCheckpoint, kept_checkpoints
from store.db.queries import InclusionProof
from store.db.queries.bundles import bundle_checkpoint, proof_bundle
from store.db.queries.ledger import note_origin
from store.model.proof_bundle import SUFFIX
from store.model.proof_file import checkpoint_note, proof_file

if TYPE_CHECKING:
    from store.console.pages import Console, Head


def proof_context(connection: Connection, request: Request, head: Head, console: Console,
                   kind: str, key: str | int) -> dict[str, Any]:
    table = RECORD_KINDS[kind][0]
    proof = queries.inclusion_proof(connection, table, (key,), head.size, blocks=console.blocks)
    if proof is None:
        raise not_found(f"no {RECORD_KINDS[kind][2].lower()} {key}")
    base = request.scope.get("root_path", "")
    suffix = "" if head.as_of is None else f"?asOf={head.as_of}"
    return {"proof": proof, "proof_script": True,
            "proof_href": f"{base}/proofs/{kind}/{key}.json{suffix}",
            "signed": signed_checkpoint(connection, head),
            "bundle": _bundle_offer(connection, head, kind, key, proof.leaf_index, base)}


def signed_json(signed: KeptCheckpoint | None) -> dict[str, Any] | None:
    """The signed checkpoint a page shows, in its JSON."""
    if signed is None:
        return None
    return {"checkpointId": signed.checkpoint_id, "treeSize": signed.tree_size,
            "rootHash": signed.root_hash, "signers": list(signed.signers),
            "cosigners": list(signed.cosigners), "note": signed.note}


def signed_checkpoint(connection: Connection, head: Head) -> KeptCheckpoint | None:
    """The signed checkpoint a page offers the browser to check its tree head against: the
    newest kept one (at asOf=N, the newest of a tree of at most N leaves, which no later
    signing changes). The browser checks its signature and cosignatures against the keys its
    auditor pinned, and a consistency proof between its size and the page's."""
    found = kept_checkpoints(connection, limit=1, max_size=head.as_of)
    return found[0] if found else None


def consistency_download(connection: Connection, request: Request, head: Head,
                         console: Console) -> Response:
    """`/proofs/consistency.json?from=A&to=B`: the RFC 9162 proof that the tree of B leaves
    extends that of A (A <= B <= the newest head), for the browser's own checks against roots
    it holds (the roots in the answer are the server's word only)."""
    for name in request.query_params:
        if name not in ("from", "to"):
            raise ParameterError(name[:80], "not a parameter of a consistency proof; it "
                                 "takes from and to")
    sizes = []
    for name in ("from", "to"):
        text = request.query_params.get(name)
        if text is None:
            raise ParameterError(name, "required: a tree size")
        sizes.append(integer(text, name, 0, head.newest_size))
    if sizes[0] > sizes[1]:
        raise ParameterError("from", f"{sizes[0]} is larger than to ({sizes[1]})")
    try:
        proof = queries.consistency_proof(connection, sizes[0], sizes[1], blocks=console.blocks)
    except queries.QueryError as exc:
        raise ParameterError("from", str(exc).split(": ", 1)[-1]) from None
    return JSONResponse({"from": proof.first, "to": proof.second, "from_root": proof.first_root,
                         "to_root": proof.second_root, "path": proof.consistency_path})


def _bundle_offer(connection: Connection, head: Head, kind: str, key: str | int, leaf: int,
                  base: str) -> dict[str, Any]:
    """What "download proof" gives on this page: the C2SP tlog-proof bundle against the
    newest kept signed checkpoint (at asOf=N: the newest kept one of size N), what
    `prove --bundle FILE --<kind> ID [--tree-size N]` writes; or why there is none."""
    kept = bundle_checkpoint(connection, head.as_of)
    option = RECORD_KINDS[kind][3]
    command = (f"core-audit prove --{option} {key}" if option else
               f"core-audit prove --index {leaf}")
    command += (
("" if head.as_of is None else f" --tree-size {head.as_of}")
                + f" --bundle {_bundle_name(kind, key, kept.tree_size if kept else head.size)}")
    offer: dict[str, Any] = {"kept": kept, "command": command, "href": None, "reason": None,
                             "elsewhere": None}
    if kept is not None and leaf < kept.tree_size:
        suffix = "" if head.as_of is None else f"?asOf={head.as_of}"
        offer["href"] = f"{base}/proofs/{kind}/{key}.tlog-proof{suffix}"
        if kept.tree_size != head.size:
            offer["elsewhere"] = f"{base}/{kind}/{key}?asOf={kept.tree_size}"
        return offer
    if kept is not None:
        offer["reason"] = (f"leaf {leaf} was appended after the newest signed checkpoint "
                           f"(#{kept.checkpoint_id}, tree size {kept.tree_size}): "
                           "`core-audit checkpoint --key K` signs the newest tree head")
    elif head.as_of is not None:
        offer["reason"] = (f"this store keeps no signed checkpoint of tree size {head.as_of} "
                           "(a checkpoint signs the tree head newest when it is made)")
        # At or below N only: what an immutable page links to must not change later.
        covering = [c for c in kept_checkpoints(connection, limit=1, max_size=head.as_of)
                    if leaf < c.tree_size]
        if covering:
            offer["elsewhere"] = f"{base}/{kind}/{key}?asOf={covering[0].tree_size}"
    else:
        offer["reason"] = ("this store keeps no signed checkpoint yet: `core-audit checkpoint "
                           "--key K` signs the newest tree head and keeps it")
    return offer


def _bundle_name(kind: str, key: str | int, tree_size: int) -> str:
    return f"{RECORD_KINDS[kind][2].lower()}-{str(key)[:16]}-{tree_size}{SUFFIX}"


def bundle_download(connection: Connection, request: Request, head: Head,
                    console: Console) -> Response:
    """The record's C2SP tlog-proof bundle: byte for byte what `prove --bundle` writes."""
    kind, key = _download_key(request)
    try:
        text = proof_bundle(connection, table=RECORD_KINDS[kind][0], key=(key,),
                            tree_size=head.as_of)
    except queries.QueryError as exc:
        raise not_found(f"no signed proof of {RECORD_KINDS[kind][2].lower()} {key}: {exc}"
                         ) from None
    size = int(text.split("\n\n", 1)[1].split("\n")[1])  # the checkpoint's tree size
    return Response(text.encode("utf-8"), media_type="text/plain; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="{_bundle_name(kind, key, size)}"'})


def _download_key(request: Request) -> tuple[str, str | int]:
    kind = request.path_params["kind"]
    if kind not in RECORD_KINDS:
        raise not_found(f"no record kind {kind[:80]!r}: one of {', '.join(RECORD_KINDS)}")
    for name in request.query_params:
        if name != "asOf":
            raise ParameterError(name[:80], "not a parameter of a proof; it takes asOf")
    return kind, record_key(kind, request.path_params["key"])


def proof_download(connection: Connection, request: Request, head: Head,
                   console: Console) -> Response:
    kind, key = _download_key(request)
    table = RECORD_KINDS[kind][0]
    proof: InclusionProof | None = queries.inclusion_proof(connection, table, (key,),
                                                           head.size, blocks=console.blocks)
    if proof is None:
        raise not_found(f"no {RECORD_KINDS[kind][2].lower()} {key}" + then(head))
    status = queries.ledger_status(connection)
    note = checkpoint_note(note_origin(connection, status.origin), proof.tree_size,
                           proof.root_hash)
    body = proof_file(dataclasses.asdict(proof), note)
    name = f"{RECORD_KINDS[kind][2].lower()}-{str(key)[:16]}-proof-{proof.tree_size}.json"
    return Response(body, media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})
