"""The transparency log: an RFC 9162 Merkle tree over every stored row replaces the per-row
hash chain (`ledger`).

Leaf order is the old seq; every id is kept. Before anything changes, each row's hash is
checked against its ledger entry and the chain is recomputed: a store whose rows do not match
their ledger is refused, not converted (a tampered store must not be blessed by a new tree).
Stored: full aligned subtrees of 2**8 leaves and more, and one tree head per batch.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from __future__ import annotations

import hashlib
import heapq
import json
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op
from append_only import (
    create_append_only_triggers,
    create_append_only_triggers_v2,
    drop_append_only_triggers,
)

from store.model.merkle import CompactRange, leaf_hash

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

SUBTREE_LEVEL = 8
GENESIS = "0" * 64
# The leaf tables at revision 0005 with their key columns (frozen here).
_LEAF_TABLES: dict[str, tuple[str, ...]] = {
    "ingest_batches": ("batch_id",),
    "contract_assessments": ("assessment_id",),
    "contract_residuals": ("residual_id",),
    "residual_occurrences": ("assessment_id", "ordinal"),
    "surface_records": ("surface_id",),
    "surface_occurrences": ("occurrence_id",),
    "turns": ("turn_key",),
}
_BOOLEANS = {"contract_assessments": {"runnable"}, "turns": {"refusal_emitted", "hedge_injected"}}
# Columns revision 0005 added: a null one is not part of its row's entry.
_LATE = {
    "surface_records": {"surface_form", "hops", "hop_chain_ids", "candidate_chain_ids",
                        "surface_prefix", "checked_against"},
    "surface_occurrences": {"turn_key"},
}


def _entry(table: str, row: dict[str, Any]) -> bytes:
    """The row's canonical JSON (docs/design.md): what its ledger row_hash hashed and its leaf."""
    late = _LATE.get(table, set())
    values = {k: v for k, v in row.items() if k != "seq" and not (v is None and k in late)}
    return json.dumps({"table": table, "row": values}, ensure_ascii=False,
                      separators=(",", ":"), sort_keys=True).encode("utf-8")


def _rows(bind: sa.Connection, table: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
    booleans = _BOOLEANS.get(table, set())
    # Options on the statement: on the connection they would stick to alembic's DDL too.
    result = bind.execute(sa.text(f"SELECT * FROM {table} ORDER BY seq")
                          .execution_options(yield_per=5000))
    for mapping in result.mappings():
        row = {k: (bool(v) if k in booleans and v is not None else v)
               for k, v in mapping.items()}
        yield row["seq"], table, row


def _leaves(bind: sa.Connection) -> Iterator[tuple[int, str, dict[str, Any]]]:
    return heapq.merge(*(_rows(bind, t) for t in _LEAF_TABLES), key=lambda item: item[0])


def _create_tables() -> None:
    op.create_table(
        "log_subtrees",
        sa.Column("level", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("start", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("level", "start", name="pk_log_subtrees"),
    )
    op.create_table(
        "tree_heads",
        sa.Column("batch_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("tree_size", sa.Integer(), nullable=False),
        sa.Column("root_hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("batch_id", name="pk_tree_heads"),
        sa.UniqueConstraint("tree_size", name="uq_tree_heads_tree_size"),
        sa.ForeignKeyConstraint(["batch_id"], ["ingest_batches.batch_id"],
                                name="fk_tree_heads_batch_id_ingest_batches",
                                deferrable=True, initially="DEFERRED"),
    )
    op.create_table(
        "log_origin",
        sa.Column("origin", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("origin", name="pk_log_origin"),
    )
    create_append_only_triggers_v2("log_subtrees", ("level", "start"))
    create_append_only_triggers_v2("tree_heads", ("batch_id",))
    create_append_only_triggers_v2("log_origin", ("origin",))


def upgrade() -> None:
    bind = op.get_bind()
    ledger = bind.execute(sa.text(
        "SELECT seq, table_name, row_key, row_hash, prev_hash, chain_hash FROM ledger "
        "ORDER BY seq").execution_options(yield_per=5000))
    chain = iter(ledger)
    tree = CompactRange()
    head = GENESIS
    subtrees: list[dict[str, Any]] = []
    heads: list[dict[str, Any]] = []
    for seq, table, row in _leaves(bind):
        entry = _entry(table, row)
        found = next(chain, None)
        key = "/".join(str(row[c]) for c in _LEAF_TABLES[table])
        digest = hashlib.sha256(entry).hexdigest()
        expected_chain = hashlib.sha256((head + digest).encode("ascii")).hexdigest()
        if (found is None or found.seq != seq or seq != tree.size + 1
                or found.table_name != table
                or found.row_key != key or found.row_hash != digest
                or found.prev_hash != head or found.chain_hash != expected_chain):
            raise RuntimeError(
                f"cannot convert the ledger: seq {seq} ({table} {key}) does not match its "
                "ledger entry; run `core-audit verify` on the previous version first")
        head = expected_chain
        for subtree in tree.append(leaf_hash(entry)):
            if subtree.level >= SUBTREE_LEVEL:
                subtrees.append({"level": subtree.level, "start": subtree.start,
                                 "hash": subtree.digest.hex()})
        if table == "ingest_batches":
            heads.append({"batch_id": row["batch_id"], "tree_size": tree.size,
                          "root_hash": tree.root().hex()})
    if next(chain, None) is not None:
        raise RuntimeError("cannot convert the ledger: it names rows that are not stored")
    _create_tables()
    if subtrees:
        op.bulk_insert(sa.table("log_subtrees", sa.column("level"), sa.column("start"),
                                sa.column("hash")), subtrees)
    if heads:
        op.bulk_insert(sa.table("tree_heads", sa.column("batch_id"), sa.column("tree_size"),
                                sa.column("root_hash")), heads)
    drop_append_only_triggers("ledger")
    op.drop_table("ledger")


def downgrade() -> None:
    bind = op.get_bind()
    op.create_table(
        "ledger",
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("table_name", sa.Text(), nullable=False),
        sa.Column("row_key", sa.Text(), nullable=False),
        sa.Column("row_hash", sa.String(64), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("chain_hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_ledger"),
    )
    ledger = sa.table("ledger", *(sa.column(c) for c in (
        "seq", "table_name", "row_key", "row_hash", "prev_hash", "chain_hash")))
    head = GENESIS
    entries: list[dict[str, Any]] = []
    for seq, table, row in _leaves(bind):
        digest = hashlib.sha256(_entry(table, row)).hexdigest()
        prev, head = head, hashlib.sha256((head + digest).encode("ascii")).hexdigest()
        entries.append({"seq": seq, "table_name": table,
                        "row_key": "/".join(str(row[c]) for c in _LEAF_TABLES[table]),
                        "row_hash": digest, "prev_hash": prev, "chain_hash": head})
        if len(entries) >= 5000:  # bounded memory on a large store
            op.bulk_insert(ledger, entries)
            entries.clear()
    if entries:
        op.bulk_insert(ledger, entries)
    create_append_only_triggers("ledger", [("seq",)])
    for table in ("log_origin", "tree_heads", "log_subtrees"):
        drop_append_only_triggers(table)
        op.drop_table(table)
