"""Compiled completion (store/api/compiled_completion.py): a plain selection is completed by
closures made once per document, never field by field, and answers byte for byte as
strawberry's own execution does — for random selections over the schema (aliases, fragments,
__typename, nested pages, fields with arguments beside plain ones), on both backends.

The Workbench documents, the docs' examples and the errors are compared in
tests/api/test_page_executor.py, whose fast server completes with the same closures.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import BACKENDS, pg_schema
from graphql import (
    GraphQLObjectType,
    get_named_type,
    is_leaf_type,
    is_non_null_type,
    parse,
)
from graphql.execution.collect_fields import FieldDetails
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.api.context import RequestContext
from store.api.error_codes import graphql_response
from store.api.page_executor import PageExecutor
from store.api.prepared_operations import PlainResult
from store.api.response_json import PlainResponse, response_json
from store.api.schema import build_schema
from store.db.audit_store import AuditStore

REPO = Path(__file__).resolve().parents[2]
WORKBENCH = REPO / "graphql" / "workbench"
# The demo store's Workbench journal (examples/workbench_turn_journal.jsonl): its turn 1's key.
JOURNAL = "15b77b7d1f3439a700a09b5518b02b45963d07c235161307df3f37a788d89ce1"
FAST, PLAIN = build_schema(), build_schema(plain_leaves=False)
# The list roots the random selections start from (small pages: the object limit stays far).
ROOTS = ["residuals(first: 3)", "turns(first: 3)", "surfaces(first: 3)",
         "assessments(first: 3)", "batches(first: 2)", "journals(first: 2)",
         "residuals(first: 2, asOf: 47)", "turns(first: 2, order: TIME_DESC)",
         f'journal(id: "{JOURNAL}")']


@pytest.fixture(scope="module", params=BACKENDS)
def demo_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[AuditStore]:
    """The store the docs' examples read (every example file in name order), once per
    backend for the module: the tests only read it."""
    def built(url: str) -> Iterator[AuditStore]:
        with AuditStore.open(url) as store:
            for path in sorted((REPO / "examples").glob("*.jsonl")):
                store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
        # A time limit no loaded machine reaches: a random selection's inclusion proofs are
        # slow to read, and the time limit's own answer is compared in test_page_executor.py.
        with AuditStore.open(url, read_only=True, time_limit=600) as db:
            yield db

    if request.param == "sqlite":
        yield from built(f"sqlite:///{tmp_path_factory.mktemp('compiled') / 'audit.db'}")
        return
    with pg_schema() as url:
        yield from built(url)


def answer(schema: Any, db: AuditStore, document: str,
           variables: dict[str, Any] | None = None) -> str:
    """The response body's JSON as the server writes it (data, then coded errors)."""
    async def run() -> Any:
        return await schema.execute(document, variable_values=variables,
                                    context_value=RequestContext(db))

    result = asyncio.run(run())
    return json.dumps(graphql_response(result.data, result.errors or []), ensure_ascii=False)


def executed_parents(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The parent type of every field graphql-core executes itself, as they come."""
    executed: list[str] = []
    execute_field = PageExecutor.execute_field

    def counted(self: PageExecutor, parent_type: Any, *args: Any) -> Any:
        executed.append(parent_type.name)
        return execute_field(self, parent_type, *args)

    monkeypatch.setattr(PageExecutor, "execute_field", counted)
    return executed


def test_a_timeline_page_completes_no_turn_field_through_graphql_core(
        demo_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:
    executed = executed_parents(monkeypatch)
    document = (WORKBENCH / "TraceTimeline.graphql").read_text(encoding="utf-8")
    body = answer(FAST, demo_db, document)
    assert body == answer(PLAIN, demo_db, document)
    assert body.count('"turnKey"') == 6  # the demo journal's six turns
    # The root field alone: its connection (pageInfo, `nodes`' resolver) and every row's
    # fields are completed by the closure.
    assert executed == ["Query"]


def test_a_turn_with_its_payloads_is_completed_by_one_closure(
        demo_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:
    document = ("query($j: ID!) { turn(journal: $j, turnId: 2) { turnKey turnId timestamp "
                "verdicts { identity safetyDetail } proposalCandidates { candidateId } "
                "surface { surfaceId surface } pipelineRecord fieldEvidence traceIntegrity } }")
    executed = executed_parents(monkeypatch)
    body = answer(FAST, demo_db, document, {"j": JOURNAL})
    assert executed == ["Query"]
    assert body == answer(PLAIN, demo_db, document, {"j": JOURNAL})
    assert '"turnId": 2' in body


def test_a_selection_with_a_directive_is_completed_by_graphql_core(
        demo_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:
    document = ("query($with: Boolean!) { turns(first: 2) { nodes { turnKey "
                "prompt @include(if: $with) } } }")
    executed = executed_parents(monkeypatch)
    for value in (True, False):
        body = answer(FAST, demo_db, document, {"with": value})
        assert body == answer(PLAIN, demo_db, document, {"with": value})
        assert ('"prompt"' in body) is value
    assert "Turn" in executed  # the rows' fields: graphql-core's own execution


def _selection(draw: st.DrawFn, object_type: GraphQLObjectType, depth: int) -> str:
    """A random selection set on `object_type`: fields with no required argument, aliased
    or not, some in inline or named fragments, objects nested `depth` levels at most."""
    names = sorted(name for name, field in object_type.fields.items()
                   if not any(is_non_null_type(arg.type) and arg.default_value is None
                              for arg in field.args.values()))
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=5, unique=True))
    parts: list[str] = []
    for index, name in enumerate(chosen):
        field = object_type.fields[name]
        named = get_named_type(field.type)
        arguments = "(first: 2)" if "first" in field.args else ""
        alias = draw(st.sampled_from(["", f"a{depth}_{index}: "]))
        if is_leaf_type(named):
            parts.append(f"{alias}{name}{arguments}")
        elif isinstance(named, GraphQLObjectType) and depth > 0:
            inner = _selection(draw, named, depth - 1)
            parts.append(f"{alias}{name}{arguments} {{ {inner} }}")
    if draw(st.booleans()):
        parts.append("__typename")
    if not parts:
        parts.append("__typename")
    if draw(st.booleans()):  # the same selection through an inline fragment
        return f"... on {object_type.name} {{ {' '.join(parts)} }}"
    return " ".join(parts)


@st.composite
def documents(draw: st.DrawFn) -> str:
    query_type = FAST._schema.query_type
    root = draw(st.sampled_from(ROOTS))
    root_type = get_named_type(query_type.fields[root.split("(")[0]].type)
    assert isinstance(root_type, GraphQLObjectType)
    selection = _selection(draw, root_type, draw(st.integers(1, 4)))
    if draw(st.booleans()):  # and through a named fragment
        return (f"query {{ {root} {{ ...Picked }} }} "
                f"fragment Picked on {root_type.name} {{ {selection} }}")
    return f"{{ {root} {{ {selection} }} }}"


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(document=documents())
def test_random_selections_answer_the_same_bytes(demo_db: AuditStore, document: str) -> None:
    fast = answer(FAST, demo_db, document)
    assert fast == answer(PLAIN, demo_db, document), document


def _argumentless(draw: st.DrawFn, object_type: GraphQLObjectType, depth: int) -> str:
    """A random selection set of `object_type`'s fields without arguments (what a list's page
    may be built from its rows with), objects nested `depth` levels at most."""
    parts: list[str] = []
    names = sorted(name for name, field in object_type.fields.items() if not field.args)
    for index, name in enumerate(draw(st.lists(st.sampled_from(names), min_size=1,
                                               max_size=6, unique=True))):
        named = get_named_type(object_type.fields[name].type)
        alias = draw(st.sampled_from(["", f"n{depth}_{index}: "]))
        if is_leaf_type(named):
            parts.append(f"{alias}{name}")
        elif isinstance(named, GraphQLObjectType) and depth > 0:
            parts.append(f"{alias}{name} {{ {_argumentless(draw, named, depth - 1)} }}")
    if draw(st.booleans()) or not parts:
        parts.append("__typename")
    return " ".join(parts)


PAGE_ROOTS = ["turns(first: 3)", "turns(first: 2, order: TIME_DESC, asOf: 83)",
              "surfaces(first: 3)", "residuals(first: 3)", "assessments(first: 2)"]


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_node_selections_of_a_page_answer_the_same_bytes(
        demo_db: AuditStore, data: st.DataObject) -> None:
    """A page's nodes with random selections of fields without arguments (objects and lists
    in them too): built from the page's rows (prepared_pages.py) where its plan can, by
    graphql-core otherwise, the same bytes as strawberry's own execution."""
    root = data.draw(st.sampled_from(PAGE_ROOTS))
    connection = get_named_type(FAST._schema.query_type.fields[root.split("(")[0]].type)
    assert isinstance(connection, GraphQLObjectType)
    node_type = get_named_type(connection.fields["nodes"].type)
    assert isinstance(node_type, GraphQLObjectType)
    selection = data.draw(st.composite(lambda draw: _argumentless(draw, node_type, 2))())
    document = f"{{ {root} {{ nodes {{ {selection} }} edges {{ cursor }} }} }}"
    fast = answer(FAST, demo_db, document)
    assert fast == answer(PLAIN, demo_db, document), document


@pytest.fixture(scope="module")
def record_roots(demo_db: AuditStore) -> list[str]:
    """Root fields read and completed in one worker thread by the server's prepared
    documents: one record by id (the demo store's most-seen residual, an assessment, a
    surface, and an id no record has), a journal's turn (by journal and turnId, by key, and
    asked for both ways: refused), and facet counts."""
    found = json.loads(answer(PLAIN, demo_db, (
        "{ residuals(order: MOST_SEEN, first: 1) { nodes { residualId } } "
        "assessments(first: 1) { nodes { assessmentId } } "
        "surfaces(first: 1) { nodes { surfaceId } } }")))["data"]
    residual = found["residuals"]["nodes"][0]["residualId"]
    return [f'residual(id: "{residual}")', f'residual(id: "{residual}", asOf: 47)',
            f'assessment(id: "{found["assessments"]["nodes"][0]["assessmentId"]}")',
            f'surface(id: "{found["surfaces"]["nodes"][0]["surfaceId"]}")',
            'residual(id: "nope")', f'turn(journal: "{JOURNAL}", turnId: 2)',
            f'turn(journal: "{JOURNAL}", turnId: 1, asOf: 83)', f'turn(id: "{JOURNAL}")',
            f'turn(id: "{JOURNAL}", turnId: 1)', "residualFacets", "residualFacets(asOf: 47)",
            'residualFacets(filter: {kind: [MISSING_ROLE]})', "turnFacets", "surfaceFacets"]


def prepared_answer(db: AuditStore, document: str) -> str | None:
    """The body the server's prepared documents answer (as answer() writes it), or None where
    they hand the document to the usual path."""
    prepared = FAST.prepared
    assert prepared is not None

    async def run() -> Any:
        return await prepared.answer(document, None, None, RequestContext(db))

    result = asyncio.run(run())
    if result is None:
        return None
    return json.dumps(graphql_response(result.data, result.errors or []), ensure_ascii=False)


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_selections_read_in_one_thread_answer_the_same_bytes(
        demo_db: AuditStore, record_roots: list[str], data: st.DataObject) -> None:
    root = data.draw(st.sampled_from(record_roots))
    object_type = get_named_type(FAST._schema.query_type.fields[root.split("(")[0]].type)
    assert isinstance(object_type, GraphQLObjectType)
    selection = data.draw(st.composite(lambda draw: _selection(draw, object_type, 3))())
    document = f"{{ {root} {{ {selection} }} }}"
    fast = prepared_answer(demo_db, document)
    if fast is not None:  # else the usual path answers it, compared above
        assert fast == answer(PLAIN, demo_db, document), document


def test_a_record_and_its_sightings_are_answered_by_the_prepared_documents(
        demo_db: AuditStore, record_roots: list[str]) -> None:
    """The property above compares what the prepared documents answer; this is what they
    answer: a record with its page of sightings, nested objects and all."""
    document = (f"{{ {record_roots[0]} {{ residualId occurrences(first: 2) {{ totalCount "
                "nodes { seq problemText assessment { assessmentId evidenceSpans { text } } "
                "batch { batchId } } } } }")
    fast = prepared_answer(demo_db, document)
    assert fast is not None and '"problemText"' in fast
    assert fast == answer(PLAIN, demo_db, document)


def _prepared_result(db: AuditStore, document: str) -> Any:
    prepared = FAST.prepared
    assert prepared is not None

    async def run() -> Any:
        return await prepared.answer(document, None, None, RequestContext(db))

    return asyncio.run(run())


def test_a_record_whose_leaves_are_texts_ints_and_bools_is_written_by_orjson(
        demo_db: AuditStore, record_roots: list[str]) -> None:
    # Strawberry writes json.dumps(response, separators=(",", ":")); a result marked plain
    # may be written by orjson (response_json.py), which must give the same bytes.
    document = (f"{{ {record_roots[0]} {{ residualId residualKind explanation occurrenceCount "
                "evidenceSpans { text start end } occurrences(first: 3) { totalCount pageInfo "
                "{ endCursor } nodes { problemText assessment { assessmentId runnable } batch "
                "{ batchId ingestedAt } } } } }")
    result = _prepared_result(demo_db, document)
    assert isinstance(result, PlainResult)
    response = graphql_response(result.data, result.errors or [])
    written = response_json(PlainResponse(response))
    assert isinstance(written, bytes)  # orjson's
    assert written == json.dumps(response, separators=(",", ":")).encode()
    assert b'"ingestedAt":"' in written


@pytest.mark.parametrize(("selection", "plain"), [
    ("turnKey turnId timestamp traceIntegrity refusalEmitted seq", True),
    # A JSON scalar's value may hold floats, which orjson and json.dumps spell differently.
    ("turnKey pipelineRecord", False),
])
def test_a_selection_is_plain_when_every_leaf_is_a_text_an_int_or_a_bool(
        selection: str, plain: bool) -> None:
    prepared = FAST.prepared
    assert prepared is not None
    field = parse(f"{{ turn {{ {selection} }} }}").definitions[0].selection_set.selections[0]
    turn_type = FAST._schema.get_type("Turn")
    details = [FieldDetails(field, None)]
    assert prepared.completions.of(turn_type, details, {}) is not None
    assert prepared.completions.compiled(turn_type, details, {})[1] is plain
