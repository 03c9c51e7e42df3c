"""The one MetaData every table is declared on (store/db/schema/tables.py,
search_text_tables.py and tally_tables.py), with the column types and the reference they share."""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, Integer, MetaData, String

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

Sha256 = String(64)
# A position in the log (seq, a tree size, a subtree's start) counts every row ever stored:
# 64-bit. SQLite's INTEGER is 64-bit already; PostgreSQL's is 32 (revision 0007 widens it).
LogPosition = BigInteger().with_variant(Integer(), "sqlite")


def batch_reference() -> ForeignKey:
    # Deferred: a batch's own row is written last, once its counts are known.
    return ForeignKey("ingest_batches.batch_id", deferrable=True, initially="DEFERRED")
