"""A document whose every root field is a listing's page built from its rows is answered
without strawberry's and graphql-core's execution (store/api/prepared_operations.py), byte for
byte as strawberry's own execution answers it; every document it does not answer — and every
check that refuses one — takes the usual path, with the same bytes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text
from starlette.testclient import TestClient
from test_page_executor import (  # noqa: F401  (fixtures)
    JOURNAL,
    RESIDUAL,
    WORKBENCH,
    clients,
    demo_db,
    same_bytes,
    server_app,
)

from store.api import prepared_operations
from store.api.prepared_operations import PreparedOperations
from store.api.schema import MAX_TOKENS
from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import occurrences as occurrences_module


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The root fields of each document the fast server answered without execution."""
    found: list[str] = []
    answer = PreparedOperations.answer

    async def counted(self: PreparedOperations, *args: Any) -> Any:
        result = await answer(self, *args)
        if result is not None:
            found.append(",".join(result.data))
        return result

    monkeypatch.setattr(PreparedOperations, "answer", counted)
    return found


@pytest.mark.parametrize(("operation", "variables", "fields"), [
    ("ResidualsByTaxonomy", {"kind": ["MISSING_ROLE", "HAZARD_BLOCKED"], "first": 3},
     ["residuals"]),
    ("ResidualCard", {"id": RESIDUAL, "turns": 1}, ["residual"]),
    ("ResidualWithOccurrences", {"id": RESIDUAL, "first": 1}, ["residual"]),
    ("ResidualsByTaxonomy", {}, ["residuals"]),
    ("LedgerStatus", {}, ["ledger,batches"]),
    # a page and, beside it, the facet counts: each in a worker thread of its own
    ("SurfacesByGroundingSource", {"groundingSource": ["TEACHING"], "first": 2},
     ["surfaces,surfaceFacets"]),
    ("FacetOverview", {}, ["residualFacets"]),
    ("FacetOverview", {"filter": {"kind": ["MISSING_ROLE"], "axis": ["ROLE"]}},
     ["residualFacets"]),
    ("DominantResidualKinds", {}, ["residualFacets"]),
    ("TurnFacetOverview", {"groundingSource": ["TEACHING"]}, ["turnFacets"]),
    # a turn with its construction, assessments and residuals: one read in one thread
    ("TurnDetail", {"journal": JOURNAL, "turnId": 2}, ["turn"]),
    ("TurnDetail", {"journal": JOURNAL, "turnId": 99}, ["turn"]),
    ("TurnsByGrounding", {"groundingSource": ["TEACHING", "VAULT"], "first": 2}, ["turns"]),
])
def test_the_workbench_lists_are_answered_without_execution(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        operation: str, variables: dict[str, Any], fields: list[str]) -> None:
    same_bytes(clients, WORKBENCH[operation], variables)
    assert answered == fields  # the fast server's; strawberry's own has none


PAGE = "totalCount pageInfo { hasNextPage endCursor } edges { cursor node { residualId seq } }"


@pytest.mark.parametrize(("query", "variables"), [
    (f"{{ a: residuals(first: 2) {{ {PAGE} }} b: residuals(order: MOST_SEEN, first: 1) "
     f"{{ nodes {{ residualKind }} }} __typename }}", {}),
    (f"query Q($skip: Boolean!) {{ residuals(first: 2) {{ {PAGE} }} "
     f"batches @skip(if: $skip) {{ totalCount }} }}", {"skip": True}),
    (f"query Q($skip: Boolean!) {{ residuals(first: 2) {{ {PAGE} }} "
     f"batches @skip(if: $skip) {{ totalCount }} }}", {"skip": False}),
    ("query Q { ...Root } fragment Root on Query { residuals(first: 2) { nodes { seq } } }",
     {}),
    ("query A { batches { totalCount } } query B { residuals(first: 1) { nodes { seq } } }",
     {"operationName": "B"}),
    ("{ assessments(first: 2, order: NEWEST_FIRST) { nodes { assessmentId runnable } } }", {}),
    ("{ residuals(first: 2) { nodes { seq } } ledger { treeSize rootHash origin checkpoint "
     "__typename } }", {}),
    ("query L($at: LogIndex) { ledger(asOf: $at) { treeSize rootHash } "
     "batches(asOf: $at) { totalCount } }", {"at": 29}),
])
def test_aliases_directives_fragments_and_named_operations_are_answered_alike(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        query: str, variables: dict[str, Any]) -> None:
    variables = dict(variables)  # the parameter is shared by both backends' runs
    operation = variables.pop("operationName", None)
    bodies = [client.post("/graphql", json={"query": query, "variables": variables,
                                            "operationName": operation})
              for client in clients]
    assert bodies[0].status_code == bodies[1].status_code == 200
    assert bodies[0].content == bodies[1].content
    assert b'"errors"' not in bodies[0].content
    assert len(answered) == 1


@pytest.mark.parametrize(("query", "variables", "shown"), [
    # the request's own mistakes, refused before execution
    ("query Q($first: Int) { residuals(first: $first) { nodes { seq } } }", {"first": "ten"},
     b"Int cannot represent non-integer value: 'ten'"),
    ("query A { batches { totalCount } } query B { residuals { nodes { seq } } }", {},
     b"Must provide operation name if query contains multiple operations."),
    ("{ residuals { nodes { seq nope } } }", {}, b"Cannot query field 'nope'"),
    # refused by the query layer while reading: answered by the usual path, with its error
    ("{ residuals(after: \"bm9wZQ\") { nodes { seq } } }", {}, b"after: malformed cursor"),
    ("{ residuals(first: 501) { nodes { seq } } }", {},
     b"first: must be between 0 and 500, got 501"),
    ("{ residuals(first: -1) { nodes { seq } } }", {}, b"first"),
    ("{ residuals(asOf: 100000000) { nodes { seq } } }", {}, b"asOf"),
    # not only pages of columns
    ("{ residuals(search: \"tom\", first: 2) { edges { snippet node { seq } } } }", {},
     b'"snippet"'),
    ("{ residuals(first: 2) { nodes { seq } } taxonomy { axes } }", {}, b'"axes"'),
    ("{ ledger { treeSize consistencyProof(fromSize: 1) { consistencyPath } } }", {},
     b'"consistencyPath"'),
    ("{ ledger(asOf: 100000000) { treeSize } }", {}, b"asOf"),
    ("{ residualFacets(asOf: 100000000) { total } }", {}, b"asOf"),
    # facet pages read their own values: not counted lists
    ("{ residualFacets { facet(field: ORGAN, first: 1) { values { value } } } }",
     {}, b'"facet"'),
    ("{ residualFacets { total facet(field: ORGAN) { hasMore } } }", {}, b'"total"'),
    ("{ residuals(first: 1) { nodes { occurrences(first: 1) { totalCount } } } }", {},
     b'"occurrences"'),
    # a record by id with a field below it that reads and has no reader of its own
    ("{ assessment(id: \"nope\") { residuals { residualId } } }", {}, b'"assessment":null'),
    ("{ assessment(id: \"nope\") { turn { turnKey } } }", {}, b'"assessment":null'),
])
def test_what_it_does_not_answer_takes_the_usual_path(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        query: str, variables: dict[str, Any], shown: bytes) -> None:
    body = same_bytes(clients, query, variables)
    assert shown in body
    assert answered == []


def test_a_variable_that_is_not_text_is_refused_as_before(
        clients: tuple[TestClient, TestClient], answered: list[str]) -> None:  # noqa: F811
    query = "query Q($organ: [String!]) { residuals(filter: {organ: $organ}) { nodes { seq } } }"
    # JSON's escape of a lone surrogate: a client library would refuse to encode one
    body = json.dumps({"query": query, "variables": {"organ": ["\ud800"]}}).encode()
    fast, plain = (client.post("/graphql", content=body,
                               headers={"content-type": "application/json"})
                   for client in clients)
    assert fast.status_code == plain.status_code and fast.content == plain.content
    assert b"Variable $organ[0]: not text (a lone surrogate, U+D800)" in fast.content
    assert answered == []


@pytest.fixture
def limited(demo_db: AuditStore, monkeypatch: pytest.MonkeyPatch  # noqa: F811
            ) -> Iterator[tuple[TestClient, TestClient]]:
    """The two servers with introspection off and an object limit of 10."""
    apps = [server_app(demo_db, plain_leaves=plain_leaves, monkeypatch=monkeypatch,
                       max_objects=10, introspection=False) for plain_leaves in (True, False)]
    with TestClient(apps[0], base_url="http://127.0.0.1") as fast, TestClient(
            apps[1], base_url="http://127.0.0.1") as plain:
        yield fast, plain


def test_the_servers_own_limits_hold(limited: tuple[TestClient, TestClient],
                                     answered: list[str]) -> None:
    body = same_bytes(limited, "{ residuals(first: 11) { nodes { seq } } }", {})
    assert b"over this server's limit of 10" in body
    body = same_bytes(limited, "{ residuals(first: 3) { nodes { seq } } }", {})
    assert body.count(b'"seq"') == 3
    body = same_bytes(limited, "{ __schema { queryType { name } } }", {})
    assert b"introspection" in body.lower()
    assert answered == ["residuals"]


def test_a_document_over_the_token_limit_is_refused_as_before(
        clients: tuple[TestClient, TestClient], answered: list[str]) -> None:  # noqa: F811
    fields = " ".join(["seq"] * MAX_TOKENS)
    body = same_bytes(clients, f"{{ residuals(first: 1) {{ nodes {{ {fields} }} }} }}", {})
    assert b"Document contains more than 5000 tokens" in body
    assert answered == []


def test_the_time_limit_answers_as_before(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        demo_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setattr(demo_db, "time_limit", 0.0)
    body = same_bytes(clients, WORKBENCH["ResidualsByTaxonomy"], {"first": 2})
    assert b"query stopped: it ran past the request's time limit" in body
    assert answered == []


def _most_seen(client: TestClient) -> str:
    """The demo store's most-seen residual's id, read through the API."""
    found = client.post("/graphql", json={"query": "{ residuals(order: MOST_SEEN, first: 1) "
                                                   "{ nodes { residualId occurrenceCount } } }"})
    node = found.json()["data"]["residuals"]["nodes"][0]
    assert node["occurrenceCount"] >= 2  # the cases below page through its sightings
    return str(node["residualId"])


SIGHTINGS = ("occurrenceCount occurrences(first: $first, after: $after, last: $last, "
             "before: $before, order: $order) { totalCount pageInfo { hasNextPage "
             "hasPreviousPage startCursor endCursor } edges { cursor node { seq ordinal "
             "problemText assessment { assessmentId runnable } batch { batchId source } } } }")
RECORD = ("query R($id: ID!, $first: Int, $after: String, $last: Int, $before: String, "
          "$order: Order = OLDEST_FIRST, $at: LogIndex) { residual(id: $id, asOf: $at) { "
          f"residualId residualKind evidenceSpans {{ text start }} {SIGHTINGS} }} }}")


@pytest.mark.parametrize("variables", [
    {"first": 2},
    {"first": 1, "order": "NEWEST_FIRST"},
    {"last": 2},
    {"first": 2, "at": 47},
    {"first": 0},
    {},
])
def test_a_record_and_its_sightings_are_read_in_one_thread(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        variables: dict[str, Any]) -> None:
    residual_id = _most_seen(clients[1])
    body = same_bytes(clients, RECORD, {"id": residual_id, **variables})
    assert residual_id.encode() in body and b'"errors"' not in body
    assert answered == ["residual"]


def test_the_next_page_of_sightings_and_the_workbench_document_are_answered_alike(
        clients: tuple[TestClient, TestClient], answered: list[str]) -> None:  # noqa: F811
    residual_id = _most_seen(clients[1])
    first = json.loads(same_bytes(clients, RECORD, {"id": residual_id, "first": 1}))
    cursor = first["data"]["residual"]["occurrences"]["pageInfo"]["endCursor"]
    body = same_bytes(clients, RECORD, {"id": residual_id, "first": 1, "after": cursor})
    assert json.loads(body)["data"]["residual"]["occurrences"]["pageInfo"][
        "hasPreviousPage"] is True
    body = same_bytes(clients, WORKBENCH["ResidualWithOccurrences"], {"id": residual_id})
    assert b'"problemText"' in body
    assert answered == ["residual", "residual", "residual"]


@pytest.mark.parametrize(("query", "shown", "fields"), [
    ("{ residual(id: \"nope\") { residualId } __typename }",
     b'{"data":{"residual":null,"__typename":"Query"}}', ["residual,__typename"]),
    # two reads, each in a worker thread of its own
    ("{ assessment(id: \"nope\") { assessmentId } surface(id: \"nope\") { surfaceId } }",
     b'{"data":{"assessment":null,"surface":null}}', ["assessment,surface"]),
])
def test_a_record_not_stored_is_null(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        query: str, shown: bytes, fields: list[str]) -> None:
    assert same_bytes(clients, query, {}) == shown
    assert answered == fields


@pytest.mark.parametrize(("variables", "shown"), [
    ({"after": "bm9wZQ"}, b"after: malformed cursor"),
    ({"first": 501}, b"first: must be between 0 and 500, got 501"),
    ({"first": 1, "last": 1}, b"last"),
    ({"at": 100000000}, b"asOf"),
])
def test_a_sightings_page_refused_is_answered_by_the_usual_path(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        variables: dict[str, Any], shown: bytes) -> None:
    residual_id = _most_seen(clients[1])
    body = same_bytes(clients, RECORD, {"id": residual_id, **variables})
    assert shown in body and b'"errors"' in body
    assert answered == []


def test_a_record_past_the_time_limit_answers_as_before(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        demo_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    residual_id = _most_seen(clients[1])
    monkeypatch.setattr(demo_db, "time_limit", 0.0)
    body = same_bytes(clients, RECORD, {"id": residual_id, "first": 2})
    assert b"query stopped: it ran past the request's time limit" in body
    assert answered == []


def test_one_of_two_pages_past_the_time_limit_is_named_as_graphql_core_names_it(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        demo_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Both pages are read at once; the assessments' never ends. graphql-core answers the
    residuals' page in time and stops the other at the limit: the error names `assessments`
    (column 48), not the page that answered (handed back past the deadline, every field
    would fail at once, the first named)."""
    listing = queries.LISTINGS["assessments"]
    original = type(listing).list

    def runaway(self: Any, connection: Any, *args: Any, **kwargs: Any) -> Any:
        if self is listing:
            connection.execute(text("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
                                    "FROM n) SELECT count(*) FROM n")).scalar_one()
        return original(self, connection, *args, **kwargs)

    monkeypatch.setattr(type(listing), "list", runaway)
    monkeypatch.setattr(demo_db, "time_limit", 1.0)
    body = same_bytes(clients, "{ residuals(first: 2) { nodes { residualId } } "
                               "assessments(first: 1) { nodes { assessmentId } } }", {})
    assert body == (b'{"data":null,"errors":[{"message":"query stopped: it ran past the '
                    b'request\'s time limit","locations":[{"line":1,"column":48}],'
                    b'"path":["assessments"],"extensions":{"code":"TIMEOUT"}}]}')
    assert answered == []


def test_sightings_past_the_time_limit_beside_a_page_are_named_as_graphql_core_names_them(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        demo_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A page and a record with its sightings are read at once, each in a worker thread; the
    sightings never end. Below the record's root, the closure fails as a value not
    completed, not as the time limit: the deadline hands the request back with a limit of
    its own, and graphql-core answers the page and names the record's `occurrences` (handed
    back past the deadline, both root fields would fail at once, the first named)."""
    residual_id = _most_seen(clients[1])
    original = occurrences_module.record_seq_page

    def runaway(connection: Any, *args: Any, **kwargs: Any) -> Any:
        connection.execute(text("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
                                "FROM n) SELECT count(*) FROM n")).scalar_one()
        return original(connection, *args, **kwargs)

    monkeypatch.setattr(occurrences_module, "record_seq_page", runaway)
    monkeypatch.setattr(demo_db, "time_limit", 1.0)
    body = json.loads(same_bytes(clients, "query P($id: ID!) { residuals(first: 2) { nodes { "
                                          "residualId } } residual(id: $id) { residualId "
                                          "occurrences(first: 1) { totalCount } } }",
                                 {"id": residual_id}))
    assert [error["path"] for error in body["errors"]] == [["residual", "occurrences"]]
    assert body["errors"][0]["extensions"] == {"code": "TIMEOUT"}
    assert len(body["data"]["residuals"]["nodes"]) == 2  # the page, answered in time
    assert answered == []


def test_facet_counts_past_the_time_limit_beside_a_page_are_named_as_graphql_core_names_them(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        demo_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """SurfacesByGroundingSource's page and facet counts are read at once, each in a worker
    thread; the counts never end. Their closure fails as a value not completed, not as the
    time limit: the deadline hands the request back with a limit of its own, and
    graphql-core names `surfaceFacets`, not the page that answered in time (handed back past
    the deadline, both would fail at once, the first named)."""
    def runaway(connection: Any, *args: Any) -> Any:
        connection.execute(text("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
                                "FROM n) SELECT count(*) FROM n")).scalar_one()

    monkeypatch.setattr(queries, "surface_facets", runaway)
    monkeypatch.setattr(demo_db, "time_limit", 1.0)
    body = json.loads(same_bytes(clients, WORKBENCH["SurfacesByGroundingSource"],
                                 {"groundingSource": ["TEACHING"], "first": 2}))
    assert [error["path"] for error in body["errors"]] == [["surfaceFacets"]]
    assert body["errors"][0]["extensions"] == {"code": "TIMEOUT"}
    assert body["data"] is None  # surfaceFacets is non-null: its error nulls the data
    assert answered == []


def test_a_document_sent_again_reuses_its_reads_for_the_same_variables_only(
        clients: tuple[TestClient, TestClient], answered: list[str],  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A view refreshed reuses its coerced variables and converted arguments; other variables
    # are read afresh, and past KEPT_READS pairs the kept reads start afresh.
    monkeypatch.setattr(prepared_operations, "KEPT_READS", 2)
    built: list[dict[str, Any]] = []
    reads = PreparedOperations._reads

    def counted(self: PreparedOperations, document: Any, variables: Any, *args: Any) -> Any:
        built.append(dict(variables))
        return reads(self, document, variables, *args)

    monkeypatch.setattr(PreparedOperations, "_reads", counted)
    missing_role = {"kind": ["MISSING_ROLE"], "first": 3}
    hazard = {"kind": ["HAZARD_BLOCKED"], "first": 3}
    sent = [missing_role, missing_role, hazard, missing_role, {"first": 1}, missing_role]
    bodies = [same_bytes(clients, WORKBENCH["ResidualsByTaxonomy"], variables)
              for variables in sent]
    assert answered == ["residuals"] * len(sent)  # every one by the fast server
    assert built == [missing_role, hazard, {"first": 1}, missing_role]
    assert bodies[0] == bodies[1] == bodies[3] == bodies[5] != bodies[2]
