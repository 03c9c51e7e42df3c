"""The bound on the objects a request may resolve: estimated from the document (nested pages
multiply, aliases and fragments count each time), refused before any SQL runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from graphql import parse, validate
from spec_values import LEDGER_LENGTH
from sqlalchemy import event
from starlette.testclient import TestClient

from store.api.app import create_app
from store.api.object_estimate import DEFAULT_MAX_OBJECTS, estimate_objects
from store.api.schema import build_schema
from store.db.audit_store import AuditStore

WORKBENCH = Path(__file__).resolve().parents[2] / "graphql" / "workbench"
SCHEMA = build_schema()._schema
FAN_OUT = "{ residuals(first: 500) { nodes { occurrences(first: 500) { nodes { seq } } } } }"


def estimate(query: str, variables: dict[str, Any] | None = None,
             operation: str | None = None) -> int:
    document = parse(query)
    assert validate(SCHEMA, document) == []  # the estimate runs only on valid documents
    return estimate_objects(SCHEMA, document, operation, variables)


@pytest.mark.parametrize(("query", "variables", "expected"), [
    ("{ ledger { treeSize } }", None, 1),
    ("{ taxonomy { kinds } }", None, 1),
    ("{ __typename }", None, 0),
    ("{ __schema { types { name fields { name } } } }", None, 0),  # bounded by the schema
    # a page: the connection, then `first` items in each list (default 50)
    ("{ residuals { nodes { residualId } } }", None, 1 + 50),
    ("{ residuals(first: 10) { totalCount pageInfo { hasNextPage } nodes { residualId } } }",
     None, 1 + 1 + 10),
    ("{ residuals(first: 10) { edges { cursor node { residualId } } } }", None, 1 + 10 + 10),
    # the example: nested pages multiply
    (FAN_OUT, None, 1 + 500 + 500 * (1 + 500)),
    ("{ residuals(first: 3) { nodes { occurrences(first: 4) { nodes { assessment { "
     "batch { batchId } } } } } } }", None, 1 + 3 + 3 * (1 + 4 + 4 + 4)),
    # a list without a page counts one item per parent
    ("{ assessments(first: 10) { nodes { residuals { residualId } } } }", None, 1 + 10 + 10),
    ("{ residualFacets { byKind { value } byCode { value } } }", None, 1 + 1 + 1),
    # a proof counts as 400 objects
    ("{ residuals(first: 10) { nodes { inclusionProof { leafIndex } } } }", None,
     1 + 10 + 10 * 400),
    ("{ ledger { consistencyProof(fromSize: 1) { first } } }", None, 1 + 400),
    # aliases and fragments count each time they are selected
    ("{ a: residuals(first: 10) { nodes { residualId } } "
     "b: residuals(first: 10) { edges { node { residualId } } } }", None, 11 + 21),
    ("{ residuals(first: 10) { nodes { ...R } } surfaces(first: 2) { nodes { "
     "... on Surface { occurrences(first: 3) { nodes { turnId } } } } } } "
     "fragment R on Residual { occurrences(first: 5) { nodes { seq } } }", None,
     (1 + 10 + 10 * (1 + 5)) + (1 + 2 + 2 * (1 + 3))),
    # page sizes from variables, their defaults, null (= default 50) and the cap
    ("query ($n: Int = 20) { residuals(first: $n) { nodes { seq } } }", None, 1 + 20),
    ("query ($n: Int = 20) { residuals(first: $n) { nodes { seq } } }", {"n": 100}, 1 + 100),
    ("query ($n: Int = 20) { residuals(first: $n) { nodes { seq } } }", {"n": None}, 1 + 50),
    ("query ($n: Int) { residuals(first: $n) { nodes { seq } } }", None, 1 + 50),
    ("{ residuals(first: 10000) { nodes { seq } } }", None, 1 + 500),
    ("query ($n: Int) { residuals(first: $n) { nodes { seq } } }", {"n": "x"}, 1 + 500),
    ("{ residuals(first: -5) { nodes { seq } } }", None, 1),
    # `changes`: its proof (400) and its entries, toSize - fromSize when both are numbers,
    # else a whole page of 1,000 (issue 32: entries were one object)
    ("{ changes(fromSize: 0) { entries { leafIndex } } }", None, 400 + 1000),
    ("{ changes(fromSize: 10, toSize: 30) { entries { leafIndex } } }", None, 400 + 20),
    ("{ changes(fromSize: 0, toSize: 5000) { entries { leafIndex } } }", None, 400 + 1000),
    ("query ($f: LogIndex!) { changes(fromSize: $f, toSize: 12) { entries { leafIndex } } }",
     {"f": 2}, 400 + 10),
    # no operation named: the largest, whichever the executor runs
    ("query A { ledger { treeSize } } query B { residuals { nodes { seq } } }", None, 51),
])
def test_estimates(query: str, variables: dict[str, Any] | None, expected: int) -> None:
    assert estimate(query, variables) == expected


def test_the_named_operation_is_estimated() -> None:
    document = "query A { ledger { treeSize } } query B { residuals { nodes { seq } } }"
    assert (estimate(document, operation="A"), estimate(document, operation="B"),
            estimate(document, operation="C")) == (1, 51, 0)


@pytest.mark.parametrize("path", sorted(WORKBENCH.glob("*.graphql")), ids=lambda p: p.stem)
def test_every_workbench_operation_fits_the_default_bound(path: Path) -> None:
    assert 0 < estimate(path.read_text(encoding="utf-8")) <= DEFAULT_MAX_OBJECTS


@pytest.fixture
def statements(example_db: AuditStore) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    event.listen(example_db.engine, "before_cursor_execute", record)
    yield seen
    event.remove(example_db.engine, "before_cursor_execute", record)


def test_a_fan_out_is_refused_before_it_runs(client: TestClient,
                                             statements: list[str]) -> None:
    response = client.post("/graphql", json={"query": FAN_OUT})
    # Refused before execution, as a validation rule: "If the request does not pass GraphQL
    # validation, status code 422 SHOULD be used." No data entry: nothing was executed.
    assert response.status_code == 422
    assert response.json() == {"errors": [{"message": (
        "this query may resolve 251001 objects, over this server's limit of 20000: ask for "
        "smaller pages (`first`) or fewer nested lists (each list in a page holds up to "
        "`first` items, default 50)"), "extensions": {"code": "LIMIT_EXCEEDED"}}]}
    assert statements == []


def test_thirty_aliased_changes_are_refused_before_they_run(client: TestClient,
                                                          statements: list[str]) -> None:
    """Issue 32: 30 aliases of `changes { entries }` resolved 29,430 entries past
    --max-objects 20000; each now counts its page of entries."""
    query = "{ " + " ".join(f"c{i}: changes(fromSize: 0) {{ entries {{ entry }} }}"
                            for i in range(30)) + " }"
    response = client.post("/graphql", json={"query": query})
    assert response.status_code == 422 and "data" not in response.json()  # nothing executed
    assert response.json()["errors"][0]["message"].startswith(
        "this query may resolve 42000 objects, over this server's limit of 20000")
    assert statements == []


def test_the_bound_is_the_servers_setting(example_db: AuditStore) -> None:
    app = create_app(example_db, close_db_on_shutdown=False, max_objects=51)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        at_bound = client.post("/graphql", json={
            "query": "{ residuals { nodes { seq } } }"}).json()
        assert len(at_bound["data"]["residuals"]["nodes"]) == 12
        over = client.post("/graphql", json={
            "query": "{ residuals { nodes { seq } } ledger { treeSize } }"}).json()
        assert over["errors"][0]["message"].startswith(
            "this query may resolve 52 objects, over this server's limit of 51:")
        assert client.post("/graphql", json={"query": "{ ledger { treeSize } }"}).json() == {
            "data": {"ledger": {"treeSize": LEDGER_LENGTH}}}
