"""Record listings: the one generic list, count, get-by-key and facets every listed record
kind shares.

A `RecordListing` names its table (its key comes from RECORD_KINDS), the filter it takes,
the row builder that turns a row into its record, whether its records have sightings (an
`occurrence_count`, and the MOST_SEEN order besides OLDEST_FIRST and NEWEST_FIRST), the
records joined to each row, and the GraphQL names it is served under. Each kind's listing is
declared once in `listing_declarations` (`LISTINGS`). Adding a kind: docs/design.md.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy import (
    CTE,
    Column,
    ColumnElement,
    CompoundSelect,
    Connection,
    Label,
    Select,
    Table,
    bindparam,
    select,
)

from store.db.queries.as_of import Snapshot, held, snapshot_at
from store.db.queries.errors import QueryError
from store.db.queries.facets import FacetSet, facet_lists, facet_page, facet_statement
from store.db.queries.filters import shaped_filter, storable, tables_read
from store.db.queries.orders import (
    TIME_ORDERS,
    Listing,
    Order,
    TimeOrder,
    by_column,
)
from store.db.queries.pages import counting, page_of
from store.db.queries.record_pages import key_of, listing_in, ranked_page, shaped_list
from store.db.queries.records import FacetPage, Page
from store.db.queries.row_records import RowRecord
from store.db.queries.search import Searched, count_matches
from store.db.queries.sightings import (
    sightings_count,
)
from store.db.queries.statement_shapes import Shapes
from store.db.schema.text_search import index_of


class Filter(Protocol):
    """A query filter: SQL conditions on the listing's table (and the tables it joins)."""

    def conditions(self) -> list[ColumnElement[bool]]: ...


F = TypeVar("F", bound=Filter)
R = TypeVar("R")
KEPT_COLUMN_LISTS = 64  # column lists a listing keeps its read-by-key statement for

# (the filtered rows with their sightings and joined columns, the filter, the snapshot,
# facet names) -> the rows grouped by those facets, each group with its records `n` and
# sightings `s`.
Combos = Callable[[Select[Any], Any, Snapshot | None, Sequence[str]], CTE]
# (the filter, the snapshot) -> the statement counting the records that match (one row, one
# column), for a listing counted otherwise.
Counter = Callable[[Any, Snapshot | None], Select[Any] | None]  # None: the default count


@dataclass(frozen=True, slots=True)
class Joined:
    """A record joined to each row of a listing through a column both tables have."""

    listing: RecordListing[Any, Any]
    on: str
    prefix: str = ""  # its columns (and sightings) are read as prefix + name; "": not read
    filtered: bool = False  # the listing's filter names its columns: joined to filter
    outer: bool = False  # a row without one stays listed (its columns null)


@dataclass(frozen=True, slots=True)
class RecordListing(Generic[F, R]):
    """One record kind as a list: pages in an `Order`, counts, one record by key, facets."""

    name: str  # the list: GraphQL's list field, export's KIND ("residuals")
    table: Table
    record: Callable[[Any], R]  # a row (with its sightings and joined columns) -> its record
    filter_type: type[F] | None = None
    one: str | None = None  # one record: GraphQL's get-by-key field, prove's option
    api_type: str = ""  # the GraphQL type of its records, e.g. "Residual"
    sightings: Table | None = None  # has a column named as this table's key, per sighting
    joined: tuple[Joined, ...] = ()
    counter: Counter | None = None  # default: the filtered rows, counted in SQL
    facets: FacetSet | None = None  # counted together over its combos
    facets_type: str = ""  # the GraphQL type of its facets
    # Every facet, as the filter field it selects (one a page at a time: `facet_page`), and
    # the rows grouped by some of them.
    facet_fields: tuple[str, ...] = ()
    combos: Combos | None = None
    exported: bool = True  # `core-audit export` writes its table
    sightings_exported: str | None = None  # ...and its sightings table, under this name
    # GraphQL descriptions: of the list (before the page help), of get-by-key, of the facets,
    # and what its filter input says beyond the any-of lists and batch ranges every one has.
    list_help: str = ""
    one_help: str = ""
    facets_help: str = ""
    filter_help: str = ""
    # Its rows (as read) in a TIME order: the listing has CORE time (turns).
    time_ordered: TimeOrder | None = None
    # The columns it can be sorted by (an order's column name, e.g. CODE: the column), each
    # ascending or descending (Order.CODE_ASC, CODE_DESC): every column the console shows.
    # Each leads an index (column, seq), so a page is an index range (without one a page
    # sorts every row: 7.3 s CPU a page of prompts at 1M turns); texts in byte order, their
    # PostgreSQL indexes built so (revision 0017). Batches, one per ingest, have none.
    column_orders: tuple[tuple[str, Column[Any]], ...] = ()
    # Its pages are cut by keys alone (a narrow statement of its key and sort keys), then its
    # records read by key: building a statement of every column it reads (a turn's ~60,
    # with its surface's and turn_fields') cost more than the page's SQL, per request.
    paged_by_key: bool = False
    # The column its seq orders (OLDEST_FIRST, NEWEST_FIRST) read by, for a filter: a joined
    # table's copy of seq where the filter leaves only rows that have one, so that a page
    # walks that table's (filtered column, seq) index instead of sorting every match. None
    # (or a callable answering None): its own seq.
    seq_of: Callable[[Any], ColumnElement[int] | None] | None = None
    # Conditions that select the same rows as a filter's own (given them, and whether the
    # rows are read or only counted), read otherwise: turns counted, or searched, within a
    # journal are read by seq. None (or a callable answering None): the filter's conditions.
    conditions_of: Callable[[Any, list[ColumnElement[bool]], bool],
                            list[ColumnElement[bool]] | None] | None = None
    # Its rows read by key (reads of now), built on first use and run with parameters, by
    # the columns read (None: every one); at most KEPT_COLUMN_LISTS, then afresh.
    _built: dict[frozenset[str] | None, Select[Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False)
    # Its page, count and probe statements by shape (statement_shapes.py).
    shapes: Shapes[Any] = field(default_factory=Shapes, init=False, repr=False,
                                 compare=False, hash=False)

    @property
    def key(self) -> str:
        """The one column a record is found by: its table's primary key, which is its record
        kind's key (check_record_kinds)."""
        (column,) = self.table.primary_key.columns
        return str(column.name)

    @property
    def record_type(self) -> type[R]:
        """The records `record` builds: a RowRecord's, or its return annotation."""
        if isinstance(self.record, RowRecord):
            return self.record.record_type
        built: type[R] = typing.get_type_hints(self.record)["return"]
        return built

    @property
    def orders(self) -> tuple[Order, ...]:
        """The orders it can be read in: MOST_SEEN only with sightings, the TIME orders only
        with CORE time, RANK only with text to search."""
        columns = {name for name, _ in self.column_orders}
        return tuple(o for o in Order
                     if (o is not Order.MOST_SEEN or self.sightings is not None)
                     and (o is not Order.RANK or index_of(self.table) is not None)
                     and (o not in TIME_ORDERS or self.time_ordered is not None)
                     and (o.column is None or o.column in columns))

    def sorted_by(self, connection: Connection, order: Order, statement: Select[Any], *,
                  nulls: bool | None = None) -> Listing:
        """`statement` (its rows as read, or their keys) by the column of a column `order`.
        `nulls`: whether its column has nulls, if already asked (`has_nulls`)."""
        if nulls is None:
            nulls = self.has_nulls(connection, order)
        column = dict(self.column_orders)[order.column or ""]
        return by_column(order, statement, column, self.table.c.seq, nulls=nulls)

    def has_nulls(self, connection: Connection, order: Order) -> bool:
        """Whether the column of a column `order` has a null in the store (its rows without a
        value are then a second part); QueryError for a column it is not sorted by."""
        column = dict(self.column_orders).get(order.column or "")
        if column is None:
            sortable = ", ".join(o.name for o in self.orders)
            raise QueryError(f"order: {order.name} sorts by a column {self.name} do not have; "
                             f"one of {sortable}")
        if not column.nullable:
            return False
        probe = self.shapes.get(("nulls", order), lambda: select(column.table.c.seq).where(
            column.is_(None)).limit(1))
        return connection.execute(probe).first() is not None

    def filtered(self, where: F | None = None, snapshot: Snapshot | None = None, *,
                 reading: bool = False, bounded: bool = True) -> Select[Any]:
        """Its table's rows matching `where`, stored by `snapshot`: the joins the filter needs
        (and, `reading`, the joins whose columns are read), no columns but its table's. A
        filter joins only the tables its conditions read, as no filter joins none: a filter
        whose fields are all null (a Workbench document's unset variables) counts every turn
        from turns alone (100,000 turns: 212 -> ~5 ms on SQLite), not through two joins.
        Not `bounded`: without `snapshot`'s bound on the table's seq (a caller that bounds
        the rows otherwise)."""
        statement = select(self.table)
        conditions = list(where.conditions()) if where is not None else []
        if self.conditions_of is not None:
            conditions = self.conditions_of(where, conditions, reading) or conditions
        filtering = tables_read(*conditions)
        for join in self.joined:
            other = join.listing.table
            if (reading and join.prefix) or (join.filtered and other in filtering):
                statement = statement.join(other, other.c[join.on] == self.table.c[join.on],
                                           isouter=join.outer)
        return statement.where(*conditions, *held(snapshot if bounded else None, self.table))

    def sightings_counted(self, snapshot: Snapshot | None) -> Label[int]:
        """Per row, its sightings stored by `snapshot`, as `occurrence_count`."""
        assert self.sightings is not None, f"{self.name} have no sightings"
        return sightings_count(self.table, snapshot)

    def _joined_columns(self, snapshot: Snapshot | None) -> list[Label[Any]]:
        columns: list[Label[Any]] = []
        for join in self.joined:
            if join.prefix:
                other = join.listing
                columns += [c.label(f"{join.prefix}{c.name}") for c in other.table.c]
                if other.sightings is not None:
                    columns.append(other.sightings_counted(snapshot).element.label(
                        f"{join.prefix}occurrence_count"))
        return columns

    def joined_rows(self, where: F | None, snapshot: Snapshot | None, *,
                    bounded: bool = True) -> Select[Any]:
        return self.filtered(where, snapshot, reading=True, bounded=bounded).add_columns(
            *self._joined_columns(snapshot))

    def rows(self, where: F | None = None, snapshot: Snapshot | None = None) -> Select[Any]:
        """What its records are built from: the filtered rows with their joined columns and
        sightings (as of `snapshot`, None: now)."""
        read = self.joined_rows(where, snapshot)
        return read if self.sightings is None else read.add_columns(
            self.sightings_counted(snapshot))

    def list(
        self,
        connection: Connection,
        where: F | None = None,
        first: int | None = None,
        after: str | None = None,
        *,
        last: int | None = None,
        before: str | None = None,
        order: Order = Order.OLDEST_FIRST,
        as_of: int | None = None,
        build: Any = None,
    ) -> Page[R]:
        """A page of its records matching `where`, in `order` (keyset pages: first/after
        forwards, last/before backwards), as of tree size `as_of` (None: now). `build`: what
        each row becomes instead of a record (a row builder with `by_position`, as
        store/api/prepared_pages.py gives; a list paged by key builds its rows read by key
        with it; not for a search's RANK)."""
        snapshot = snapshot_at(connection, as_of)
        if order is Order.RANK and isinstance(where, Searched):
            return ranked_page(self, connection, where, snapshot, first, after, last, before)
        shaped = None if snapshot is not None else shaped_filter(where)
        if shaped is not None:
            return shaped_list(self, connection, shaped, order, first, after, last, before,
                               build or self.record)
        listing = listing_in(self, connection, where, snapshot, order)
        if self.paged_by_key:
            return self.by_key(connection, page_of(connection, listing, order, key_of, first,
                                                   after, last, before), snapshot, build)
        return page_of(connection, listing, order, build or self.record, first, after, last,
                       before)

    def keyed(self, where: F | None = None, snapshot: Snapshot | None = None) -> Select[Any]:
        """The keys of its rows matching `where`, stored by `snapshot`, through the joins its
        records are read with (so the same rows): what a page is cut from (`by_key`)."""
        return self.filtered(where, snapshot, reading=True).with_only_columns(
            self.table.c[self.key])

    def by_key(self, connection: Connection, keys: Page[Any], snapshot: Snapshot | None,
               build: Any = None) -> Page[R]:
        """A page of `keyed` rows' keys (cut by keys) as its records (or what `build` makes
        of their rows), read by key in one statement, in the page's order."""
        records = self.by_keys(connection, keys.items, snapshot, build)
        return Page([records[key] for key in keys.items], keys.cursors, keys.has_next_page,
                    keys.has_previous_page)

    def by_keys(self, connection: Connection, keys: Sequence[str],
                snapshot: Snapshot | None = None, build: Any = None) -> dict[str, R]:
        """Its records keyed `keys` (those stored by `snapshot`), by key; `build`: what each
        row becomes instead (as `list` takes it). Reads of now run one statement built once;
        as of a tree head, one built for it."""
        wanted = [key for key in keys if not isinstance(key, str) or storable(key)]
        if not wanted:
            return {}
        column = self.table.c[self.key]
        # A builder that names the columns it reads (a page plan's) gets those alone: a
        # turn's verbatim line and its surface's ~25 columns are most of a page's SQL.
        reads: frozenset[str] | None = getattr(build, "columns", None)
        if snapshot is None:
            statement = self._built.get(reads)
            if statement is None:
                if len(self._built) >= KEPT_COLUMN_LISTS:  # selections are the client's
                    self._built.clear()
                statement = self._built.setdefault(reads, self._reading(
                    self.rows(None).where(column.in_(bindparam("keys", expanding=True))),
                    reads))
            rows = connection.execute(statement, {"keys": wanted})
        else:
            rows = connection.execute(self._reading(
                self.rows(None, snapshot).where(column.in_(wanted)), reads))
        columns = tuple(rows.keys())
        place = columns.index(self.key)
        maker = build or self.record
        by_position = getattr(maker, "by_position", None)
        if by_position is not None:  # read by place: the columns are fixed here
            make = by_position(columns)
            return {row[place]: make(row) for row in rows}
        return {row[place]: maker(row) for row in rows}

    def _reading(self, statement: Select[Any], reads: frozenset[str] | None) -> Select[Any]:
        """`statement` with only its key and the columns named `reads` (None: all of them);
        its joins stay, so it reads the same rows."""
        if reads is None:
            return statement
        return statement.with_only_columns(
            *(c for c in statement.selected_columns if c.key == self.key or c.key in reads),
            maintain_column_froms=True)

    def count(self, connection: Connection, where: F | None = None,
              as_of: int | None = None) -> int:
        """How many of its records match `where`, as of tree size `as_of`: counted in SQL."""
        snapshot = snapshot_at(connection, as_of)
        if isinstance(where, Searched) and (where.base is None or not where.base.conditions()):
            return count_matches(connection, self.table, where.search,
                                 None if snapshot is None else snapshot.tree_size)
        shaped = None if snapshot is not None else shaped_filter(where)
        if shaped is not None:
            statement = self.shapes.get(("count", shaped.key),
                                         lambda: self._counting(shaped.where, None))
            return int(connection.execute(statement, shaped.params).scalar_one())
        return int(connection.execute(self._counting(where, snapshot)).scalar_one())

    def _counting(self, where: F | None, snapshot: Snapshot | None) -> Select[Any]:
        """The statement counting its records matching `where` (its `counter`'s, if it has
        one): one row, one column."""
        if self.counter is not None and (counted := self.counter(where, snapshot)) is not None:
            return counted
        return counting(self.filtered(where, snapshot).with_only_columns(self.table.c.seq))

    def get(self, connection: Connection, key: str, as_of: int | None = None) -> R | None:
        """The record keyed `key` (stored by tree size `as_of`), or None."""
        return self.by_keys(connection, [key], snapshot_at(connection, as_of)).get(key)

    def facet_counts(self, connection: Connection, where: F | None = None,
                     as_of: int | None = None) -> Any:
        """Its facets (declared in `facets`) over the records matching `where`. Of now, the
        statement is kept by the filter's shape, as a page's (statement_shapes.py): building
        it cost three times what running it does."""
        assert self.facets is not None and self.combos is not None, f"{self.name} have no facets"
        combos, names = self.combos, self.facets.names

        def statement(where: F | None, snapshot: Snapshot | None) -> CompoundSelect[Any]:
            return facet_statement(combos(self.rows(where, snapshot), where, snapshot, names),
                                   names)

        snapshot = snapshot_at(connection, as_of)
        shaped = None if snapshot is not None else shaped_filter(where)
        if shaped is None:
            rows = connection.execute(statement(where, snapshot))
        else:
            kept = self.shapes.get(("facets", shaped.key),
                                   lambda: statement(shaped.where, None))
            rows = connection.execute(kept, shaped.params)
        return self.facets.counts(*facet_lists(rows, len(names)))

    def facet_page(self, connection: Connection, field: str, where: F | None = None,
                   first: int | None = None, after: str | None = None,
                   as_of: int | None = None) -> FacetPage:
        """The values of its facet `field` (a filter field, in `facet_fields`) over the
        records matching `where`, a page at a time: past `after`, the first `first`."""
        assert self.combos is not None, f"{self.name} have no facet pages"
        if field not in self.facet_fields:
            raise QueryError(f"field: {self.name} have no facet {field!r}; one of "
                             + ", ".join(self.facet_fields))
        snapshot = snapshot_at(connection, as_of)
        combos = self.combos(self.rows(where, snapshot), where, snapshot, (field,))
        return facet_page(connection, combos, field, first, after)

    def sightings_rows(self, where: F | None = None,
                       snapshot: Snapshot | None = None) -> Select[Any]:
        """Its sightings table's rows, of the records matching `where`."""
        assert self.sightings is not None, f"{self.name} have no sightings"
        statement = select(self.sightings)
        if where is not None:
            statement = statement.join(
                self.table, self.table.c[self.key] == self.sightings.c[self.key]
            ).where(*where.conditions())
        return statement.where(*held(snapshot, self.sightings))

