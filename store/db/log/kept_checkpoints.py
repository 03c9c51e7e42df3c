"""Kept checkpoints: the signed checkpoints this store issued, each with the witnesses'
cosignatures appended beside it (tables `checkpoints` and `checkpoint_cosignatures`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, func, select

from store.db.schema.tables import checkpoint_cosignatures, checkpoints, tree_heads
from store.errors import CheckpointError
from store.model.checkpoint import parse_checkpoint


@dataclass(frozen=True, slots=True)
class KeptCheckpoint:
    checkpoint_id: int
    tree_size: int
    root_hash: str  # hex
    signers: tuple[str, ...]  # the log keys' names that signed
    signed_note: str  # as the log signed it
    cosignature_lines: tuple[str, ...]  # witnesses' lines, by witness name

    @property
    def cosigners(self) -> tuple[str, ...]:
        return tuple(line[2:].split(" ", 1)[0] for line in self.cosignature_lines)

    @property
    def note(self) -> str:
        """The note with every kept cosignature: what a verifier checks against a policy."""
        return self.signed_note + "".join(self.cosignature_lines)


def _kept(connection: Connection, rows: Sequence[tuple[int, int, str, str, str]]
          ) -> list[KeptCheckpoint]:
    ids = [row[0] for row in rows]
    lines: dict[int, list[str]] = {i: [] for i in ids}
    if ids:
        found = connection.execute(
            select(checkpoint_cosignatures.c.checkpoint_id, checkpoint_cosignatures.c.line)
            .where(checkpoint_cosignatures.c.checkpoint_id.in_(ids))
            .order_by(checkpoint_cosignatures.c.checkpoint_id, checkpoint_cosignatures.c.witness))
        for checkpoint_id, line in found:
            lines[checkpoint_id].append(line)
    return [KeptCheckpoint(i, size, root, tuple(signers.split()), note, tuple(lines[i]))
            for i, size, root, signers, note in rows]


_COLUMNS = (checkpoints.c.checkpoint_id, checkpoints.c.tree_size, checkpoints.c.root_hash,
            checkpoints.c.signers, checkpoints.c.note)


def kept_checkpoints(connection: Connection, *, limit: int | None = None,
                     before: int | None = None, newest_first: bool = True,
                     max_size: int | None = None) -> list[KeptCheckpoint]:
    """Kept checkpoints by id (newest first by default): those with an id below `before`,
    of a tree of at most `max_size` leaves."""
    query = select(*_COLUMNS)
    if before is not None:
        query = query.where(checkpoints.c.checkpoint_id < before)
    if max_size is not None:
        query = query.where(checkpoints.c.tree_size <= max_size)
    order = checkpoints.c.checkpoint_id
    query = query.order_by(order.desc() if newest_first else order)
    if limit is not None:
        query = query.limit(limit)
    return _kept(connection, [tuple(row) for row in connection.execute(query)])


def kept_checkpoint(connection: Connection, checkpoint_id: int) -> KeptCheckpoint | None:
    rows = connection.execute(select(*_COLUMNS).where(
        checkpoints.c.checkpoint_id == checkpoint_id)).all()
    found = _kept(connection, [tuple(row) for row in rows])
    return found[0] if found else None


CURRENT_CANDIDATES = 16  # rows looked at for the current checkpoint: bounds a request's work


def newest_kept_checkpoint(connection: Connection) -> KeptCheckpoint | None:
    """The log's current checkpoint: the kept one of the largest tree (of those, the newest
    id) whose size and root are a tree head the store recorded. Never simply the newest id:
    an old checkpoint appended again as the newest row must not freeze the log's head (verify
    names such a row)."""
    rows = connection.execute(
        select(*_COLUMNS).join(tree_heads, (tree_heads.c.tree_size == checkpoints.c.tree_size)
                               & (tree_heads.c.root_hash == checkpoints.c.root_hash))
        .order_by(checkpoints.c.tree_size.desc(), checkpoints.c.checkpoint_id.desc())
        .limit(CURRENT_CANDIDATES)).all()
    for kept in _kept(connection, [tuple(row) for row in rows]):
        try:
            found = parse_checkpoint(kept.signed_note).checkpoint
        except CheckpointError:
            continue
        if (found.size, found.root.hex()) == (kept.tree_size, kept.root_hash):
            return kept
    return None


def count_kept_checkpoints(connection: Connection) -> int:
    return int(connection.execute(select(func.count()).select_from(checkpoints)).scalar_one())


def next_checkpoint_id(connection: Connection) -> int:
    return int(connection.execute(
        select(func.coalesce(func.max(checkpoints.c.checkpoint_id), 0))).scalar_one()) + 1


def last_cosigned_size(connection: Connection, witness: str) -> int:
    """The largest kept checkpoint `witness` cosigned (0: none): where its tree likely is."""
    found = connection.execute(
        select(func.max(checkpoints.c.tree_size))
        .join(checkpoint_cosignatures,
              checkpoint_cosignatures.c.checkpoint_id == checkpoints.c.checkpoint_id)
        .where(checkpoint_cosignatures.c.witness == witness)).scalar()
    return int(found or 0)
