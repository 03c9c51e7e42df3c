"""GraphQL for CORE's own identity: stored Workbench journals (what CORE's Runs view shows of
its journal run) and a turn found by (journal, turnId) as well as by its turnKey."""

# No `from __future__ import annotations`: strawberry reads the resolvers' annotations.

from typing import Annotated, Any, ClassVar

import strawberry
from sqlalchemy import Connection as SqlConnection
from strawberry.types import Info

from store.api.context import RequestContext
from store.api.listing_fields import Last, record_view
from store.api.record_views import RecordView, fields_of_record
from store.api.thread_reads import read_in_thread
from store.api.types import AsOf, Batch, Connection, OrderEnum, connection
from store.db import queries
from store.db.queries import journals
from store.db.queries.batches import batches_by_id
from store.db.queries.filters import RecordId

Ctx = Info[RequestContext, None]
TurnView = record_view(queries.LISTINGS["turns"])
EVIDENCE_GAP = "the journal is one local grouping with no durable session id"


@fields_of_record(
    queries.Journal, key="journal_id",
    description="A stored Workbench turn journal: CORE's journal run (core-workbench.md §5), "
    "named by its turn 1 (the same id when the grown file is stored again).",
    fields=("journal_id", "session_id", "source", "started_at"),
    journal_id="Its turn 1's turnKey.",
    session_id="CORE's run session_id for a journal: always workbench_turn_journal.",
    source="CORE's run source: always turn_journal.",
    started_at="Its turn 1's timestamp, as CORE wrote it (CORE's started_at).",
    evidence_gap="CORE's run evidence_gap, always set on a journal run: no durable session id "
                 "is recorded anywhere, so a journal is one local grouping (the sentence is "
                 "this store's: core-workbench.md gives CORE's reason, not its words).")
class Journal(RecordView):
    """The fields of queries.Journal, CORE's run constants, its summary and its turns."""

    session_id: str
    source: str
    evidence_gap: str
    as_of: strawberry.Private[int | None]
    _computed: ClassVar[Any] = {"session_id": lambda _: "workbench_turn_journal",
                                "source": lambda _: "turn_journal",
                                "evidence_gap": lambda _: EVIDENCE_GAP}

    @strawberry.field(description="The batches that stored its turns, ascending: each file "
                                  "read (source) and its bytes' sha256 (inputSha256), what "
                                  "CORE's run lists as its artifact_refs.")
    async def batches(self, info: Ctx) -> list[Batch]:
        ids = list((await self._summary(info)).batch_ids)
        return [Batch.of(found) for found in await info.context.run_quick(batches_by_id, ids)]

    # Its summary counts every turn of the journal: read when one of its fields is asked for
    # (once for the three), not to find the journal or page its turns.
    async def _summary(self, info: Ctx) -> queries.JournalSummary:
        key = (str(self.journal_id), self.as_of)  # type: ignore[attr-defined]
        return await info.context.journal_summaries.load(key)

    @strawberry.field(description="Its turns stored (as of the tree it was read at).")
    async def turn_count(self, info: Ctx) -> int:
        return (await self._summary(info)).turn_count

    @strawberry.field(description="Its last turn's timestamp, as CORE wrote it (CORE's "
                                  "updated_at).")
    async def updated_at(self, info: Ctx) -> str | None:
        return (await self._summary(info)).updated_at

    @strawberry.field(description="The batches that stored its turns, ascending.")
    async def batch_ids(self, info: Ctx) -> list[int]:
        return list((await self._summary(info)).batch_ids)

    @strawberry.field(description="Its turns in turn order (turnId 1, 2, ...; the order they "
                                  "were stored in), paged as every list is.")
    async def turns(self, info: Ctx, first: int | None = None, after: str | None = None,
                    last: Last = None, before: str | None = None
                    ) -> Connection[TurnView]:  # type: ignore[valid-type]
        journal = str(self.journal_id)  # type: ignore[attr-defined]
        listing = queries.LISTINGS["turns"]
        where = queries.TurnFilter(journal=[RecordId(journal)])
        plan = info.context.page_plan(info, listing, TurnView)
        # The turns filtered by the journal, in turn order: as `turns(filter: {journal})`
        # reads them, its statements kept by shape (journal order: RecordListing.list).
        if plan is not None:  # the selection asks for columns only: built from the rows
            built = await info.context.run_quick(
                plan.read, listing, where, first, after, last, before, queries.Order.OLDEST_FIRST,
                self.as_of)
            if built is not None:
                return built  # type: ignore[return-value]  # a PreparedValue, answered as it is
        page = await info.context.run_quick(listing.list, where, first, after, last=last,
                                            before=before, as_of=self.as_of)
        return connection(page, lambda turn: TurnView.of(turn, self.as_of),
                          _count(info, where, self.as_of))


def _count(info: Ctx, where: queries.TurnFilter, as_of: int | None) -> Any:
    async def count() -> int:
        return int(await info.context.run(queries.count_turns, where, as_of))
    return count


def _asked_turn(id: Any, journal: Any, turn_id: int | None) -> None:
    """QueryError unless a turn is asked for by its key alone, or by journal and turnId."""
    by_key, by_journal = id is not None, journal is not None or turn_id is not None
    if by_key == by_journal or (by_journal and (journal is None or turn_id is None)):
        raise queries.QueryError("turn: give id, or journal and turnId")


def _read_turn(sql: SqlConnection, _: Any, id: Any = None, journal: Any = None,
               turn_id: int | None = None, as_of: int | None = None) -> Any:
    """The turn asked for (by key, or by journal and turnId) as of `as_of`, as its view; None
    when none matches."""
    _asked_turn(id, journal, turn_id)
    turns = queries.LISTINGS["turns"]
    found = (turns.get(sql, str(id), as_of=as_of) if turn_id is None
             else journals.turn_in_journal(sql, turns, str(journal), turn_id, as_of))
    return None if found is None else TurnView.of(found, as_of)


class JournalFields:
    """The Query fields of journals, and `turn` by either identity."""

    @strawberry.field(description="Stored Workbench journals, in the order their turn 1 was "
                                  "stored (OLDEST_FIRST or NEWEST_FIRST).")
    async def journals(self, info: Ctx, first: int | None = None, after: str | None = None,
                       last: Last = None, before: str | None = None,
                       order: OrderEnum = queries.Order.OLDEST_FIRST, as_of: AsOf = None,
                       ) -> Connection[Journal]:
        page = await info.context.run(journals.list_journals, first, after, last=last,
                                      before=before, order=order, as_of=as_of)

        async def count() -> int:
            return int(await info.context.run(journals.count_journals, as_of))

        return connection(page, lambda found: Journal.of(found, as_of), count)

    @strawberry.field(description="One journal by its id (its turn 1's turnKey).")
    async def journal(self, info: Ctx, id: strawberry.ID, as_of: AsOf = None
                      ) -> Journal | None:
        found = await info.context.run_quick(journals.journal_by_id, str(id), as_of)
        return None if found is None else Journal.of(found, as_of)

    @strawberry.field(description="One turn: by its turnKey (id), or by CORE's own identity, "
                                  "its journal and turnId (both). Null when none matches.")
    @read_in_thread(lambda sql, source, **asked: _read_turn(sql, source, **asked))
    async def turn(
        self, info: Ctx,
        id: Annotated[strawberry.ID | None, strawberry.argument(
            description="The turn's turnKey (64 hex digits).")] = None,
        journal: Annotated[strawberry.ID | None, strawberry.argument(
            description="A journal's id: its turn 1's turnKey.")] = None,
        turn_id: Annotated[int | None, strawberry.argument(
            description="The journal's turn_id (from 1).")] = None,
        as_of: AsOf = None,
    ) -> TurnView | None:  # type: ignore[valid-type]
        _asked_turn(id, journal, turn_id)  # refused before any read
        return await info.context.run_quick(  # type: ignore[no-any-return]  # a view or None
            _read_turn, self, id=id, journal=journal, turn_id=turn_id, as_of=as_of)
