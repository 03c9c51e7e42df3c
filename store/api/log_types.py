"""GraphQL types for the transparency log (RFC 9162): the tree head, checkpoint and proofs."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from store.api.context import RequestContext
from store.api.log_index import LogIndex
from store.api.record_views import RecordView
from store.db import queries
from store.db.log.kept_checkpoints import KeptCheckpoint, kept_checkpoints
from store.db.queries import ledger as ledger_queries
from store.model.checkpoint import Checkpoint

INCLUSION_HELP = ("RFC 9162 proof that this record is a leaf of the tree of treeSize leaves "
                  "(default: the newest tree head, or the asOf the record was read at). "
                  "Computed only when asked; null with an error for a treeSize out of range.")


@strawberry.type(description="RFC 9162 section 2.1.3: a leaf, its entry and the path to a root.")
class InclusionProof(RecordView):
    leaf_index: LogIndex
    tree_size: LogIndex
    entry: str = strawberry.field(
        description="The leaf's canonical JSON; leafHash = SHA-256(0x00 ‖ its UTF-8 bytes).")
    leaf_hash: str
    inclusion_path: list[str] = strawberry.field(description="Hex hashes, leaf side first.")
    root_hash: str



@strawberry.type(description="RFC 9162 section 2.1.4: the tree of `second` leaves extends the "
                             "tree of `first`.")
class ConsistencyProof(RecordView):
    first: LogIndex
    second: LogIndex
    first_root: str
    second_root: str
    consistency_path: list[str] = strawberry.field(description="Hex hashes, deepest first.")



async def record_inclusion(info: Info[RequestContext, None], table: str, key: str,
                           tree_size: int | None) -> InclusionProof:
    """The inclusion proof of the `table` row keyed `key`, which a resolver has just read."""
    proof = await info.context.run(queries.inclusion_proof, table, (key,), tree_size)
    if proof is None:  # the row was read a moment ago; rows are never deleted
        raise queries.QueryError(f"no {table} row {key}")
    return InclusionProof.of(proof)


MAX_CHECKPOINTS = 100


@strawberry.type(description="A signed checkpoint the store issued and kept, with the "
                             "witnesses' cosignatures appended since.")
class KeptCheckpointView:
    checkpoint_id: int = strawberry.field(description="1, 2, ... in the order they were kept.")
    tree_size: LogIndex
    root_hash: str
    signers: list[str] = strawberry.field(description="The log keys' names that signed it.")
    cosigners: list[str] = strawberry.field(description="The witnesses that cosigned it.")
    note: str = strawberry.field(description="The C2SP checkpoint note with every signature "
                                             "and cosignature line: check it against a policy.")

    @classmethod
    def of(cls, kept: KeptCheckpoint) -> KeptCheckpointView:
        return cls(checkpoint_id=kept.checkpoint_id, tree_size=LogIndex(kept.tree_size),
                   root_hash=kept.root_hash, signers=list(kept.signers),
                   cosigners=list(kept.cosigners), note=kept.note)
def inclusion_field(table: str, key: str) -> Any:
    """A record view's inclusionProof field: the proof of its `table` row keyed by its `key`
    field, against the tree it was read as of unless treeSize names another."""

    async def inclusion_proof(self: Any, info: Info[RequestContext, None],
                              tree_size: LogIndex | None = None) -> InclusionProof | None:
        return await record_inclusion(info, table, str(getattr(self, key)),
                                      self.as_of if tree_size is None else tree_size)

    return strawberry.field(inclusion_proof, description=INCLUSION_HELP)


@strawberry.type(description="The transparency log (RFC 9162): every stored row is a leaf.")
class Ledger:
    tree_size: LogIndex = strawberry.field(
        description="Leaves: the stored rows, in append order.")
    root_hash: str = strawberry.field(description="The tree's root, 64 hex digits.")
    origin: str | None = strawberry.field(
        description="The origin line of this store's checkpoints (fixed by the first one).")

    @strawberry.field(description="This tree head (the newest, or the one asOf named) as an "
                                  "unsigned C2SP checkpoint; null until `core-audit "
                                  "checkpoint` has fixed the origin.")
    def checkpoint(self) -> str | None:
        if self.origin is None:  # the server is read-only: it never chooses an origin
            return None
        return Checkpoint(self.origin, self.tree_size, bytes.fromhex(self.root_hash)
                          ).unsigned_note()

    @strawberry.field(description="Proof that this tree head extends the tree of fromSize "
                                  "leaves.")
    async def consistency_proof(self, info: Info[RequestContext, None], from_size: LogIndex
                                ) -> ConsistencyProof | None:  # nullable: an error stays here
        # to this head's size, not the newest: a batch may have landed since it was read
        proof = await info.context.run(queries.consistency_proof, from_size, self.tree_size)
        return ConsistencyProof.of(proof)

    @strawberry.field(description="Signed checkpoints kept by `core-audit checkpoint --key`, "
                                  "newest first, of trees no larger than this head; `before`: "
                                  f"only ids below it; `first`: at most {MAX_CHECKPOINTS}.")
    async def checkpoints(self, info: Info[RequestContext, None], first: int = 20,
                          before: int | None = None) -> list[KeptCheckpointView]:
        if not 0 <= first <= MAX_CHECKPOINTS:
            refused = queries.LimitExceeded if first > 0 else queries.QueryError
            raise refused(f"first: must be between 0 and {MAX_CHECKPOINTS}, got {first}")
        found = await info.context.run(kept_checkpoints, limit=first, before=before,
                                       max_size=self.tree_size)
        return [KeptCheckpointView.of(kept) for kept in found]


@strawberry.type(description="A leaf of the log: its index and its entry (the row's canonical "
                             "JSON; leaf hash = SHA-256(0x00 ‖ entry)).")
class LogEntry:
    leaf_index: LogIndex
    entry: str


@strawberry.type(description="What was appended between two tree sizes: every leaf from "
                             "fromSize to toSize, in order (one page), and the RFC 9162 proof "
                             "that the later tree extends the earlier one.")
class Changes:
    from_size: LogIndex
    to_size: LogIndex
    from_root: str
    to_root: str
    consistency_path: list[str] = strawberry.field(description="Hex hashes, deepest first.")
    entries: list[LogEntry]
    next_from_size: LogIndex | None = strawberry.field(
        description="Where the next page starts (ask changes(fromSize: this) for it); null "
                    f"when this page reaches the size asked for. A page holds at most "
                    f"{ledger_queries.MAX_CHANGES} entries, toSize being its own end.")

    @classmethod
    def of(cls, found: ledger_queries.Changes) -> Changes:
        proof = found.proof
        return cls(from_size=LogIndex(proof.first), to_size=LogIndex(proof.second),
                   from_root=proof.first_root,
                   to_root=proof.second_root, consistency_path=proof.consistency_path,
                   entries=[LogEntry(leaf_index=LogIndex(i), entry=e) for i, e in found.entries],
                   next_from_size=None if found.next_from is None else LogIndex(found.next_from))
