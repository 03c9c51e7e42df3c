"""`verify` against checkpoints: the store must extend a checkpoint's tree (a consistency
proof from the stored log), and every checkpoint it signed and kept must be what its row says."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import Connection

from store.db.log.kept_checkpoints import kept_checkpoints
from store.db.log.stored_log import LogError, StoredLog, latest_head, stored_origin
from store.db.verify.problems import Problem
from store.db.verify.signature_checks import growth_problems, origin_problems
from store.errors import CheckpointError, StoreError
from store.model.checkpoint import Checkpoint, parse_checkpoint
from store.model.merkle import consistency_holds


def checkpoint_problems(connection: Connection, checkpoint: Checkpoint, table: str = "log",
                         where: str | None = None) -> Iterator[Problem]:
    """The store must extend the checkpoint's tree: a consistency proof from the stored log."""
    head = latest_head(connection)
    where = where or f"checkpoint {checkpoint.size}"
    if checkpoint.size > head.size:
        yield Problem(None, table, where, f"the checkpoint's tree has {checkpoint.size} "
                                          f"leaves, the store {head.size} (rows were removed)")
        return
    try:
        path = StoredLog(connection).consistency(checkpoint.size, head.size)
    except LogError as exc:
        yield Problem(None, table, where, f"cannot prove consistency: {exc}")
        return
    if not consistency_holds(checkpoint.size, head.size, checkpoint.root, head.root, path):
        yield Problem(None, table, where, "the store does not extend the checkpoint's tree "
                                          "(history was rewritten)")


def kept_checkpoint_problems(connection: Connection) -> Iterator[Problem]:
    """Every checkpoint the store signed and kept: its note is what its row says, of this
    log's origin, and the stored log extends its tree. A store that contradicts a checkpoint
    it signed is not intact."""
    try:
        origin: str | None = stored_origin(connection)
    except StoreError:  # two origins: reported with log_origin; check the rest regardless
        origin = None
    else:
        yield from origin_problems(connection, origin)
    every = kept_checkpoints(connection, newest_first=False)
    yield from growth_problems(every)
    for kept in every:
        where = f"checkpoint {kept.checkpoint_id}"
        try:
            parsed = parse_checkpoint(kept.note)
        except CheckpointError as exc:
            yield Problem(None, "checkpoints", where, f"kept note is not a checkpoint: {exc}")
            continue
        found = parsed.checkpoint
        names = tuple(s.name for s in parsed.signatures)
        if ((found.size, found.root.hex()) != (kept.tree_size, kept.root_hash)
                or (origin is not None and found.origin != origin)
                or names[:len(kept.signers)] != kept.signers):
            yield Problem(None, "checkpoints", where,
                          f"kept note (origin {found.origin!r}, size {found.size}, signed by "
                          f"{' '.join(names) or 'nobody'}) is not its row's (origin "
                          f"{origin!r}, size {kept.tree_size}, signed by "
                          f"{' '.join(kept.signers)})")
            continue
        yield from checkpoint_problems(connection, found, "checkpoints", where)
