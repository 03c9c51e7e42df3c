"""Offline proof bundles (C2SP tlog-proof) of stored records, against a kept checkpoint: what
`core-audit prove --bundle` writes and the console's "download proof" serves."""

from __future__ import annotations

from sqlalchemy import Connection

from store.db.log.kept_checkpoints import kept_checkpoint, newest_kept_checkpoint
from store.db.queries.errors import QueryError
from store.db.queries.ledger import inclusion_proof, inclusion_proof_at
from store.db.queries.records import InclusionProof
from store.model.proof_bundle import write_bundle


def proof_bundle(connection: Connection, *, table: str | None = None,
                 key: tuple[object, ...] | None = None, index: int | None = None,
                 checkpoint_id: int | None = None) -> str:
    """The tlog-proof text of the `table` row keyed `key` (or of leaf `index`) in the tree
    of kept checkpoint `checkpoint_id` (default: the newest), cosignatures included.
    QueryError when there is no such row, no kept checkpoint, or the row is newer."""
    kept = (newest_kept_checkpoint(connection) if checkpoint_id is None
            else kept_checkpoint(connection, checkpoint_id))
    if kept is None:
        raise QueryError("no kept signed checkpoint" if checkpoint_id is None else
                         f"no kept checkpoint {checkpoint_id}")
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
