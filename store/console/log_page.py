"""`/log`: tree heads with their batches, the checkpoint, and a consistency proof from a tree
size the auditor kept (checked in the browser, and against the root they kept, if given)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from starlette.requests import Request

from store.console.page_json import Links
from store.console.parameters import ParameterError, integer
from store.console.proofs import signed_checkpoint, signed_json
from store.db import queries
from store.db.queries import MAX_KEY
from store.db.queries.browsing import tree_heads_page
from store.db.queries.ledger import note_origin
from store.model.proof_file import checkpoint_note

if TYPE_CHECKING:
    from store.console.pages import Console, Head

_HEX = re.compile(r"[0-9a-f]{64}", re.ASCII)
PARAMETERS = ("from", "root", "below")


def read_log(connection: Connection, request: Request, head: Head,
             console: Console) -> dict[str, Any]:
    query = request.query_params
    for name in query:
        if name not in PARAMETERS:
            raise ParameterError(name[:80], f"not a parameter of /log; it takes "
                                 f"{', '.join(PARAMETERS)}")
    ledger = queries.ledger_status(connection)
    below_text = query.get("below") or None
    below = None if below_text is None else integer(below_text, "below", 0, MAX_KEY)
    heads = tree_heads_page(connection, below)
    base = request.scope.get("root_path", "")
    context: dict[str, Any] = {
        "title": "Log", "ledger": ledger, "heads": heads,
        "note_origin": note_origin(connection, ledger.origin),
        "checkpoint_note": checkpoint_note(note_origin(connection, ledger.origin),
                                           ledger.tree_size, ledger.root_hash),
        "older": f"{base}/log?below={heads[-1].tree_size}" if len(heads) == 50 else None,
        "form_from": query.get("from", ""), "form_root": query.get("root", ""),
        "consistency": None, "kept_root": None, "proof_script": True,
        "signed": signed_checkpoint(connection, head),
    }
    first_text = (query.get("from") or "").strip()
    root_text = (query.get("root") or "").strip().lower()
    if root_text and not _HEX.fullmatch(root_text):
        raise ParameterError("root", "a root hash is 64 hex digits")
    if first_text:
        first = integer(first_text, "from", 0, ledger.tree_size)
        try:
            proof = queries.consistency_proof(connection, first, ledger.tree_size,
                                              blocks=console.blocks)
        except queries.QueryError as exc:
            raise ParameterError("from", str(exc).split(": ", 1)[-1]) from None
        context.update(consistency=proof, kept_root=root_text or None,
                       kept_root_matches=root_text == proof.first_root)
    return context


def read_keys(connection: Connection, request: Request, head: Head,
              console: Console) -> dict[str, Any]:
    """`/keys`: the log and witness keys the auditor pins in this browser (kept in its
    localStorage by static/keys.js). The server offers none: a key it offered would be its
    own word, so the page only reads what the auditor pastes or puts in the URL's fragment."""
    for name in request.query_params:
        raise ParameterError(name[:80], "not a parameter of /keys; it takes none (give keys "
                             "after '#', which never reaches the server)")
    return {"title": "Keys", "keys_script": True}


def log_json(context: dict[str, Any], links: Links) -> dict[str, Any]:
    """`/log` as JSON: the newest head and its unsigned note, the signed checkpoint, the tree
    heads of the page (newest first) and, given `from`, the consistency proof."""
    ledger = context["ledger"]
    proof = context["consistency"]
    return {
        "log": {"treeSize": ledger.tree_size, "rootHash": ledger.root_hash,
                "origin": ledger.origin, "checkpoint": context["checkpoint_note"]},
        "signedCheckpoint": signed_json(context["signed"]),
        "treeHeads": [{"treeSize": h.tree_size, "rootHash": h.root_hash, "batchId": h.batch_id,
                       "batch": links.plain(f"/batches/{h.batch_id}"), "source": h.source,
                       "ingestedAt": h.ingested_at,
                       "overview": links.plain(f"/?asOf={h.tree_size}")}
                      for h in context["heads"]],
        "older": context["older"],
        "consistency": None if proof is None else {
            "from": proof.first, "to": proof.second, "fromRoot": proof.first_root,
            "toRoot": proof.second_root, "path": proof.consistency_path,
            "keptRoot": context["kept_root"],
            "keptRootMatches": context.get("kept_root_matches") if context["kept_root"]
            else None},
    }


def keys_json(context: dict[str, Any], links: Links) -> dict[str, Any]:
    """`/keys` as JSON: the keys are pinned in the browser, never offered by the server."""
    return {"keys": [], "note": "keys are pinned in the browser (its localStorage) by the "
                                "auditor; this server offers none"}
