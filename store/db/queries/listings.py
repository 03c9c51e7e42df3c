"""Record listings: how each listed record kind is read, declared once, and the one generic
list, count, get-by-key and facets every listing shares.

A `RecordListing` names its table (its key comes from RECORD_KINDS), the filter it takes,
the row builder that turns a row into its record, whether its records have sightings (an
`occurrence_count`, and the MOST_SEEN order besides OLDEST_FIRST and NEWEST_FIRST), the
records joined to each row, and the GraphQL names it is served under. `LISTINGS` holds them
in the order the API serves them; the GraphQL resolvers (`store.api.listing_fields`), the
CLI's `export` and `prove`, and the console read it. Adding a kind: docs/design.md.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, Unpack

from sqlalchemy import ColumnElement, Connection, Label, Select, Table, bindparam, select

from store.db.queries.as_of import Snapshot, held, snapshot_at
from store.db.queries.batches import BATCH_RECORD
from store.db.queries.filters import (
    AssessmentFilter,
    ResidualFilter,
    SurfaceFilter,
    TurnFilter,
    storable,
)
from store.db.queries.journals import in_time_order
from store.db.queries.orders import TIME_ORDERS, Listing, Order, in_seq_order
from store.db.queries.pages import PageArgs, count_rows, page_of
from store.db.queries.records import (
    Batch,
    Page,
    ProposalCandidate,
    ResidualFacets,
    StoredAssessment,
    StoredResidual,
    StoredSurface,
    StoredTurn,
    SurfaceFacets,
    TurnFacets,
    TurnFields,
)
from store.db.queries.residuals import residual_facets_of, residuals_from_tallies
from store.db.queries.row_records import (
    RowRecord,
    flat_record,
    json_records,
    json_tuple,
    json_tuple_or_null,
    optional,
)
from store.db.queries.sightings import few_rows, sighted_listing, sightings_count
from store.db.queries.surfaces import surface_facets_of
from store.db.queries.turns import turn_facets_of
from store.db.schema.record_kinds import KINDS_BY_TABLE, RecordKind
from store.db.schema.tables import contract_assessments as assessments_t
from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import ingest_batches as batches_t
from store.db.schema.tables import residual_occurrences as occurrences_t
from store.db.schema.tables import surface_occurrences as surface_sightings_t
from store.db.schema.tables import surface_records as surfaces_t
from store.db.schema.tables import turn_fields as turn_fields_t
from store.db.schema.tables import turns as turns_t
from store.model.records import ContractAssessment, ContractResidual, SourceSpan
from store.model.surface_records import CheckedFile, SurfaceForm, SurfaceVerification
from store.model.taxonomy import ResidualKind, ResidualSourceAxis
from store.model.teaching_surface import GroundingSource


class Filter(Protocol):
    """A query filter: SQL conditions on the listing's table (and the tables it joins)."""

    def conditions(self) -> list[ColumnElement[bool]]: ...


F = TypeVar("F", bound=Filter)
R = TypeVar("R")

# (connection, the filtered rows with their sightings and joined columns, the filter, the
# snapshot) -> the listing's facets.
Facets = Callable[[Connection, Select[Any], Any, Snapshot | None], Any]
# (connection, the filter, the snapshot) -> how many match, for a listing counted otherwise.
Counter = Callable[[Connection, Any, Snapshot | None], int]


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
    facets: Facets | None = None
    facets_type: str = ""  # the GraphQL type of its facets
    exported: bool = True  # `core-audit export` writes its table
    sightings_exported: str | None = None  # ...and its sightings table, under this name
    # GraphQL descriptions: of the list (before the page help), of get-by-key, of the facets,
    # and what its filter input says beyond the any-of lists and batch ranges every one has.
    list_help: str = ""
    one_help: str = ""
    facets_help: str = ""
    filter_help: str = ""
    # Its rows (as read) in a TIME order: the listing has CORE time (turns).
    time_ordered: Callable[[Connection, Order, Select[Any]], Listing] | None = None
    # Its pages are cut by keys alone (a narrow statement of its key and sort keys), then its
    # records read by key: building a statement of every column it reads (a turn's ~60,
    # with its surface's and turn_fields') cost more than the page's SQL, per request.
    paged_by_key: bool = False
    # Statements built once, on first use, and run with parameters (reads of now only).
    _built: dict[str, Select[Any]] = field(default_factory=dict, init=False, repr=False,
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
        with CORE time."""
        return tuple(o for o in Order
                     if (o is not Order.MOST_SEEN or self.sightings is not None)
                     and (o not in TIME_ORDERS or self.time_ordered is not None))

    def filtered(self, where: F | None = None, snapshot: Snapshot | None = None, *,
                 reading: bool = False) -> Select[Any]:
        """Its table's rows matching `where`, stored by `snapshot`: the joins the filter needs
        (and, `reading`, the joins whose columns are read), no columns but its table's."""
        statement = select(self.table)
        for join in self.joined:
            if (reading and join.prefix) or (join.filtered and where is not None):
                other = join.listing.table
                statement = statement.join(other, other.c[join.on] == self.table.c[join.on],
                                           isouter=join.outer)
        return statement.where(*(where.conditions() if where is not None else []),
                               *held(snapshot, self.table))

    def sightings_counted(self, snapshot: Snapshot | None) -> Label[int]:
        """Per row, its sightings stored by `snapshot`, as `occurrence_count`."""
        assert self.sightings is not None, f"{self.name} have no sightings"
        return sightings_count(self.table, self.key, snapshot)

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

    def _read(self, where: F | None, snapshot: Snapshot | None) -> Select[Any]:
        return self.filtered(where, snapshot, reading=True).add_columns(
            *self._joined_columns(snapshot))

    def rows(self, where: F | None = None, snapshot: Snapshot | None = None) -> Select[Any]:
        """What its records are built from: the filtered rows with their joined columns and
        sightings (as of `snapshot`, None: now)."""
        read = self._read(where, snapshot)
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
    ) -> Page[R]:
        """A page of its records matching `where`, in `order` (keyset pages: first/after
        forwards, last/before backwards), as of tree size `as_of` (None: now)."""
        snapshot = snapshot_at(connection, as_of)
        read = self.keyed(where, snapshot) if self.paged_by_key else self._read(where, snapshot)
        if order in TIME_ORDERS and self.time_ordered is not None:
            listing = self.time_ordered(connection, order, read)
        elif self.sightings is None:
            listing = in_seq_order(order, read, self.table.c.seq, listing=self.name)
        else:
            few = (order is Order.MOST_SEEN and where is not None and bool(where.conditions())
                   and few_rows(connection, read, self.table.c.seq))
            listing = sighted_listing(order, read, self.table, self.key, snapshot,
                                      listing=self.name, few=few)
        if self.paged_by_key:
            return self.page_by_key(connection, listing, order, snapshot, first, after, last,
                                    before)
        return page_of(connection, listing, order, self.record, first, after, last, before)

    def keyed(self, where: F | None = None, snapshot: Snapshot | None = None) -> Select[Any]:
        """The keys of its rows matching `where`, stored by `snapshot`, through the joins its
        records are read with (so the same rows): what a page is cut from (`page_by_key`)."""
        return self.filtered(where, snapshot, reading=True).with_only_columns(
            self.table.c[self.key])

    def page_by_key(self, connection: Connection, listing: Listing, order: Order,
                    snapshot: Snapshot | None, first: int | None = None,
                    after: str | None = None, last: int | None = None,
                    before: str | None = None) -> Page[R]:
        """A page of `listing` (of its `keyed` rows) cut by keys, then its records read by
        key in one statement, in the page's order."""
        keys = page_of(connection, listing, order, _key_of, first, after, last, before)
        records = self.by_keys(connection, keys.items, snapshot)
        return Page([records[key] for key in keys.items], keys.cursors, keys.has_next_page,
                    keys.has_previous_page)

    def by_keys(self, connection: Connection, keys: Sequence[str],
                snapshot: Snapshot | None = None) -> dict[str, R]:
        """Its records keyed `keys` (those stored by `snapshot`), by key. Reads of now run one
        statement built once; as of a tree head, one built for it."""
        wanted = [key for key in keys if not isinstance(key, str) or storable(key)]
        if not wanted:
            return {}
        column = self.table.c[self.key]
        if snapshot is None:
            statement = self._built.get("by_keys")
            if statement is None:
                statement = self._built.setdefault("by_keys", self.rows(None).where(
                    column.in_(bindparam("keys", expanding=True))))
            rows = connection.execute(statement, {"keys": wanted})
        else:
            rows = connection.execute(self.rows(None, snapshot).where(column.in_(wanted)))
        columns = tuple(rows.keys())
        place = columns.index(self.key)
        if isinstance(self.record, RowRecord):  # read by place: the columns are fixed here
            build = self.record.by_position(columns)
            return {row[place]: build(row) for row in rows}
        return {row[place]: self.record(row) for row in rows}

    def count(self, connection: Connection, where: F | None = None,
              as_of: int | None = None) -> int:
        """How many of its records match `where`, as of tree size `as_of`: counted in SQL."""
        snapshot = snapshot_at(connection, as_of)
        if self.counter is not None:
            return self.counter(connection, where, snapshot)
        return count_rows(connection, self.filtered(where, snapshot)
                          .with_only_columns(self.table.c.seq))

    def get(self, connection: Connection, key: str, as_of: int | None = None) -> R | None:
        """The record keyed `key` (stored by tree size `as_of`), or None."""
        return self.by_keys(connection, [key], snapshot_at(connection, as_of)).get(key)

    def facet_counts(self, connection: Connection, where: F | None = None,
                     as_of: int | None = None) -> Any:
        """Its facets (declared in `facets`) over the records matching `where`."""
        assert self.facets is not None, f"{self.name} have no facets"
        snapshot = snapshot_at(connection, as_of)
        return self.facets(connection, self.rows(where, snapshot), where, snapshot)

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


def _key_of(row: Any) -> Any:
    return row[0]


# How each kind's records are read off its rows (row_records.py): by column name, with the
# columns not stored as the record holds them converted, and the records nested in it.
RESIDUAL_RECORD = flat_record(StoredResidual, residual=flat_record(
    ContractResidual, residual_kind=ResidualKind, source_axis=ResidualSourceAxis,
    evidence_spans=json_records(SourceSpan)))
SURFACE_RECORD = flat_record(
    StoredSurface, grounding_source=GroundingSource, verification=SurfaceVerification,
    subject_domains=json_tuple_or_null, object_domains=json_tuple_or_null,
    surface_form=optional(SurfaceForm, blank_is_null=True), hop_chain_ids=json_tuple,
    candidate_chain_ids=json_tuple, checked_against=json_records(CheckedFile))
TURN_FIELDS_RECORD = flat_record(
    TurnFields, checkpoint_emitted=optional(bool),
    proposal_candidates=optional(json_records(ProposalCandidate)))
TURN_RECORD = flat_record(
    StoredTurn, grounding_source=GroundingSource, refusal_emitted=optional(bool),
    hedge_injected=optional(bool), surface=SURFACE_RECORD.at("surface_"),
    fields=TURN_FIELDS_RECORD.at("fields_"))
ASSESSMENT_RECORD = flat_record(StoredAssessment, assessment=flat_record(
    ContractAssessment, missing_bindings=json_tuple, unresolved_hazards=json_tuple,
    runnable=bool, evidence_spans=json_records(SourceSpan)), batch=BATCH_RECORD.at("batch_"))

RESIDUALS: RecordListing[ResidualFilter, StoredResidual] = RecordListing(
    "residuals", residuals_t, RESIDUAL_RECORD, ResidualFilter, one="residual",
    api_type="Residual", sightings=occurrences_t, counter=residuals_from_tallies,
    facets=residual_facets_of, facets_type="ResidualFacets", sightings_exported="occurrences",
    list_help="Residuals, in `order`.",
    filter_help="A residual's batch is the one that first stored it; with a range, "
                "residualFacets' occurrences are the sightings recorded in the batches of the "
                "range.",
    one_help="One residual by its residual_id (64 hex digits).",
    facets_help="Counts by kind, axis, organ, family and code, filtered.")
SURFACES: RecordListing[SurfaceFilter, StoredSurface] = RecordListing(
    "surfaces", surfaces_t, SURFACE_RECORD, SurfaceFilter, one="surface", api_type="Surface",
    sightings=surface_sightings_t, facets=surface_facets_of, facets_type="SurfaceFacets",
    sightings_exported="sightings",
    list_help="Surfaces with their provenance, in `order`.",
    filter_help="A surface's batch is the one that first stored it.",
    one_help="One surface by its surface_id (64 hex digits).",
    facets_help="Counts by grounding source, corpus, intent and verification.")
# Derived (revision 0011), not listed on its own: read joined to each turn.
TURN_FIELDS: RecordListing[Filter, TurnFields] = RecordListing(
    "turn_fields", turn_fields_t, TURN_FIELDS_RECORD, exported=False)
TURNS: RecordListing[TurnFilter, StoredTurn] = RecordListing(
    "turns", turns_t, TURN_RECORD, TurnFilter, one="turn", api_type="Turn",
    # A turn's surface was stored by its batch or an earlier one: only turns need the
    # snapshot; the surface's sightings are counted as of it. Its fields were written with
    # it (outer: a missing row, which verify names, hides no turn).
    joined=(Joined(SURFACES, "surface_id", prefix="surface_", filtered=True),
            Joined(TURN_FIELDS, "turn_key", prefix="fields_", filtered=True, outer=True)),
    time_ordered=in_time_order, paged_by_key=True,
    facets=turn_facets_of, facets_type="TurnFacets",
    list_help="CORE turns in `order` (not MOST_SEEN; TIME_ASC and TIME_DESC by CORE's own "
              "timestamp), with the surface each emitted: which turns were grounded by what.",
    one_help="One turn by its turn_key (64 hex digits).",
    filter_help="Verification, corpus, chain and form are the emitted surface's; the batch "
                "range is the turn's own batch. journal is a journal's id (its turn 1's "
                "turnKey); timeFrom and timeTo bound CORE's own timestamp, inclusive, each "
                "an ISO 8601 time with an offset.",
    facets_help="Turns counted by grounding source, verification, epistemic state, normative "
                "clearance and corpus.")
BATCHES: RecordListing[Filter, Batch] = RecordListing(
    "batches", batches_t, BATCH_RECORD, api_type="Batch",
    list_help="Ingest batches in `order` (not MOST_SEEN).")
ASSESSMENTS: RecordListing[AssessmentFilter, StoredAssessment] = RecordListing(
    "assessments", assessments_t, ASSESSMENT_RECORD, AssessmentFilter, one="assessment",
    api_type="Assessment", joined=(Joined(BATCHES, "batch_id", prefix="batch_"),),
    list_help="Assessments in `order` (not MOST_SEEN).",
    one_help="One assessment by its assessment_id.")

# Every listing, in the order the API serves them.
LISTINGS: Mapping[str, RecordListing[Any, Any]] = {listing.name: listing for listing in (
    RESIDUALS, SURFACES, TURNS, ASSESSMENTS, BATCHES)}


def check_listings(listings: Mapping[str, RecordListing[Any, Any]] = LISTINGS,
                   kinds: Mapping[str, RecordKind] = KINDS_BY_TABLE) -> None:
    """Each listing's table is a ledgered record kind with a one-column key, and its
    sightings name that key: a declaration that disagrees fails when the module loads."""
    problems = []
    for name, listing in listings.items():
        kind = kinds.get(listing.table.name)
        if kind is None or not kind.ledgered or len(kind.key) != 1:
            problems.append(f"{name}: {listing.table.name} is not a ledgered record kind "
                            "with a one-column key")
        elif listing.sightings is not None and listing.key not in listing.sightings.c:
            problems.append(f"{name}: its sightings have no {listing.key} column")
    if problems:
        raise TypeError("; ".join(problems))


check_listings()

# The names callers knew before listings were declared: each listing's list, count, get.
list_residuals, count_residuals, residual_by_id = RESIDUALS.list, RESIDUALS.count, RESIDUALS.get
list_surfaces, count_surfaces, surface_by_id = SURFACES.list, SURFACES.count, SURFACES.get
list_turns, count_turns, turn_by_key = TURNS.list, TURNS.count, TURNS.get
list_assessments, count_assessments, assessment_by_id = (
    ASSESSMENTS.list, ASSESSMENTS.count, ASSESSMENTS.get)

# Typed by the facets each listing's declaration builds.
residual_facets: Callable[[Connection, ResidualFilter | None, int | None], ResidualFacets] = (
    RESIDUALS.facet_counts)
surface_facets: Callable[[Connection, SurfaceFilter | None, int | None], SurfaceFacets] = (
    SURFACES.facet_counts)
turn_facets: Callable[[Connection, TurnFilter | None, int | None], TurnFacets] = (
    TURNS.facet_counts)


def list_batches(connection: Connection, first: int | None = None, after: str | None = None,
                 **page: Unpack[PageArgs]) -> Page[Batch]:
    """Ingest batches (they take no filter)."""
    return BATCHES.list(connection, None, first, after, **page)


def count_batches(connection: Connection, as_of: int | None = None) -> int:
    return BATCHES.count(connection, None, as_of)
