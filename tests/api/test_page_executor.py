"""PageExecutor (plain fields completed in one pass) answers byte for byte as strawberry's own
execution does: every Workbench operation and docs example, with and without variables, and
every kind of error (validation, variables, the query layer's, the time limit, the object
limit, a field whose value graphql-core refuses)."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from built_stores import BuiltStores
from sqlalchemy import text
from starlette.testclient import TestClient

from store.api import app as app_module
from store.api import schema as api_schema
from store.api.app import create_app
from store.api.page_executor import PageExecutor
from store.api.prepared_pages import PagePlans
from store.api.schema import build_schema
from store.api.types import Residual
from store.db.audit_store import AuditStore

REPO = Path(__file__).resolve().parents[2]
WORKBENCH = {path.stem: path.read_text(encoding="utf-8")
             for path in sorted((REPO / "graphql" / "workbench").glob("*.graphql"))}
DOCS = [block for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
        for block in re.findall(r"```graphql\n(.*?)```", page.read_text(encoding="utf-8"),
                                flags=re.S)]
# A residual of examples/adr_0225_frames.jsonl (seen twice), and a surface it holds.
RESIDUAL = "54b43aa2d7a9ec73c55f994d92be93d9f3148b28f72ac43c1f99fdf360f5fc42"
# The demo store's Workbench journal (examples/workbench_turn_journal.jsonl): its turn 1's key.
JOURNAL = "15b77b7d1f3439a700a09b5518b02b45963d07c235161307df3f37a788d89ce1"

# Variables for the Workbench operations: none (their defaults), and some that filter and page.
WORKBENCH_VARIABLES: dict[str, list[dict[str, Any]]] = {
    "DominantResidualKinds": [{}, {"filter": {"batchIdFrom": 2, "batchIdTo": 2}}],
    "FacetOverview": [{}, {"filter": {"kind": ["MISSING_ROLE"], "axis": ["ROLE"]}}],
    "LedgerStatus": [{}],
    "PracticeResiduals": [{"residualIds": [RESIDUAL, "0" * 64]}],
    "ResidualCard": [{"id": RESIDUAL}, {"id": RESIDUAL, "turns": 1}, {"id": "0" * 64}],
    "ResidualWithOccurrences": [{"id": RESIDUAL}, {"id": RESIDUAL, "first": 1},
                                {"id": "0" * 64}],
    "ResidualsByTaxonomy": [{}, {"kind": ["MISSING_ROLE", "HAZARD_BLOCKED"], "first": 3},
                            {"first": 500}, {"axis": ["ROLE"], "organ": ["nope"]}],
    "RunDetail": [{"journal": JOURNAL}, {"journal": JOURNAL, "first": 2}],
    "RunGroundingDistribution": [{"journal": JOURNAL}],
    "Runs": [{}, {"order": "NEWEST_FIRST", "first": 1}],
    "SurfacesByGroundingSource": [{}, {"groundingSource": ["TEACHING"], "first": 2}],
    "TeachingTurnsByChain": [{}, {"first": 1, "turns": 1}],
    "TraceTimeline": [{}, {"journal": [JOURNAL], "order": "TIME_DESC", "first": 2}],
    "TurnDetail": [{"journal": JOURNAL, "turnId": 2}, {"journal": JOURNAL, "turnId": 99}],
    "TurnFacetOverview": [{}, {"groundingSource": ["TEACHING"]}],
    "TurnsByGrounding": [{}, {"groundingSource": ["TEACHING", "VAULT"], "first": 2}],
}

# Documents written for what the fast path must get right besides the Workbench's.
SHAPES: list[tuple[str, dict[str, Any]]] = [
    ("{ __typename }", {}),
    ("{ residuals(first: 4) { __typename nodes { __typename residualId a: seq b: seq "
     "k: residualKind } } }", {}),
    ("query Q { residuals(first: 3) { ...Page } } fragment Page on ResidualConnection { "
     "edges { cursor node { ...R ... on Residual { seq sourceAxis } } } } "
     "fragment R on Residual { residualId residualKind occurrenceCount }", {}),
    ("query Q($with: Boolean!) { residuals(first: 3) { nodes { residualId "
     "familyId @include(if: $with) seq @skip(if: $with) } } }", {"with": True}),
    ("query Q($with: Boolean!) { residuals(first: 3) { nodes { residualId "
     "familyId @include(if: $with) seq @skip(if: $with) } } }", {"with": False}),
    ("{ residuals(first: 2) { nodes { residualId evidenceSpans { text start end "
     "sentenceIndex } occurrences(first: 1) { nodes { ordinal assessment { assessmentId "
     "runnable missingBindings batch { batchId source } } } } } } }", {}),
    ("{ assessments(first: 3) { nodes { assessmentId residuals { residualId residualKind } } "
     "} batches { nodes { batchId seq lines newRows } } taxonomy { kinds axes labels { label "
     "kind axis } } }", {}),
    ("{ residuals(first: 2, asOf: 47) { totalCount nodes { residualId occurrenceCount } } }",
     {}),
    # errors: an unknown field, a bad variable, a bad cursor, a page over the cap, an unknown
    # id, the object limit, an operation to choose
    ("{ residuals { nodes { residualId nope } } }", {}),
    ("query Q($first: Int) { residuals(first: $first) { nodes { seq } } }", {"first": "ten"}),
    ("query Q($kind: [ResidualKind!]) { residuals(filter: {kind: $kind}) { nodes { seq } } }",
     {"kind": ["NOT_A_KIND"]}),
    ("{ residuals(after: \"not-a-cursor\") { nodes { seq } } }", {}),
    ("{ residuals(first: 501) { totalCount nodes { seq } } }", {}),
    ("{ residual(id: \"nope\") { residualId } }", {}),
    ("{ residuals(first: 500) { nodes { occurrences(first: 500) { nodes { seq } } } } }", {}),
    ("query A { __typename } query B { residuals { totalCount } }", {}),
]


def server_app(db: AuditStore, *, plain_leaves: bool, monkeypatch: pytest.MonkeyPatch,
               **options: Any) -> Any:
    """The app over `db` (create_app's `options`), its schema's plain_leaves as given."""
    with monkeypatch.context() as patch:
        patch.setattr(app_module, "build_schema",
                      functools.partial(build_schema, plain_leaves=plain_leaves))
        return create_app(db, close_db_on_shutdown=False, **options)


@pytest.fixture
def demo_db(backend_url: str, built_stores: BuiltStores) -> Iterator[AuditStore]:
    """The store the docs' examples read (`core-audit demo`'s: every example file in name
    order, tree heads 29, 47, 66 and 83), on SQLite and on PostgreSQL: built once, read-only."""
    files = sorted((REPO / "examples").glob("*.jsonl"))
    with AuditStore.open(built_stores.shared(backend_url, files), read_only=True) as db:
        yield db


@pytest.fixture
def clients(demo_db: AuditStore, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[tuple[TestClient, TestClient]]:
    """Two servers of one store: PageExecutor's, and strawberry's own execution."""
    fast = server_app(demo_db, plain_leaves=True, monkeypatch=monkeypatch)
    plain = server_app(demo_db, plain_leaves=False, monkeypatch=monkeypatch)
    with TestClient(fast, base_url="http://127.0.0.1") as fast_client, TestClient(
            plain, base_url="http://127.0.0.1") as plain_client:
        yield fast_client, plain_client


def same_bytes(clients: tuple[TestClient, TestClient], query: str,
               variables: dict[str, Any]) -> bytes:
    """The body both servers answer (asserted equal byte for byte, and the status)."""
    fast, plain = (client.post("/graphql", json={"query": query, "variables": variables})
                   for client in clients)
    assert fast.status_code == plain.status_code
    assert fast.content == plain.content
    return fast.content


def test_the_server_runs_pages_with_the_page_executor(demo_db: AuditStore) -> None:
    schema = build_schema()
    assert schema.execution_context_class is PageExecutor
    assert build_schema(plain_leaves=False).execution_context_class is not PageExecutor


def test_plain_fields_are_completed_without_graphql_core(
        clients: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch) -> None:
    executed: list[str] = []
    execute_field = PageExecutor.execute_field

    def counted(self: PageExecutor, parent_type: Any, *args: Any) -> Any:
        executed.append(f"{parent_type.name}")
        return execute_field(self, parent_type, *args)

    monkeypatch.setattr(PageExecutor, "execute_field", counted)
    body = same_bytes(clients, WORKBENCH["ResidualsByTaxonomy"], {"first": 12})
    assert body.count(b'"residualId"') == 12
    # A document of listing pages runs no executor at all (store/api/prepared_operations.py).
    assert executed == []
    # Beside a field that is not a page, the root fields run through the executor; the
    # connection (totalCount, pageInfo, the 12 rows' edges, nodes and columns) is built from
    # the rows (store/api/prepared_pages.py), none of it through execute_field.
    beside = WORKBENCH["ResidualsByTaxonomy"].replace(
        "  residuals(", "  taxonomy { axes }\n  residuals(", 1)
    body = same_bytes(clients, beside, {"first": 12})
    assert body.count(b'"residualId"') == 12 and b'"taxonomy":{"axes":[' in body
    assert executed == ["Query", "Query"]


@pytest.mark.parametrize(("operation", "variables"), [
    (name, variables) for name, variable_sets in WORKBENCH_VARIABLES.items()
    for variables in variable_sets])
def test_workbench_operations_answer_the_same_bytes(
        clients: tuple[TestClient, TestClient], operation: str, variables: dict[str, Any]
) -> None:
    body = same_bytes(clients, WORKBENCH[operation], variables)
    assert body.startswith(b'{"data":{')


def test_every_workbench_operation_is_compared() -> None:
    assert set(WORKBENCH_VARIABLES) == set(WORKBENCH)


@pytest.mark.parametrize("block", DOCS)
def test_docs_examples_answer_the_same_bytes(clients: tuple[TestClient, TestClient],
                                             block: str) -> None:
    names = set(re.findall(r"\$(\w+)\s*:", block))
    same_bytes(clients, block, {"id": RESIDUAL} if "id" in names else {})


@pytest.mark.parametrize(("query", "variables"), SHAPES)
def test_aliases_fragments_directives_and_errors_answer_the_same_bytes(
        clients: tuple[TestClient, TestClient], query: str, variables: dict[str, Any]) -> None:
    same_bytes(clients, query, variables)


@pytest.mark.parametrize(("spoils", "shown"), [
    ([{"candidate_organ": 7}, {"family_id": None}, {"occurrence_count": True}],
     b'"candidateOrgan":"7"'),
    ([{"seq": 2**40}], b'"seq":1099511627776'),  # a LogIndex: past 2^31 as it is
    ([{"seq": 2**53 + 1}], b"LogIndex must be between 0 and 2^53 (9007199254740992), got "
                           b"9007199254740993"),
    ([{}, {"residual_kind": "bad"}], b"Enum 'ResidualKind' cannot represent value: 'bad'"),
    ([{}, {}, {"residual_code": None}],
     # graphql-core's TypeError, masked as any unexpected exception is
     b'"Internal error.","locations":[{"line":1,"column":81}],'
     b'"path":["residuals","nodes",2,"residualCode"]'),
])
def test_a_value_graphql_core_refuses_is_its_error_on_both_paths(
        clients: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch,
        spoils: list[dict[str, Any]], shown: bytes) -> None:
    """A plain leaf of another type, out of range, no enum member, or null where it may not
    be: graphql-core's own completion (the coerced text, the error) on both paths."""
    of = Residual.of.__func__  # type: ignore[attr-defined]
    pending: list[dict[str, Any]] = []

    def spoil(cls: type[Residual], record: Any, as_of: int | None = None) -> Residual:
        view = of(cls, record, as_of)
        return dataclasses.replace(view, **(pending.pop(0) if pending else {}))

    monkeypatch.setattr(Residual, "of", classmethod(spoil))
    # The views are spoiled: the page must be completed from them, not built from its rows
    # (rows spoiled alike: tests/api/test_prepared_pages.py).
    monkeypatch.setattr(PagePlans, "of_field", lambda *_: None)
    query = ("{ residuals(first: 8) { nodes { residualId candidateOrgan familyId residualKind "
             "residualCode seq occurrenceCount } } }")
    answers = []
    for client in clients:  # each server reads the same rows, spoiled alike
        pending[:] = [dict(spoil) for spoil in spoils]
        answers.append(client.post("/graphql", json={"query": query}).content)
    assert answers[0] == answers[1]
    assert shown in answers[0]


def test_the_time_limit_answers_the_same_bytes(
        clients: tuple[TestClient, TestClient], demo_db: AuditStore,
        monkeypatch: pytest.MonkeyPatch) -> None:
    def runaway(connection: Any, *_: object) -> None:
        connection.execute(text("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
                                "FROM n) SELECT count(*) FROM n")).scalar_one()

    monkeypatch.setattr(api_schema.queries, "residual_facets", runaway)
    # Long enough that the page beside the runaway finishes inside it on a loaded machine
    # (at 0.2 s a whole-suite run once stopped the page too, and the body named `residuals`).
    monkeypatch.setattr(demo_db, "time_limit", 1.0)
    body = same_bytes(clients, "{ residuals(first: 2) { nodes { residualId } } "
                               "residualFacets { total } }", {})
    assert b"query stopped: it ran past the request's time limit" in body
    assert b'"path":["residualFacets"]' in body
