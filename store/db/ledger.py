"""The hash chain over every appended row: seq, row_hash, prev_hash, chain_hash."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select

from store.db.tables import LATE_COLUMNS, ledger
from store.model.canonical import content_id

GENESIS = "0" * 64


@dataclass(frozen=True, slots=True)
class Checkpoint:
    seq: int
    chain_hash: str

    def __str__(self) -> str:
        return f"{self.seq}:{self.chain_hash}"

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        seq, sep, chain = text.strip().replace(" ", ":", 1).partition(":")
        if not sep or not seq.isdigit() or len(chain) != 64:
            raise ValueError(f"checkpoint {text!r} is not SEQ:HASH (a number and 64 hex digits)")
        return cls(int(seq), chain.lower())


def row_hash(table: str, row: dict[str, Any]) -> str:
    """Hash of a row's stored values; `seq` is its ledger position, not its content."""
    late = LATE_COLUMNS.get(table)
    if late is not None:
        row = {k: v for k, v in row.items() if k != "seq" and not (v is None and k in late)}
    elif "seq" in row:
        row = {k: v for k, v in row.items() if k != "seq"}
    return content_id({"table": table, "row": row})


def chain_hash(prev_hash: str, row_digest: str) -> str:
    return hashlib.sha256((prev_hash + row_digest).encode("ascii")).hexdigest()


def read_tip(connection: Connection) -> Checkpoint:
    tip = connection.execute(
        select(ledger.c.seq, ledger.c.chain_hash).order_by(ledger.c.seq.desc()).limit(1)
    ).first()
    return Checkpoint(0, GENESIS) if tip is None else Checkpoint(tip.seq, tip.chain_hash)


class LedgerAppender:
    """Gives rows appended in one transaction their seqs and chains their hashes."""

    def __init__(self, tip: Checkpoint) -> None:
        self.seq = tip.seq
        self.head = tip.chain_hash

    def stamp(self, table: str, key: str, row: dict[str, Any]) -> dict[str, Any]:
        """Sets row["seq"] and returns the ledger row that records it."""
        self.seq += 1
        digest = row_hash(table, row)  # before seq is set: no copy without it
        row["seq"] = self.seq
        prev, self.head = self.head, chain_hash(self.head, digest)
        return {
            "seq": self.seq,
            "table_name": table,
            "row_key": key,
            "row_hash": digest,
            "prev_hash": prev,
            "chain_hash": self.head,
        }
