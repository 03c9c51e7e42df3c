"""A listing's page built from its rows (store/api/prepared_pages.py) answers byte for byte as
strawberry's own execution does, in every order and direction, and hands anything it does not
answer as graphql-core would — a value that does not convert or coerce, a search, a selection
of more than columns — to the usual path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sent_sql import sent_statements
from starlette.testclient import TestClient
from test_page_executor import (  # noqa: F401  (fixtures)
    JOURNAL,
    RESIDUAL,
    WORKBENCH,
    clients,
    demo_db,
    same_bytes,
)

from store.api import prepared_pages
from store.db.audit_store import AuditStore
from store.db.queries import pages


@pytest.fixture
def prepared(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The listings whose pages were built from their rows, in request order."""
    built: list[str] = []
    read = prepared_pages.PagePlan.read

    def counted(self: prepared_pages.PagePlan, connection: Any, listing: Any,
                *args: Any) -> Any:
        answer = read(self, connection, listing, *args)
        if answer is not None:  # None: the usual path answers
            built.append(listing.name)
        return answer

    monkeypatch.setattr(prepared_pages.PagePlan, "read", counted)
    return built


@pytest.fixture
def pages_built(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Each page value a plan built from its rows, however its page was read (a listing's,
    or a journal's turns)."""
    built: list[dict[str, Any]] = []
    read_with = prepared_pages.PagePlan.read_with

    def counted(self: prepared_pages.PagePlan, *args: Any) -> Any:
        answer = read_with(self, *args)
        if answer is not None:  # None: the usual path answers
            built.append(answer.value)
        return answer

    monkeypatch.setattr(prepared_pages.PagePlan, "read_with", counted)
    return built


@pytest.mark.parametrize(("operation", "variables", "listing"), [
    ("ResidualsByTaxonomy", {"kind": ["MISSING_ROLE", "HAZARD_BLOCKED"], "first": 3},
     "residuals"),
    ("SurfacesByGroundingSource", {"groundingSource": ["TEACHING"], "first": 2}, "surfaces"),
    ("LedgerStatus", {}, "batches"),
    # each turn's verdicts and its surface's chains, hops and checked files (lists and
    # objects read from the row's columns)
    ("TurnsByGrounding", {}, "turns"),
    ("TurnsByGrounding", {"groundingSource": ["TEACHING", "VAULT"], "first": 2}, "turns"),
    ("PracticeResiduals", {"residualIds": [RESIDUAL, "0" * 64]}, "residuals"),
])
def test_the_workbench_lists_are_built_from_their_rows(
        clients: tuple[TestClient, TestClient], prepared: list[str], operation: str,  # noqa: F811
        variables: dict[str, Any], listing: str) -> None:
    same_bytes(clients, WORKBENCH[operation], variables)
    assert prepared == [listing]  # the fast server's; strawberry's own never plans


RESIDUAL_NODE = "residualId seq candidateOrgan familyId residualKind sourceAxis occurrenceCount"
PAGE = ("totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } "
        f"edges {{ cursor node {{ {RESIDUAL_NODE} }} }}")


@pytest.mark.parametrize("arguments", [
    "first: 3", "first: 0", "last: 2", "order: NEWEST_FIRST, first: 4",
    "order: MOST_SEEN, first: 5", "order: KIND_DESC, first: 4", "order: ORGAN_ASC, last: 3",
    "filter: {kind: [MISSING_ROLE]}, order: MOST_SEEN, first: 2", "first: 2, asOf: 47",
    "order: MOST_SEEN, first: 2, asOf: 29", "filter: {batchIdFrom: 2, batchIdTo: 3}, first: 3",
])
def test_every_order_and_direction_answers_the_same_bytes(
        clients: tuple[TestClient, TestClient], prepared: list[str],  # noqa: F811
        arguments: str) -> None:
    """Each page, then the page after it and the page before that (by the cursors given)."""
    query = f"query P($after: String, $before: String) {{ residuals({arguments}, " \
            f"after: $after, before: $before) {{ {PAGE} }} }}"
    body = same_bytes(clients, query, {})
    info = clients[0].post("/graphql", json={"query": query}).json()["data"]["residuals"]
    cursor = info["pageInfo"]["endCursor"] if "last" not in arguments else info[
        "pageInfo"]["startCursor"]
    if cursor is not None:
        moved = {"before": cursor} if "last" in arguments else {"after": cursor}
        same_bytes(clients, query, moved)
    assert prepared and set(prepared) == {"residuals"}
    assert body.startswith(b'{"data":{"residuals":{"totalCount":')


TIMELINE_NODE = ("turnKey journalId turnId timestamp promptExcerpt surfaceExcerpt traceHash "
                 "traceIntegrity groundingSource kind checkpointEmitted turnCostMs seq")


@pytest.mark.parametrize("arguments", [
    "first: 4", "order: TIME_DESC, first: 4", "order: TIME_ASC, last: 2",
    "order: NEWEST_FIRST, first: 3, asOf: 83", "first: 2, asOf: 66",
    "filter: {kind: [WORKBENCH_JOURNAL]}, order: CLEARANCE_DESC, first: 3",
])
def test_turns_paged_by_key_are_built_from_the_rows_read_by_key(
        clients: tuple[TestClient, TestClient], prepared: list[str],  # noqa: F811
        arguments: str) -> None:
    """A page of turns is cut by keys, then its rows read by key: built from those rows, its
    excerpts cut from their columns; then the page after it (or before it)."""
    query = (f"query T($after: String, $before: String) {{ turns({arguments}, after: $after, "
             f"before: $before) {{ pageInfo {{ hasNextPage hasPreviousPage startCursor "
             f"endCursor }} edges {{ cursor node {{ {TIMELINE_NODE} }} }} }} }}")
    same_bytes(clients, query, {})
    info = clients[0].post("/graphql", json={"query": query}).json()["data"]["turns"]
    moved = ({"before": info["pageInfo"]["startCursor"]} if "last" in arguments
             else {"after": info["pageInfo"]["endCursor"]})
    same_bytes(clients, query, moved)
    assert prepared and set(prepared) == {"turns"}


@pytest.mark.parametrize("as_of", ["", ", asOf: 83"])
def test_turns_read_by_key_read_only_the_columns_asked_for(
        clients: tuple[TestClient, TestClient], demo_db: AuditStore,  # noqa: F811
        prepared: list[str], as_of: str) -> None:
    """A page of turns asking for a few fields reads those columns of its turns by key, not
    each turn's verbatim line nor its surface's columns; asking for the surface's text reads
    that column too. The answers are strawberry's own, byte for byte."""
    def read_by_key(node: str) -> str:
        query = f"{{ turns(first: 3{as_of}) {{ nodes {{ {node} }} }} }}"
        same_bytes(clients, query, {})
        with sent_statements(demo_db) as sent:
            clients[0].post("/graphql", json={"query": query})  # the server with the plans
        # One statement (sent twice when a loaded machine cut its first try on the event
        # loop's thread short: AuditStore.run_quick reads it again in a read thread).
        (by_key,) = {sql for sql, _ in sent if "turns.turn_key IN" in sql}
        return by_key

    few = read_by_key("turnId prompt traceHash")
    assert "turns.prompt" in few and "turns.trace_hash" in few
    assert "turns.line" not in few and "surface_records.surface " not in few
    assert "turns.line" in read_by_key("turnId pipelineRecord")  # not a column: usual path
    assert "surface_records.surface AS surface_surface" in read_by_key("surfaceExcerpt")
    assert prepared and set(prepared) == {"turns"}


@pytest.mark.parametrize(("arguments", "turn_ids"), [
    ("first: 4", [1, 2, 3, 4]), ("last: 2", [5, 6]), ("first: 2, after: $after", [1, 2])])
@pytest.mark.parametrize("as_of", ["", ", asOf: 83"])
def test_a_journal_s_turns_are_built_from_their_rows(
        clients: tuple[TestClient, TestClient], pages_built: list[dict[str, Any]],  # noqa: F811
        arguments: str, turn_ids: list[int], as_of: str) -> None:
    """The Workbench's RunDetail: a journal's page of turns in turn order, read through its
    (journal_id, turn_seq) index, built from the rows read by key; then the page after it."""
    declared = "($after: String)" if "$after" in arguments else ""
    query = (f'query J{declared} {{ journal(id: "{JOURNAL}"{as_of}) {{ turnCount '
             f"turns({arguments}) {{ totalCount pageInfo {{ hasNextPage hasPreviousPage "
             f"endCursor }} nodes {{ {TIMELINE_NODE} }} }} }} }}")
    first = json.loads(same_bytes(clients, query, {}))["data"]["journal"]["turns"]
    assert pages_built == [first]  # the fast server's; strawberry's own never plans
    assert first["totalCount"] == 6  # the bundled journal's six turns
    assert [node["turnId"] for node in first["nodes"]] == turn_ids
    if declared:
        after = json.loads(same_bytes(clients, query, {"after": first["pageInfo"]["endCursor"]}))
        assert [node["turnId"] for node in after["data"]["journal"]["turns"]["nodes"]] == [3, 4]


def test_the_workbench_run_detail_is_built_from_its_rows(
        clients: tuple[TestClient, TestClient],  # noqa: F811
        pages_built: list[dict[str, Any]]) -> None:
    body = json.loads(same_bytes(clients, WORKBENCH["RunDetail"], {"journal": JOURNAL}))
    assert pages_built == [body["data"]["journal"]["turns"]]
    assert len(pages_built[0]["nodes"]) == 6


def test_the_trace_timeline_is_built_from_its_rows_with_core_s_excerpts(
        clients: tuple[TestClient, TestClient], prepared: list[str]) -> None:  # noqa: F811
    # core-workbench.md: the timeline row shows prompt_excerpt and surface_excerpt, CORE's
    # first 120 characters of each (no ellipsis).
    plain = clients[1]
    for order in ("OLDEST_FIRST", "TIME_DESC"):
        body = same_bytes(clients, WORKBENCH["TraceTimeline"], {"order": order})
        assert prepared.pop() == "turns"
        nodes = json.loads(body)["data"]["turns"]["nodes"]
        surfaces = plain.post("/graphql", json={"query": "query S($order: Order!) { turns("
                              "filter: {kind: [WORKBENCH_JOURNAL]}, order: $order) { nodes { "
                              "surface { surface } } } }", "variables": {"order": order}}
                              ).json()["data"]["turns"]["nodes"]
        whole = [node["surface"]["surface"] for node in surfaces]
        assert [node["surfaceExcerpt"] for node in nodes] == [text[:120] for text in whole]
        assert any(len(text) > 120 for text in whole)  # a cut one among them


def test_the_nested_records_columns_of_a_list_are_read_from_their_prefixed_columns(
        clients: tuple[TestClient, TestClient], prepared: list[str]) -> None:  # noqa: F811
    """An assessment's batch is a record nested in it (its columns `batch_*`)."""
    body = same_bytes(clients, "{ assessments(first: 3, order: RUNNABLE_DESC) { nodes { "
                               "assessmentId seq problemText sourceRef candidateOrgan runnable "
                               "__typename } edges { node { assessmentId seq problemText "
                               "sourceRef candidateOrgan runnable __typename } } } }", {})
    assert body.count(b'"__typename":"Assessment"') == 6
    assert prepared == ["assessments"]


@pytest.mark.parametrize("query", [
    # a search: snippets are read beside the page
    '{ residuals(search: "role", first: 2) { edges { snippet node { residualId } } } }',
    # a field with arguments, a field with a resolver, in a node or in an object in it
    "{ residuals(first: 2) { nodes { residualId occurrences(first: 1) { totalCount } } } }",
    "{ turns(first: 2) { nodes { turnKey surface { occurrences(first: 1) { totalCount } } } } }",
    "{ turns(first: 2) { nodes { turnKey surface { inclusionProof { leafIndex } } } } }",
    "{ residuals(first: 2) { nodes { residualId inclusionProof { leafIndex } } } }",
    # a directive: collected as its variable says, per request
    "{ residuals(first: 2) { nodes { residualId seq @skip(if: true) } } }",
    # the same node selected twice, differently (in an object of it, too)
    "{ residuals(first: 2) { edges { node { residualId } } nodes { seq } } }",
    "{ turns(first: 2) { edges { node { surface { surfaceId } } } nodes { surface { seq } } } }",
])
def test_what_is_not_only_columns_takes_the_usual_path(
        clients: tuple[TestClient, TestClient], prepared: list[str],  # noqa: F811
        query: str) -> None:
    assert same_bytes(clients, query, {}).startswith(b'{"data":{')
    assert prepared == []


@pytest.mark.parametrize(("query", "listing"), [
    # lists of objects and of texts read from a JSON column
    ("{ residuals(first: 3) { nodes { residualId evidenceSpans { text start end "
     "sentenceIndex __typename } } } }", "residuals"),
    ("{ surfaces(first: 4) { nodes { surfaceId candidateChainIds hopChainIds subjectDomains "
     "checkedAgainst { kind id sha256 version } } } }", "surfaces"),
    # a turn's surface, a record joined to it, and its verdicts, made of its columns
    ("{ turns(first: 4) { nodes { turnKey surface { surfaceId surface verification "
     "checkedAgainst { kind id } __typename } verdicts { identity identityDetail safety "
     "safetyDetail ethics ethicsDetail __typename } proposalCandidates { candidateId "
     "sourceKind } } } }", "turns"),
    ("{ turns(first: 3, asOf: 83) { edges { cursor node { surface { surfaceId "
     "occurrenceCount } } } nodes { surface { surfaceId occurrenceCount } } } }", "turns"),
])
def test_objects_and_lists_read_from_the_row_s_columns_are_built_from_the_rows(
        clients: tuple[TestClient, TestClient], prepared: list[str],  # noqa: F811
        query: str, listing: str) -> None:
    """A node's lists and objects whose values its row's columns hold (a JSON column's list,
    a joined record's columns, verdicts made of the turn's and its fields' columns) are built
    from the rows as well, completed as graphql-core completes them."""
    assert same_bytes(clients, query, {}).startswith(b'{"data":{')
    assert prepared == [listing]


@pytest.mark.parametrize(("spoils", "shown"), [
    # a number where a text is stored: graphql-core's String coerces it
    ({1: {"candidate_organ": 7}}, b'"candidateOrgan":"7"'),
    # a LogIndex past 2^31, as it is; past 2^53, its error
    ({0: {"seq": 2**40}}, b'"seq":1099511627776'),
    ({0: {"seq": 2**53 + 1}}, b"LogIndex must be between 0 and 2^53 (9007199254740992), got "
                              b"9007199254740993"),
    # a stored value no member has: the record is not made (masked, as any such exception)
    ({1: {"residual_kind": "bad"}}, b'{"data":null,"errors":[{"message":"Internal error."'),
    # null where null is not allowed
    ({2: {"residual_code": None}},
     b'"Internal error.","locations":[{"line":1,"column":92}],'
     b'"path":["residuals","nodes",2,"residualCode"]'),
])
def test_a_stored_value_graphql_core_refuses_is_its_error_on_both_paths(
        clients: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        prepared: list[str], spoils: dict[int, dict[str, Any]], shown: bytes) -> None:
    """The page's rows spoiled as they are read, alike for both servers."""
    rows = pages._rows

    def spoiled(*args: Any) -> Any:
        columns, found = rows(*args)
        changed = []
        for number, row in enumerate(found):
            values = list(row)
            for column, value in spoils.get(number, {}).items():
                values[columns.index(column)] = value
            changed.append(tuple(values))
        return columns, changed

    monkeypatch.setattr(pages, "_rows", spoiled)
    query = ("{ residuals(first: 4) { nodes { residualId candidateOrgan familyId residualKind "
             "sourceAxis residualCode seq occurrenceCount } } }")
    assert shown in same_bytes(clients, query, {})


def test_a_residual_page_reads_no_column_it_is_not_asked_for(
        clients: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        prepared: list[str]) -> None:
    """Evidence spans stored as text that is not JSON: a page that does not ask for them is
    built from its rows; one that does takes the usual path, and both answer its error."""
    rows = pages._rows

    def spoiled(*args: Any) -> Any:
        columns, found = rows(*args)
        place = columns.index("evidence_spans")
        return columns, [(*row[:place], "not json", *row[place + 1:]) for row in found]

    monkeypatch.setattr(pages, "_rows", spoiled)
    fast, plain = clients
    asked = "{ residuals(first: 2) { nodes { residualId evidenceSpans { text } } } }"
    assert b"Internal error." in same_bytes(clients, asked, {})
    not_asked = "{ residuals(first: 2) { nodes { residualId } } }"
    answered = fast.post("/graphql", json={"query": not_asked}).json()
    assert list(answered) == ["data"]
    assert [len(node["residualId"]) for node in answered["data"]["residuals"]["nodes"]] == [
        64, 64]
    assert b"Internal error." in plain.post("/graphql", json={"query": not_asked}).content
