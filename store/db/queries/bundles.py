"""Offline proof bundles (C2SP tlog-proof) of stored records, against a kept checkpoint: what
`core-audit prove --bundle` writes and the console's "download proof" serves."""

from __future__ import annotations

from sqlalchemy import Connection

from store.db.log.kept_checkpoints import (
    KeptCheckpoint,
    kept_checkpoint,
    kept_checkpoints,
    newest_kept_checkpoint,
)
from store.db.queries.errors import QueryError
from store.db.queries.ledger import inclusion_proof, inclusion_proof_at
from store.db.queries.records import InclusionProof
from store.model.proof_bundle import write_bundle


def bundle_checkpoint(connection: Connection, tree_size: int | None = None
                      ) -> KeptCheckpoint | None:
    """The kept checkpoint a bundle is proven against: the newest, or the newest of tree size
    `tree_size` (a checkpoint signs the newest head, so ids grow with sizes)."""
    if tree_size is None:
        return newest_kept_checkpoint(connection)
    found = kept_checkpoints(connection, limit=1, max_size=tree_size)
    return found[0] if found and found[0].tree_size == tree_size else None


def proof_bundle(connection: Connection, *, table: str | None = None,
                 key: tuple[object, ...] | None = None, index: int | None = None,
                 checkpoint_id: int | None = None, tree_size: int | None = None) -> str:
    """The tlog-proof text of the `table` row keyed `key` (or of leaf `index`) in the tree
    of kept checkpoint `checkpoint_id` (default: the newest, or the newest of `tree_size`),
    cosignatures included. QueryError when there is no such row, no such kept checkpoint,
    or the row is newer."""
    kept = (bundle_checkpoint(connection, tree_size) if checkpoint_id is None
            else kept_checkpoint(connection, checkpoint_id))
    if kept is None:
        raise QueryError(f"no kept checkpoint {checkpoint_id}" if checkpoint_id is not None
                         else "no kept signed checkpoint" if tree_size is None else
                         f"no kept signed checkpoint of tree size {tree_size}")
    proof: InclusionProof | None
    if index is not None:
        if index >= kept.tree_size:
            raise QueryError(f"leaf {index} is not in the kept checkpoint of size "
                             f"{kept.tree_size}: sign a newer one (core-audit checkpoint "
                             "--key K)")
        proof = inclusion_proof_at(connection, index, kept.tree_size)
    else:
        assert table is not None and key is not None
        found = inclusion_proof(connection, table, key)
        if found is None:
            raise QueryError(f"no {table} row {'/'.join(map(str, key))}")
        if found.leaf_index >= kept.tree_size:
            raise QueryError(f"leaf {found.leaf_index} was appended after the kept checkpoint "
                             f"of size {kept.tree_size}: sign a newer one (core-audit "
                             "checkpoint --key K)")
        proof = inclusion_proof(connection, table, key, kept.tree_size)
    assert proof is not None and proof.root_hash == kept.root_hash
    return write_bundle(proof.leaf_index, [bytes.fromhex(h) for h in proof.inclusion_path],
                        kept.note, proof.entry.encode("utf-8"))
