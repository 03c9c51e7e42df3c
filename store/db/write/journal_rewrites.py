"""A Workbench journal is append-only too: a file whose first turn is a stored journal's but
whose turn k differs from the stored turn k rewrites that journal's history. Each turn's key
hashes its verbatim line, so the rewritten turn (its digest recomputed) would be "new" and
the store would hold two turn ks of one journal; the writer refuses it instead."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import Connection, select

from store.db.schema.tables import turns
from store.db.write.inserts import content_columns
from store.model.turns import TurnKind

_KIND = content_columns("turns").index("kind")
_TURN_ID = content_columns("turns").index("turn_id")
JOURNAL = TurnKind.WORKBENCH_JOURNAL.value


class JournalTurns:
    """The journal turns of one input, as the writer meets them."""

    def __init__(self) -> None:
        self.anchored = False  # its turn 1 is stored: it continues a stored journal
        self.new: dict[int, int] = {}  # turn_id -> line, for turns not stored yet

    def saw(self, line: int, content: tuple[Any, ...], *, stored: bool) -> None:
        if content[_KIND] != JOURNAL:
            return
        if stored:
            self.anchored = self.anchored or content[_TURN_ID] == 1
        else:
            self.new.setdefault(content[_TURN_ID], line)

    def rewrites(self, connection: Connection, batches: set[int]
                 ) -> Iterator[tuple[int, str]]:
        """(line, reason) for each new turn whose turn_id the stored journal holds already:
        `batches` are those holding this input's stored turns (turn 1's among them)."""
        if not self.anchored or not self.new or not batches:
            return
        stored = connection.execute(
            select(turns.c.turn_id, turns.c.batch_id, turns.c.seq)
            .where(turns.c.kind == JOURNAL, turns.c.batch_id.in_(sorted(batches)),
                   turns.c.turn_id.in_(sorted(self.new)))
            .order_by(turns.c.turn_id, turns.c.seq))
        named: set[int] = set()
        for turn_id, batch_id, seq in stored:
            if turn_id in named:
                continue
            named.add(turn_id)
            yield self.new[turn_id], (
                f"turn {turn_id} rewrites the stored journal's turn {turn_id} (batch "
                f"{batch_id}, seq {seq}), which differs: a journal is append-only")
