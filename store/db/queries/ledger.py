"""The ledger's head and length."""

from __future__ import annotations

from sqlalchemy import (
    Connection,
    func,
    select,
)

from store.db.ledger import read_tip
from store.db.queries.records import LedgerStatus
from store.db.tables import ledger as ledger_t


def ledger_status(connection: Connection) -> LedgerStatus:
    tip = read_tip(connection)
    length = connection.execute(select(func.count()).select_from(ledger_t)).scalar_one()
    return LedgerStatus(length=length, head_seq=tip.seq, head_hash=tip.chain_hash)
