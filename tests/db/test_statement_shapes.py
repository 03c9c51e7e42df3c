"""Page and count statements kept by shape (store/db/queries/statement_shapes.py), on both
backends: a statement built for one request and run with another's values answers what a
statement built for the other would (property test over filters, orders, cursors and
directions); a second request of the same shape builds nothing; what the store decides (a
column's nulls) is asked per request, so a store that changed between two requests of one
shape is read as it is now.

The reference is the per-request path (`shaped_filter` answering None, as it does for reads
as of a tree head), which tests/db/test_list_orders.py checks against written-out values.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cli_runs import cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_values import MISSING_ROLE_CODES
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import (
    AssessmentFilter,
    Order,
    ResidualFilter,
    SurfaceFilter,
    TurnFilter,
)
from store.db.queries import listings as listings_module
from store.db.queries import pages as pages_module
from store.db.queries.filters import ColumnFilter, shaped_filter
from store.model.journal_digest import TraceIntegrity
from store.model.surface_records import SurfaceVerification
from store.model.taxonomy import ResidualKind, ResidualSourceAxis
from store.model.teaching_surface import GroundingSource
from store.model.turns import NormativeClearance, TurnKind


@contextmanager
def per_request() -> Iterator[None]:
    """Every statement built per request, as before statements were kept by shape."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(listings_module, "shaped_filter", lambda where: None)
        yield


def calls_to(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    """The arguments of each call to `module.name` from now on (it still runs)."""
    calls: list[Any] = []
    real = getattr(module, name)

    def counted(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(module, name, counted)
    return calls


def answer(db: AuditStore, name: str, where: Any, order: Order, size: int,
           backwards: bool, cursor: str | None) -> tuple[Any, ...]:
    listing = queries.LISTINGS[name]
    if backwards:
        page = db.execute(listing.list, where, last=size, before=cursor, order=order)
    else:
        page = db.execute(listing.list, where, size, cursor, order=order)
    return ([item.seq for item in page.items], page.cursors, page.has_next_page,
            page.has_previous_page, db.execute(listing.count, where))


JUNK = ["no such value", "nul\x00inside"]  # matches nothing; the second cannot be stored
RESIDUAL_FIELDS = {
    "kind": st.sampled_from(list(ResidualKind)),
    "axis": st.sampled_from(list(ResidualSourceAxis)),
    "organ": st.sampled_from(["unary_delta_transition", "state_assertion", "rate_change",
                              *JUNK]),
    "family_id": st.sampled_from([None, "delta", "state", *JUNK]),
    "code": st.sampled_from(["delta_quantity_unbound", "entity_unbound",
                             "changed_object_unbound", *JUNK]),
}
SURFACE_FIELDS = {
    "grounding_source": st.sampled_from(list(GroundingSource)),
    "verification": st.sampled_from(list(SurfaceVerification)),
    "corpus_id": st.sampled_from([None, "cognition_chains_v1", "cognition_chains_v2", *JUNK]),
    "subject": st.sampled_from([None, "light", "memory", "knowledge", *JUNK]),
}


TURN_FIELDS = {
    "grounding_source": st.sampled_from(list(GroundingSource)),
    "verification": st.sampled_from(list(SurfaceVerification)),
    "epistemic_state": st.sampled_from([None, "decoded", *JUNK]),
    "normative_clearance": st.sampled_from([None, *NormativeClearance]),
    "corpus_id": st.sampled_from([None, "cognition_chains_v1", *JUNK]),
    "kind": st.sampled_from(list(TurnKind)),
    "trace_integrity": st.sampled_from([None, *TraceIntegrity]),
    "turn_id": st.sampled_from([None, 1, 2, 3, 99]),
    "journal": st.sampled_from([None, "0" * 64]),  # a stored journal: drawn by the test
}
ASSESSMENT_FIELDS = {
    "organ": st.sampled_from(["unary_delta_transition", "state_assertion", *JUNK]),
    "source_ref": st.sampled_from([None, "no such source", *JUNK]),
    "batch_id": st.sampled_from([1, 2, 3, 4, 9]),
}
FIELDS = {"residuals": (ResidualFilter, RESIDUAL_FIELDS),
          "surfaces": (SurfaceFilter, SURFACE_FIELDS),
          "turns": (TurnFilter, TURN_FIELDS),
          "assessments": (AssessmentFilter, ASSESSMENT_FIELDS)}


@st.composite
def filters(draw: st.DrawFn, name: str) -> Any:
    kind, fields = FIELDS[name]
    chosen = draw(st.sets(st.sampled_from(sorted(fields)), max_size=3))
    given = {field: draw(st.lists(fields[field], min_size=0, max_size=3)) for field in chosen}
    if draw(st.booleans()):
        given["batch_id_from"] = draw(st.integers(0, 5))
    if draw(st.booleans()):
        given["batch_id_to"] = draw(st.integers(0, 5))
    return None if not given and draw(st.booleans()) else kind(**given)


ORDERS = {name: [o for o in queries.LISTINGS[name].orders if o is not Order.RANK]
          for name in FIELDS}


def with_stored_journal(db: AuditStore, data: st.DataObject, where: Any) -> Any:
    """A TurnFilter's journal list, sometimes with the stored journal's id in it."""
    if not isinstance(where, TurnFilter) or not where.journal or not data.draw(st.booleans()):
        return where
    (journal,) = db.execute(lambda c: c.exec_driver_sql(
        "SELECT DISTINCT journal_id FROM turn_fields WHERE journal_id IS NOT NULL"
    ).scalars().all())
    return replace(where, journal=[*where.journal, journal])


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), name=st.sampled_from(sorted(FIELDS)),
       size=st.integers(1, 6), backwards=st.booleans())
def test_a_statement_kept_for_its_shape_answers_another_requests_values(
        journal_db: AuditStore, data: st.DataObject, name: str, size: int,
        backwards: bool) -> None:
    order = data.draw(st.sampled_from(ORDERS[name]))
    # Two requests of one shape where they can be: the second reuses the first's statements.
    for _ in range(2):
        where = with_stored_journal(journal_db, data, data.draw(filters(name)))
        with per_request():
            first = answer(journal_db, name, where, order, size, backwards, None)
        assert answer(journal_db, name, where, order, size, backwards, None) == first
        # A page past the first page's far cursor, if it has one.
        cursors = first[1]
        if cursors:
            cursor = cursors[0] if backwards else cursors[-1]
            with per_request():
                expected = answer(journal_db, name, where, order, size, backwards, cursor)
            assert answer(journal_db, name, where, order, size, backwards, cursor) == expected


def test_residuals_of_one_kind_then_another_read_their_own_rows(
        journal_db: AuditStore) -> None:
    # Written out from the example files (spec_values): the residuals of kind missing_role,
    # then of unit_object_conflict (one), each page read by the same statement with its own
    # kind.
    def codes(kind: ResidualKind) -> list[str]:
        page = journal_db.execute(queries.list_residuals, ResidualFilter(kind=[kind]), 3)
        return [record.residual.residual_code for record in page.items]

    assert codes(ResidualKind.MISSING_ROLE) == MISSING_ROLE_CODES[:3]
    assert codes(ResidualKind.UNIT_OBJECT_CONFLICT) == ["unit_object_conflict"]
    assert codes(ResidualKind.MISSING_ROLE) == MISSING_ROLE_CODES[:3]


def test_a_second_request_of_one_shape_builds_no_statement(
        journal_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:
    built = calls_to(monkeypatch, pages_module, "_rows_statement")
    organs = ["unary_delta_transition", "state_assertion", "rate_change"]
    for organ in organs:  # one shape: an organ list, the first page, forwards, OLDEST_FIRST
        journal_db.execute(queries.list_residuals, ResidualFilter(organ=[organ]), 2,
                           order=Order.CODE_DESC)
    journal_db.execute(queries.list_residuals, ResidualFilter(organ=organs[:2], code=["x"]), 2,
                       order=Order.CODE_DESC)  # another shape: a code list besides
    assert len(built) <= 2  # at most once per shape (none if an earlier test built them)
    built.clear()
    for organ in organs:
        journal_db.execute(queries.list_residuals, ResidualFilter(organ=[organ]), 2,
                           order=Order.CODE_DESC)
    assert built == []


def test_a_cursor_of_the_wrong_kind_is_refused_and_leaves_the_shape_sound(
        journal_db: AuditStore) -> None:
    # A forged cursor with a number where CODE_DESC's key is a text (residual_code): refused
    # before any statement runs, and a real cursor of the same shape (an `after` on the first
    # page) then reads the rows a statement built for it alone reads.
    forged = base64.urlsafe_b64encode(b'["code_desc",0,5,1]').decode("ascii")
    with pytest.raises(queries.CursorError, match="after: malformed cursor"):
        journal_db.execute(queries.list_residuals, None, 2, forged, order=Order.CODE_DESC)
    first = journal_db.execute(queries.list_residuals, None, 2, order=Order.CODE_DESC)
    real = first.cursors[-1]
    with per_request():
        expected = answer(journal_db, "residuals", None, Order.CODE_DESC, 2, False, real)
    assert answer(journal_db, "residuals", None, Order.CODE_DESC, 2, False, real) == expected
    assert expected[0] != [item.seq for item in first.items]  # the page past it, not the first


def test_an_unsortable_order_is_refused_before_the_cursor_is_read(
        journal_db: AuditStore) -> None:
    # The order's refusal comes first, as when every statement was built per request.
    with pytest.raises(queries.QueryError, match="RANK orders a search's matches"):
        journal_db.execute(queries.list_residuals, ResidualFilter(kind=[]), 2, "not a cursor",
                           order=Order.RANK)


def _lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _ingest(db: Path | str, path: Path) -> None:
    result = cli("ingest", path, "--db", db, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["batches"]


def _two_journal_turns(db: Path | str, tmp_path: Path) -> None:
    """A journal's turns 1 and 2 ("first", "second"), a second apart, both "violated"."""
    _ingest(db, _lines(tmp_path / "a.jsonl", [
        journal_line(journal_entry(n, prompt, DISCLOSURE, "none"))
        for n, prompt in ((1, "first"), (2, "second"))]))


def _runtime_output(db: Path | str, tmp_path: Path, prompt: str) -> None:
    """A runtime output (core-interop.md: ChatResponse): no clearance, no CORE time."""
    _ingest(db, _lines(tmp_path / "b.jsonl", [json.dumps({
        "prompt": prompt, "surface": DISCLOSURE, "grounding_source": "none",
        "epistemic_state": "decoded"})]))


def test_a_column_that_gains_a_null_is_read_with_it_by_the_same_shape(
        store_db: Path | str, tmp_path: Path) -> None:
    # Turns by their normative clearance: first a journal's two turns, both "violated";
    # then a runtime output without a clearance (core-interop.md: ChatResponse). Its row is
    # the order's second part (no value, last): a statement kept from the first read, which
    # had no such part, would not read it.
    _two_journal_turns(store_db, tmp_path)
    with AuditStore.open(str(store_db)) as db:
        def prompts() -> list[str]:
            page = db.execute(queries.list_turns, None, 10, order=Order.CLEARANCE_ASC)
            return [turn.prompt for turn in page.items]

        assert prompts() == ["first", "second"]
        _runtime_output(store_db, tmp_path, "unjudged")
        assert prompts() == ["first", "second", "unjudged"]


def test_a_store_that_gains_a_turn_without_a_time_reads_it_in_time_orders(
        store_db: Path | str, tmp_path: Path) -> None:
    # CORE time orders put turns without a time last (one part of their own, read only
    # when the store holds such a turn): the answer is asked per request and is part of the
    # shape, so the statement kept while every turn had a time does not hide the new one.
    _two_journal_turns(store_db, tmp_path)
    with AuditStore.open(str(store_db)) as db:
        def prompts(order: Order) -> list[str]:
            page = db.execute(queries.list_turns, None, 10, order=order)
            return [turn.prompt for turn in page.items]

        assert prompts(Order.TIME_DESC) == ["second", "first"]
        assert prompts(Order.TIME_ASC) == ["first", "second"]
        _runtime_output(store_db, tmp_path, "untimed")
        assert prompts(Order.TIME_DESC) == ["second", "first", "untimed"]
        assert prompts(Order.TIME_ASC) == ["first", "second", "untimed"]


def test_a_second_time_ordered_page_of_one_shape_builds_no_statement(
        journal_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # The Workbench's timeline: turns newest first by CORE time, page after page.
    with per_request():
        expected = [answer(journal_db, "turns", None, Order.TIME_DESC, 2, False, None)]
        while expected[-1][2]:  # has a next page
            expected.append(answer(journal_db, "turns", None, Order.TIME_DESC, 2, False,
                                   expected[-1][1][-1]))
    answer(journal_db, "turns", None, Order.TIME_DESC, 2, False, expected[0][1][-1])
    built = calls_to(monkeypatch, pages_module, "_rows_statement")
    pages = [answer(journal_db, "turns", None, Order.TIME_DESC, 2, False, None)]
    while pages[-1][2]:
        pages.append(answer(journal_db, "turns", None, Order.TIME_DESC, 2, False,
                            pages[-1][1][-1]))
    assert pages == expected
    assert len(pages) == 3  # the journal's six turns, two a page
    assert built == []


def facets(db: AuditStore, name: str, where: Any) -> Any:
    return db.execute(queries.LISTINGS[name].facet_counts, where)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), name=st.sampled_from(["residuals", "surfaces", "turns"]))
def test_a_facet_statement_kept_for_its_shape_answers_another_requests_values(
        journal_db: AuditStore, data: st.DataObject, name: str) -> None:
    listing = queries.LISTINGS[name]
    stored = [record.seq for record in journal_db.execute(listing.list, None, 4).items]
    ids = [journal_db.execute(lambda c, seq=seq: c.exec_driver_sql(
        f"SELECT {listing.key} FROM {listing.table.name} WHERE seq = {seq}").scalar_one())
        for seq in stored]
    for _ in range(2):  # two requests of one shape where they can be
        where = with_stored_journal(journal_db, data, data.draw(filters(name)))
        if where is not None and data.draw(st.booleans()):  # an id list: counted from rows
            chosen = data.draw(st.lists(st.sampled_from([*ids, "0" * 64]), max_size=3))
            where = replace(where, **{listing.key: chosen})
        with per_request():
            expected = facets(journal_db, name, where)
        assert facets(journal_db, name, where) == expected


def test_turn_facets_unfiltered_are_read_by_the_kept_statement(
        journal_db: AuditStore) -> None:
    with per_request():
        expected = facets(journal_db, "turns", None)
    assert facets(journal_db, "turns", None) == expected
    assert expected.total > 0


def test_a_second_facet_request_of_one_shape_builds_no_statement(
        journal_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:
    built = calls_to(monkeypatch, listings_module, "facet_statement")
    kinds = [ResidualKind.MISSING_ROLE, ResidualKind.UNIT_OBJECT_CONFLICT]
    for kind in kinds:
        facets(journal_db, "residuals", ResidualFilter(kind=[kind]))
    assert len(built) <= 1  # once for the shape (none if an earlier test built it)
    built.clear()
    counts = [facets(journal_db, "residuals", ResidualFilter(kind=[kind])) for kind in kinds]
    assert built == []
    # Each request read with its own kind: written out from the example files (spec_values),
    # the missing_role residuals, then the one unit_object_conflict.
    assert [f.value for f in counts[0].by_kind] == ["missing_role"]
    assert counts[0].total == len(MISSING_ROLE_CODES)
    assert [(f.value, f.count) for f in counts[1].by_kind] == [("unit_object_conflict", 1)]


@pytest.mark.parametrize("given", [
    AssessmentFilter(organ=["state_assertion"], source_ref=[None, "x"], batch_id=[2]),
    TurnFilter(grounding_source=[GroundingSource.NONE], verification=[None],
               journal=["0" * 64], turn_id=[1], kind=[TurnKind.WORKBENCH_JOURNAL]),
], ids=["assessments", "turns"])
def test_a_filter_that_adds_conditions_adds_them_only_for_fields_without_a_column(
        given: ColumnFilter) -> None:
    # shaped_filter keeps statements for such a filter when those fields are not given, as
    # the conditions are then ColumnFilter's own: the same SQL with the same values.
    def compiled(conditions: list[Any]) -> list[tuple[str, Any]]:
        return [(str(c.compile()), c.compile().params) for c in conditions]

    assert compiled(type(given).conditions(given)) == compiled(ColumnFilter.conditions(given))
    extra = (replace(given, runnable=True) if isinstance(given, AssessmentFilter)
             else replace(given, time_from=datetime(2026, 7, 30, tzinfo=UTC)))
    assert len(type(extra).conditions(extra)) == len(ColumnFilter.conditions(given)) + 1
    assert shaped_filter(extra) is None
    assert shaped_filter(given) is not None
