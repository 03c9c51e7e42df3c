"""The derived tables a batch writes beside its rows, on the store it writes to: a store an
earlier revision's backfill batch is written to may not have them all yet (revision 0012's
backfill batch runs before 0013 creates the search's, and 0015's before 0016 creates the turn
tallies; before 0019 the sighting counts name records by id, and 0019 counts them afresh)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy import Connection

from store.db.schema.text_search import TEXT_TABLES, absent_search_tables
from store.db.write.derived_rows import DerivedWrites
from store.db.write.residual_record_tallies import TABLE as RECORD_TALLIES
from store.db.write.residual_record_tallies import write_record_tallies
from store.db.write.search_texts import Known, Rows, text_rows, write_texts
from store.db.write.sighting_counts import counts_by_seq
from store.db.write.tallies import BatchTally
from store.db.write.turn_tallies import TurnTally, turn_tallies_present


@dataclass
class DerivedTables:
    """A batch's writes to the derived tables (every row digested for prove_batch; the tables
    the store lacks neither written nor read back), which of the later ones it writes, and
    the tallies it counts as its rows are written."""

    writes: DerivedWrites
    texts: bool  # the search text tables (revision 0013)
    record_tallies: bool  # residual_record_tallies (revision 0015)
    turn_tally: TurnTally | None  # the batch's turn tallies as it goes (revision 0016)
    residual_tally: BatchTally = field(default_factory=BatchTally)  # its residual tallies

    @classmethod
    def on_store(cls, connection: Connection) -> DerivedTables:
        absent = absent_search_tables(connection)
        turn_tally = TurnTally() if turn_tallies_present(connection) else None
        if turn_tally is None:
            absent |= {"turn_tallies"}
        if not counts_by_seq(connection):
            absent |= {"sighting_counts"}
        return cls(
            writes=DerivedWrites(absent=absent),
            texts=not absent & set(TEXT_TABLES),
            record_tallies=RECORD_TALLIES not in absent,
            turn_tally=turn_tally,
        )

    def insert_texts(self, connection: Connection, batch_id: int, inserts: Rows,
                     known: Known) -> None:
        """The search documents of the records new in a flush's `inserts`."""
        if self.texts:
            write_texts(connection, self.writes, text_rows(batch_id, inserts, known))

    def insert_record_tallies(self, connection: Connection, batch_id: int, first_seq: int,
                              new: Mapping[str, int], *, earlier_sighted: bool = True) -> None:
        """Once the batch's sightings are written: its residual record tallies, if it stored
        or sighted a residual (`new`: its new rows per table; `earlier_sighted`: whether it
        met a residual an earlier batch stored)."""
        if self.record_tallies and (new.get("contract_residuals", 0)
                                    or new.get("residual_occurrences", 0)):
            write_record_tallies(connection, self.writes, batch_id, first_seq,
                                 earlier_sighted=earlier_sighted)

    def insert_tallies(self, connection: Connection, batch_id: int) -> None:
        """The batch's residual tallies and turn tallies, once its every row is written."""
        self.writes.insert_dicts(connection, "residual_tallies", self.residual_tally.rows(batch_id))
        if self.turn_tally is not None:
            self.writes.insert_dicts(connection, "turn_tallies", self.turn_tally.rows(batch_id))
