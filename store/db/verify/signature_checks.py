"""`verify --key/--witness-key/--policy`: every checkpoint the store kept is checked against
the keys the auditor holds, not only against the stored log. Each kept checkpoint row's note
must be signed by a listed log key (whose name is the store's origin) and each kept
cosignature row must verify against a listed witness key; a row that does not is named.
Without keys, what no key can check still is: kept checkpoints grow with their ids (id and
tree size), so the newest is the largest, and the one the log serves is the largest."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sqlalchemy import Connection

from store.db.log.kept_checkpoints import KeptCheckpoint, kept_checkpoints
from store.db.verify.problems import Problem
from store.db.write.origin_batch import logged_origins
from store.errors import CheckpointError
from store.model.checkpoint import VerifierKey, parse_checkpoint
from store.model.cosignature import check_note, cosignature_time, is_witness_line


def growth_problems(kept: Sequence[KeptCheckpoint]) -> Iterator[Problem]:
    """Kept checkpoints in id order must not shrink: a later id of a smaller tree is an old
    checkpoint appended again (it would freeze the log's served head)."""
    largest: KeptCheckpoint | None = None
    for row in kept:
        if largest is not None and row.tree_size < largest.tree_size:
            yield Problem(None, "checkpoints", f"checkpoint {row.checkpoint_id}",
                          f"tree size {row.tree_size} is below the {largest.tree_size} of "
                          f"earlier checkpoint {largest.checkpoint_id}: kept checkpoints must "
                          "grow (an old checkpoint appended again?)")
            continue
        largest = row


def signature_problems(connection: Connection, origin: str | None,
                       log_keys: Sequence[VerifierKey], witness_keys: Sequence[VerifierKey]
                       ) -> Iterator[Problem]:
    """Each kept checkpoint row signed by one of `log_keys` (its name the origin) and each
    cosignature row verifying against the witness key of its name."""
    for kept in kept_checkpoints(connection, newest_first=False):
        where = f"checkpoint {kept.checkpoint_id}"
        try:
            checked = check_note(kept.signed_note, log_keys)
        except CheckpointError as exc:
            yield Problem(None, "checkpoints", where, f"not signed by a key given: {exc}")
            continue
        if not any(key.name == checked.checkpoint.origin for key in checked.log_signers):
            yield Problem(None, "checkpoints", where,
                          f"signed by {', '.join(k.name for k in checked.log_signers)}, not "
                          f"by a key named for its origin {checked.checkpoint.origin!r}")
        if origin is not None and checked.checkpoint.origin != origin:
            yield Problem(None, "checkpoints", where,
                          f"of origin {checked.checkpoint.origin!r}, not the store's {origin!r}")
        body = parse_checkpoint(kept.signed_note).text
        for line_text, witness_name in zip(kept.cosignature_lines, kept.cosigners,
                                           strict=True):
            place = f"{where} witness {witness_name}"
            try:
                line = parse_checkpoint(body + "\n" + line_text).signatures[0]
            except CheckpointError as exc:
                yield Problem(None, "checkpoint_cosignatures", place, f"not a signature line: "
                                                                      f"{exc}")
                continue
            keys = [w for w in witness_keys if is_witness_line(line, w)]
            if not keys:
                if any(w.name == line.name for w in witness_keys):  # the name, another key
                    yield Problem(None, "checkpoint_cosignatures", place,
                                  f"key ID {line.key_hash.hex()} is not witness "
                                  f"{line.name}'s key given")
                continue  # a witness the auditor did not list: nothing to check it with
            try:
                cosignature_time(line, body, keys[0])
            except CheckpointError as exc:
                yield Problem(None, "checkpoint_cosignatures", place, str(exc))


def origin_problems(connection: Connection, origin: str | None) -> Iterator[Problem]:
    """`log_origin` must hold the origin the log's own leaf chose (store.db.write.origin_batch);
    a second choice logged later is named. A store that chose its origin before the choice
    was logged has no such leaf: its kept checkpoints' origins are all there is to check."""
    logged = logged_origins(connection)
    if not logged:
        return
    batch_id, chosen = logged[0]
    if origin != chosen:
        yield Problem(None, "log_origin", repr(origin),
                      f"the origin chosen in the log (batch {batch_id}) is {chosen!r}, "
                      f"log_origin holds {origin!r} (rewritten out of band)")
    for later, other in logged[1:]:
        yield Problem(None, "ingest_batches", f"batch {later}",
                      f"a second origin choice ({other!r}) after batch {batch_id}'s "
                      f"{chosen!r}: the origin is chosen once")
