"""What the console knows of each record kind, in one table: its list (query, count, facets,
filter input, columns, orders), its record pages' table and key, and its export.

The list pages read through the same query functions as the GraphQL API's resolvers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from store.api.filter_types import INPUTS
from store.db import queries
from store.db.queries.browsing import (
    Facets,
    assessment_facets,
    batch_facets,
    count_batches_where,
    list_batches_where,
)
from store.db.queries.orders import column_orders
from store.db.queries.records import Page

Order = queries.Order
SEQ_ORDERS = (Order.OLDEST_FIRST, Order.NEWEST_FIRST)


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    href: str | None = None  # a console path, e.g. /residuals/<id>
    field: str | None = None  # the column's field, for the glossary's explanation
    mono: bool = False
    value: Any = None  # what the page's JSON gives when `text` shortens it (an id, a count)


@dataclass(frozen=True, slots=True)
class Column:
    heading: str
    cell: Callable[[Any], Cell]
    # The orders its heading links to, in turn (ascending, descending); () = not sortable.
    orders: tuple[queries.Order, ...] = ()


def by(column: str) -> tuple[queries.Order, queries.Order]:
    """A column's own orders: <COLUMN>_ASC, <COLUMN>_DESC."""
    return column_orders(column)


@dataclass(frozen=True, slots=True)
class ListKind:
    name: str  # the URL segment and the export kind
    title: str
    input_class: type[Any] | None  # the GraphQL filter input its parameters are read through
    page: Callable[..., Page[Any]]
    count: Callable[[Connection, Any, int | None], int]
    facets: Callable[[Connection, Any, int | None], Facets]
    columns: tuple[Column, ...]
    orders: tuple[queries.Order, ...]
    table: str  # the ledgered table of its records
    key_name: str  # what a record's id is called
    export: str | None  # `core-audit export` kind
    lists: tuple[str, ...] = ()  # without an input: its any-of string parameters
    describe: str = ""
    # Facets counted from an index rather than a tally: under this shorter limit of their
    # own, and left out (the page saying which and why) past it; None: with the page's reads.
    facet_seconds: float | None = None
    facet_index: tuple[str, ...] = ()  # ... the filter parameters that index serves
    facet_index_columns: tuple[str, ...] = ()  # ... and its columns


def _short(text: str | None, width: int = 90) -> str:
    if text is None:
        return "—"
    return text if len(text) <= width else text[: width - 1] + "…"


def _id(path: str, value: str) -> Cell:
    return Cell(value[:16] + "…", f"/{path}/{value}", mono=True, value=value)


def _batch(batch_id: int) -> Cell:
    return Cell(str(batch_id), f"/batches/{batch_id}", value=batch_id)


def _text(text: str | None, width: int = 90) -> Cell:
    """A long text shortened on the page, whole in its JSON."""
    return Cell(_short(text, width), value=text)


def _number(count: int, href: str | None = None) -> Cell:
    """A count with thousands separators (216,029), a number in the page's JSON."""
    return Cell(f"{count:,}", href, value=count)


# The values a facet shows on a list page; "show all" pages through the rest.
FACET_ROWS = 30


def _listing_facets(name: str, counted: dict[str, str], paged: tuple[str, ...] = ()
                    ) -> Callable[[Connection, Any, int | None], Facets]:
    """A listing's facets as the console shows them, by filter parameter: those its facets
    count together (`counted`: parameter -> the facets' list), then those read a page at a
    time (`paged`: parameters), their first FACET_ROWS values."""
    listing = queries.LISTINGS[name]

    def facets(connection: Connection, where: Any, as_of: int | None) -> Facets:
        f = listing.facet_counts(connection, where, as_of)
        fields = {param: getattr(f, attribute) for param, attribute in counted.items()}
        value_counts = {}
        for param in paged:
            page = listing.facet_page(connection, python_name(param), where, FACET_ROWS,
                                      None, as_of)
            fields[param], value_counts[param] = page.values, page.value_count
        return Facets(f.total, fields, value_counts)

    return facets


def python_name(param: str) -> str:
    """A filter parameter's query-layer name (chainId: chain_id)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in param)


def _batch_page(connection: Connection, where: Any, first: int | None = None,
                after: str | None = None, **options: Any) -> Page[Any]:
    return list_batches_where(connection, where, first, after, **options)


def _listed(name: str, title: str, facets: Callable[[Connection, Any, int | None], Facets],
            columns: tuple[Column, ...], describe: str, **more: Any) -> ListKind:
    """A kind the query layer lists (queries.LISTINGS): its list, count, orders, table, key
    and filter input are the listing's, as the API's resolvers use them."""
    listing = queries.LISTINGS[name]
    assert listing.filter_type is not None, name
    return ListKind(name, title, INPUTS[listing.filter_type], listing.list, listing.count,
                    facets, columns, listing.orders, listing.table.name, listing.key,
                    name if listing.exported else None, describe=describe, **more)


LIST_KINDS: dict[str, ListKind] = {kind.name: kind for kind in (
    _listed(
        "residuals", "Residuals", _listing_facets("residuals", {
            "kind": "by_kind", "axis": "by_axis", "organ": "by_organ", "familyId": "by_family",
            "code": "by_code"}),
        (Column("residual", lambda r: _id("residuals", r.residual.residual_id), by("ID")),
         Column("kind", lambda r: Cell(r.residual.residual_kind.name,
                                       field="kind"), by("KIND")),
         Column("axis", lambda r: Cell(r.residual.source_axis.name, field="axis"), by("AXIS")),
         Column("organ", lambda r: Cell(r.residual.candidate_organ), by("ORGAN")),
         Column("code", lambda r: Cell(r.residual.residual_code, mono=True), by("CODE")),
         Column("seen", lambda r: _number(r.occurrence_count), (Order.MOST_SEEN,)),
         Column("batch", lambda r: _batch(r.batch_id), SEQ_ORDERS)),
        describe="ADR-0225 ContractResiduals: refused assessments projected into a closed "
                 "taxonomy of kinds and source axes."),
    _listed(
        "assessments", "Assessments", assessment_facets,
        (Column("assessment", lambda a: _id("assessments", a.assessment_id), by("ID")),
         Column("organ", lambda a: Cell(a.assessment.candidate_organ), by("ORGAN")),
         Column("runnable", lambda a: Cell("yes" if a.assessment.runnable else "no"),
                by("RUNNABLE")),
         Column("problem", lambda a: _text(a.problem_text), by("PROBLEM_TEXT")),
         # A batch stores its rows in one run of seqs: batch order is append order.
         Column("batch", lambda a: _batch(a.batch.batch_id), SEQ_ORDERS)),
        describe="CORE's ContractAssessments, each in its problem, with the batch that stored "
                 "it.", facet_seconds=0.3, facet_index=("organ", "familyId", "runnable"),
        facet_index_columns=("candidate_organ", "runnable")),
    _listed(
        "surfaces", "Surfaces", _listing_facets("surfaces", {
            "groundingSource": "by_grounding_source", "verification": "by_verification",
            "corpusId": "by_corpus", "intent": "by_intent", "surfaceForm": "by_form"},
            ("chainId", "subject", "packId", "packVersion")),
        (Column("surface", lambda s: _id("surfaces", s.surface_id), by("ID")),
         Column("grounding", lambda s: Cell(s.grounding_source.name, field="groundingSource"),
                by("GROUNDING_SOURCE")),
         Column("verification", lambda s: Cell(s.verification.name, field="verification"),
                by("VERIFICATION")),
         Column("text", lambda s: _text(s.surface), by("TEXT")),
         Column("corpus", lambda s: Cell(s.corpus_id or "—", value=s.corpus_id), by("CORPUS")),
         Column("seen", lambda s: _number(s.occurrence_count), (Order.MOST_SEEN,))),
        describe="Answer surfaces with their grounding source (ADR-0052) and, for teaching, "
                 "their re-derivation against the reviewed chain."),
    _listed(
        "turns", "Turns", _listing_facets("turns", {
            "groundingSource": "by_grounding_source", "epistemicState": "by_epistemic_state",
            "normativeClearance": "by_normative_clearance", "verification": "by_verification",
            "corpusId": "by_corpus", "kind": "by_kind", "traceIntegrity": "by_trace_integrity",
            "surfaceForm": "by_form"}, ("chainId", "journal")),
        (Column("turn", lambda t: _id("turns", t.turn_key), by("ID")),
         Column("id", lambda t: Cell("—" if t.turn_id is None else str(t.turn_id),
                                     value=t.turn_id), by("TURN_ID")),
         Column("grounding", lambda t: Cell(t.grounding_source.name, field="groundingSource"),
                by("GROUNDING_SOURCE")),
         Column("state", lambda t: Cell(t.epistemic_state or "—", value=t.epistemic_state),
                by("EPISTEMIC_STATE")),
         Column("clearance", lambda t: Cell(
             "—" if t.normative_clearance is None else str(t.normative_clearance).upper(),
             field="normativeClearance"), by("CLEARANCE")),
         Column("prompt", lambda t: _text(t.prompt, 70), by("PROMPT")),
         Column("surface", lambda t: _id("surfaces", t.surface.surface_id), by("SURFACE_ID"))),
        # No tally counts turns: every facet reads every matching turn (3.7 s of CPU at 1M
        # turns, bench/facets.py), so the list is shown without them past this.
        facet_seconds=2.0,
        describe="CORE turns: Workbench journal lines kept verbatim, ChatRuntime outputs and "
                 "TurnEvents."),
    ListKind(
        "batches", "Batches", None, _batch_page, count_batches_where,
        batch_facets,
        (Column("batch", lambda b: _batch(b.batch_id), SEQ_ORDERS),
         Column("source", lambda b: _text(b.source, 60), by("SOURCE")),
         Column("type", lambda b: Cell(b.record_type), by("RECORD_TYPE")),
         Column("new rows", lambda b: _number(b.new_rows), by("NEW_ROWS")),
         Column("present", lambda b: _number(b.present_rows), by("PRESENT_ROWS")),
         Column("ingested at", lambda b: Cell(b.ingested_at, mono=True), by("INGESTED_AT"))),
        queries.LISTINGS["batches"].orders, "ingest_batches", "batch_id", None,
        lists=("recordType", "source"),
        describe="Ingest batches: the envelope of every write, each ending in a tree head."),
)}
