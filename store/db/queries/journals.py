"""CORE's own identity and time for turns (issue 30): stored Workbench journals, a turn by
(journal, turn_id), and the CORE-time orders, all read through `turn_fields` (revision 0011).

A journal is named by its turn 1's turn_key: the same when a grown file is stored again.
Its turns were appended in turn order (a rewrite is refused), so its turns in seq order are
its turns in turn order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Unpack

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    Select,
    bindparam,
    case,
    func,
    select,
)
from sqlalchemy.sql.elements import BindParameter

from store.db.queries.as_of import snapshot_at
from store.db.queries.filters import equals, storable
from store.db.queries.keys import MAX_KEY, key_value
from store.db.queries.orders import Listing, Order, Part, SortKey, TimeOrder, in_seq_order
from store.db.queries.pages import PageArgs, page_of
from store.db.queries.records import Journal, JournalSummary, Page, StoredTurn
from store.db.schema.tables import ingest_batches as batches_t
from store.db.schema.tables import turn_fields as fields_t
from store.db.schema.tables import turns as turns_t

if TYPE_CHECKING:
    from store.db.queries.listings import RecordListing

# A turn's key by CORE's identity: one entry of turn_fields' (journal_id, turn_id) index.
_TURN_KEY = select(fields_t.c.turn_key).where(fields_t.c.journal_id == bindparam("journal"),
                                              fields_t.c.turn_id == bindparam("turn_id"))
_UNTIMED = select(fields_t.c.turn_seq).where(fields_t.c.core_time.is_(None)).limit(1)


def untimed_stored(connection: Connection) -> bool:
    """Whether any turn has no CORE time: one index probe. Building a statement of two parts
    costs more than reading a page (SQLAlchemy proxies every column per subquery): a store
    whose turns all have a time (CORE writes one) reads the timed part alone."""
    return connection.execute(_UNTIMED).first() is not None


def in_time_order(order: Order, statement: Select[Any], untimed: bool) -> Listing:
    """`statement`'s turns (joined to turn_fields) by CORE time, ties by seq; those without a
    time (a line without one, or one without an offset) last, in seq order, when `untimed`
    (some are stored). Their sort key is a constant past every time in the order's
    direction, so one cursor pages both parts. Both parts read turn_fields' (core_time,
    turn_seq) index in order (NULL times are one range of it); a turn without its
    turn_fields row (verify names it) is in neither."""
    descending = order is Order.TIME_DESC
    time, seq = fields_t.c.core_time, fields_t.c.turn_seq
    timed = Part(statement.where(time.is_not(None)),
                 [SortKey(time, descending), SortKey(seq, descending)], seek=True)
    last = key_value(0 if descending else MAX_KEY)
    # seq > 0: a comparison, so SQLite reads the outer join as the inner one it is here.
    without_time = Part(statement.where(time.is_(None), seq > key_value(0)),
                   [SortKey(last, descending, constant=True), SortKey(seq, descending)])
    # A cursor's own row, by the index: an untimed row's constant matches no time, and
    # whether rows lie past it is then asked of the parts.
    lookup = Part(statement, [SortKey(time, descending), SortKey(seq, descending)])
    return Listing([timed, without_time] if untimed else [timed], lookup)


IN_TIME_ORDER = TimeOrder(untimed_stored, in_time_order)


def turn_in_journal(connection: Connection, turns: RecordListing[Any, StoredTurn],
                    journal: str, turn_id: int, as_of: int | None = None
                    ) -> StoredTurn | None:
    """The journal's turn `turn_id` (stored by tree size `as_of`), or None: its key by the
    (journal_id, turn_id) index, then the turn by key (statements built once)."""
    snapshot = snapshot_at(connection, as_of)
    if not -2**31 <= turn_id < 2**31 or not storable(journal):
        return None
    key = connection.execute(_TURN_KEY, {"journal": journal, "turn_id": turn_id}).scalar()
    return None if key is None else turns.by_keys(connection, [key], snapshot).get(key)


def _journal_rows(as_of_seq: int | None) -> Select[Any]:
    """One row per journal: its turn 1 (turn_key, seq, timestamp). A journal turn's fields
    row holds its turns row's turn_id (turn_fields.py; verify derives it again), so turns'
    own `turn_id = 1` selects no other journal and lets the read walk turns' (turn_id, seq)
    index, the turns numbered 1 in seq order, instead of every turn of the store: the Runs
    route's list, 4 journals of 100,000 turns, 318 -> 0.3 ms on SQLite."""
    statement = (select(turns_t.c.turn_key, turns_t.c.seq, turns_t.c.timestamp)
                 .join_from(turns_t, fields_t, fields_t.c.turn_key == turns_t.c.turn_key)
                 .where(turns_t.c.turn_id == 1, fields_t.c.turn_id == 1,
                        fields_t.c.journal_id == turns_t.c.turn_key))
    if as_of_seq is not None:
        statement = statement.where(turns_t.c.seq <= key_value(as_of_seq))
    return statement


def _journal(row: Any) -> Journal:
    return Journal(journal_id=row.turn_key, seq=row.seq, started_at=row.timestamp)


def journal_summary(connection: Connection, journal_id: str, as_of: int | None = None
                    ) -> JournalSummary:
    """The journal's turns stored by tree size `as_of`: their count, the last one's time and
    their batches, read by the (journal_id, turn_id) index. Its cost grows with the journal,
    so finding a journal does not read it. The statements are built once, with or without
    `as_of` (building them cost more than running them on a small journal), and run with the
    journal's id, the tree size and the last turn's id as parameters."""
    as_of_seq = _as_of_seq(connection, as_of)
    if not storable(journal_id):  # no column holds it: no turn (as `equals` answers)
        return JournalSummary(turn_count=0, updated_at=None, batch_ids=())
    counted, updated, batches = _summary_statements(as_of_seq is not None)
    params: dict[str, Any] = {"journal_id": journal_id}
    if as_of_seq is not None:
        params["as_of_seq"] = as_of_seq
    count, last = connection.execute(counted, params).one()
    updated_at = None if last is None else connection.execute(  # a journal turn has a turn id
        updated, {**params, "last_turn_id": last}).scalar()
    return JournalSummary(turn_count=count, updated_at=updated_at,
                          batch_ids=tuple(connection.execute(batches, params).scalars()))


_SUMMARIES: dict[bool, tuple[Select[Any], Select[Any], Select[Any]]] = {}


def _summary_statements(as_of: bool) -> tuple[Select[Any], Select[Any], Select[Any]]:
    """journal_summary's statements (its count and last turn id, that turn's time, its
    batches), with `as_of_seq` or without."""
    found = _SUMMARIES.get(as_of)
    if found is None:
        journal_id: BindParameter[Any] = bindparam("journal_id")
        as_of_seq = bindparam("as_of_seq", type_=BigInteger()) if as_of else None
        f = fields_t.c
        held = [equals(f.journal_id, journal_id)]
        if as_of_seq is not None:
            held.append(f.turn_seq <= as_of_seq)
        counted: Any = select(func.count(), func.max(f.turn_id)).where(*held)
        updated: Select[Any] = (select(turns_t.c.timestamp)
                   .join_from(fields_t, turns_t, turns_t.c.turn_key == f.turn_key)
                   .where(*held, f.turn_id == bindparam("last_turn_id", type_=BigInteger())))
        found = _SUMMARIES.setdefault(as_of, (counted, updated,
                                              _journal_batches(journal_id, as_of_seq)))
    return found


def _journal_batches(journal_id: Any, as_of_seq: Any) -> Select[Any]:
    """The batches holding the journal's turns (stored by `as_of_seq`), in batch order, one
    index step a batch: a batch's rows are consecutive leaves ending with its batch row
    (as_of.py), so from each turn found, the journal's next batch starts at its first turn
    past that batch row's seq. Grouping the journal's rows by batch read every one of them (a
    25,000-turn journal: 5-6 ms on SQLite, 14 ms on PostgreSQL). Each step moves past the
    turn it found, so the walk ends whatever the rows say. `journal_id` and `as_of_seq`
    (None: now) are bound parameters."""

    def held(rows: Any) -> list[ColumnElement[bool]]:
        found = [equals(rows.c.journal_id, journal_id)]
        if as_of_seq is not None:
            found.append(rows.c.turn_seq <= as_of_seq)
        return found

    at, after = fields_t.alias("at_turn"), fields_t.alias("after_batch")
    steps = select(select(func.min(at.c.turn_seq)).where(*held(at)).scalar_subquery()
                   .label("turn_seq")).cte("steps", recursive=True)
    # Scalar subqueries correlated to the step alone: each is one seek of the
    # (journal_id, turn_seq) index (as joins, SQLite walked the journal for every step).
    end = (select(case((batches_t.c.seq > at.c.turn_seq, batches_t.c.seq),
                       else_=at.c.turn_seq))
           .select_from(at.join(batches_t, batches_t.c.batch_id == at.c.batch_id))
           .where(*held(at), at.c.turn_seq == steps.c.turn_seq).correlate(steps)
           .scalar_subquery())
    following = (select(func.min(after.c.turn_seq))
                 .where(*held(after), after.c.turn_seq > end).correlate(steps)
                 .scalar_subquery())
    steps = steps.union_all(select(following).where(steps.c.turn_seq.is_not(None)))
    batch = (select(at.c.batch_id).where(*held(at), at.c.turn_seq == steps.c.turn_seq)
             .scalar_subquery().label("batch_id"))
    return (select(batch).distinct().select_from(steps)
            .where(steps.c.turn_seq.is_not(None)).order_by(batch))


def _as_of_seq(connection: Connection, as_of: int | None) -> int | None:
    snapshot = snapshot_at(connection, as_of)
    return None if snapshot is None else snapshot.tree_size


def list_journals(connection: Connection, first: int | None = None, after: str | None = None,
                  **page: Unpack[PageArgs]) -> Page[Journal]:
    """Stored journals in the order their turn 1 was stored (OLDEST_FIRST, NEWEST_FIRST)."""
    as_of = _as_of_seq(connection, page.get("as_of"))
    order = page.get("order", Order.OLDEST_FIRST)
    listing = in_seq_order(order, _journal_rows(as_of), turns_t.c.seq, listing="journals")
    return page_of(connection, listing, order, _journal, first, after, page.get("last"),
                   page.get("before"))


def count_journals(connection: Connection, as_of: int | None = None) -> int:
    statement = _journal_rows(_as_of_seq(connection, as_of)).with_only_columns(turns_t.c.seq)
    return int(connection.execute(select(func.count()).select_from(statement.subquery()))
               .scalar_one())


def journal_by_id(connection: Connection, journal_id: str, as_of: int | None = None
                  ) -> Journal | None:
    row = connection.execute(_journal_rows(_as_of_seq(connection, as_of))
                             .where(equals(turns_t.c.turn_key, journal_id))).first()
    return None if row is None else _journal(row)
