"""LeafBlocks (hashes kept across requests by a server) never changes a proof: every leaf's
inclusion proof and every consistency proof equal the uncached ones, also once the store grew
past a block the cache had seen partly filled."""

from __future__ import annotations

import orjson
from backends import EXAMPLE_FILES

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.log.stored_log import LeafBlocks


def _all_proofs(db: AuditStore, blocks: LeafBlocks | None) -> list[object]:
    def read(connection: object) -> list[object]:
        size = db.tree_head().size
        leaves = [*range(0, size, 13), size - 1]  # a spread, the last (partial) block's end
        return [*(queries.inclusion_proof_at(connection, i) for i in leaves),
                *(queries.consistency_proof(connection, first, blocks=blocks)
                  for first in range(0, size + 1, 29))] if blocks is None else [
            *(queries.inclusion_proof(connection, *_key(connection, i), blocks=blocks)
              for i in leaves),
            *(queries.consistency_proof(connection, first, blocks=blocks)
              for first in range(0, size + 1, 29))]
    return db.execute(read)


def _key(connection: object, index: int) -> tuple[str, tuple[object, ...]]:
    from sqlalchemy import select

    from store.db.schema.record_kinds import LEDGERED_KEYS
    from store.db.schema.tables import metadata

    for table, key in LEDGERED_KEYS.items():
        t = metadata.tables[table]
        row = connection.execute(  # type: ignore[attr-defined]
            select(*(t.c[k] for k in key)).where(t.c.seq == index + 1)).first()
        if row is not None:
            return table, tuple(row)
    raise AssertionError(index)


def _frames(start: int, count: int) -> list[bytes]:
    """Frames of 4 leaves each (assessment, residual, occurrence... ), each problem its own."""
    return [orjson.dumps({"problem_text": f"Tom gained {n} apples.", "contract_assessments": [{
        "candidate_organ": "unary_delta_transition", "missing_bindings": ["direction_unbound"],
        "unresolved_hazards": [], "runnable": False, "explanation": f"frame {n}",
        "evidence_spans": [{"text": "gained", "start": 4, "end": 10,
                            "sentence_index": None}]}]}) + b"\n"
        for n in range(start, start + count)]


def test_cached_hashes_give_the_same_proofs_as_the_store_grows(tmp_path: object) -> None:
    """Batches of 300 and 150 frames: past full 256-leaf blocks (stored subtrees) and a
    partly filled block that later fills."""
    url = f"sqlite:///{tmp_path}/blocks.db"
    blocks = LeafBlocks(capacity=2, subtrees=3)  # tiny: eviction and refills happen too
    batches = [EXAMPLE_FILES[0].read_bytes().splitlines(keepends=True), _frames(0, 100),
               _frames(100, 50)]
    for number, lines in enumerate(batches):
        with AuditStore.open(url) as store:
            store.ingest(lines, source=f"batch-{number}.jsonl")
        with AuditStore.open(url, read_only=True, time_limit=600) as db:
            assert _all_proofs(db, blocks) == _all_proofs(db, None)
            assert _all_proofs(db, blocks) == _all_proofs(db, None)  # now from the cache
