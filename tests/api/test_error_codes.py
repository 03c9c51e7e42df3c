"""Machine-readable errors: every GraphQL error carries `extensions.code` from the closed set
docs/graphql.md#errors lists, with the HTTP status the GraphQL-over-HTTP spec gives.

The spec's sentences are quoted from its current text (graphql/graphql-over-http, main,
spec/GraphQLOverHTTP.md, sections "Body" and "Status Codes").
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from graphql_requests import ERROR_CODES
from spec_values import LEDGER_LENGTH
from sqlalchemy.exc import OperationalError
from starlette.testclient import TestClient

from store.api import schema as api_schema
from store.api.error_codes import ErrorCode
from store.api.media_types import response_media_type
from store.db.audit_store import AuditStore

GRAPHQL_RESPONSE = "application/graphql-response+json"
ACCEPT_GRAPHQL = {"accept": GRAPHQL_RESPONSE}
ACCEPT_JSON = {"accept": "application/json"}
LEDGER = "{ ledger { treeSize } }"
REPO = Path(__file__).resolve().parents[2]


def post(client: TestClient, query: str, accept: dict[str, str],
         **variables: Any) -> tuple[int, str, dict[str, Any]]:
    response = client.post("/graphql", json={"query": query, "variables": variables},
                           headers=accept)
    return (response.status_code, response.headers["content-type"], response.json())


def codes(body: dict[str, Any]) -> list[str]:
    return [error["extensions"]["code"] for error in body["errors"]]


def test_the_documented_set_is_the_served_set() -> None:
    assert {code.name for code in ErrorCode} == ERROR_CODES


def test_a_success_is_200_in_either_media_type(client: TestClient) -> None:
    # "If the GraphQL response contains the {data} entry and does not contain the {errors}
    # entry, then the server SHOULD reply with a `200` status code."
    # "A server MUST indicate the media type of the response with a Content-Type header, and
    # SHOULD indicate the encoding (e.g. application/graphql-response+json; charset=utf-8)."
    assert post(client, LEDGER, ACCEPT_GRAPHQL)[:2] == (
        200, "application/graphql-response+json; charset=utf-8")
    assert post(client, LEDGER, ACCEPT_JSON)[:2] == (200, "application/json")


def test_a_field_error_is_294_or_200_for_a_legacy_client(client: TestClient) -> None:
    query = '{ ledger { treeSize } residuals(after: "bm9wZQ==") { totalCount } }'
    # "If the GraphQL response contains both the {data} entry (even if it is {null}) and the
    # {errors} entry, then the server SHOULD reply with a `294` status code."
    status, _, body = post(client, query, ACCEPT_GRAPHQL)
    assert (status, codes(body), "data" in body) == (294, ["BAD_CURSOR"], True)
    # "...we only recommend its usage alongside the application/graphql-response+json media
    # type which makes the meaning explicit."  A legacy client: 200, as always.
    status, media_type, legacy = post(client, query, ACCEPT_JSON)
    assert (status, media_type) == (200, "application/json")
    assert legacy == body


@pytest.mark.parametrize(("query", "variables", "status", "code"), [
    # "If the GraphQL document in the request cannot be parsed, status code 400 SHOULD be used."
    ("{ ledger { treeSize }", {}, 400, "GRAPHQL_PARSE_FAILED"),
    # "If the request does not pass GraphQL validation, status code 422 SHOULD be used."
    ("{ ledger { noSuchField } }", {}, 422, "GRAPHQL_VALIDATION_FAILED"),
    # "If the operation to execute cannot be unambiguously determined, status code 422
    # SHOULD be used."
    ("query A { ledger { treeSize } } query B { ledger { rootHash } }", {}, 422,
     "OPERATION_NOT_DETERMINED"),
    # "If the variable values cannot be coerced to match the operation's variable
    # definitions, status code 422 SHOULD be used."
    ("query ($n: Int) { residuals(first: $n) { totalCount } }", {"n": "ten"}, 422,
     "BAD_USER_INPUT"),
    # "The server MAY, at its discretion, apply additional validation rules. Note: Examples of
    # additional validation rules the server may apply include depth limit, complexity
    # limit, etc."
    ("{ residuals(first: 500) { nodes { occurrences(first: 500) { nodes { seq } } } } }", {},
     422, "LIMIT_EXCEEDED"),
    ("{" + " ".join(f"a{i}: ledger {{ treeSize }}" for i in range(31)) + "}", {}, 422,
     "LIMIT_EXCEEDED"),
    ("{ ledger(asOf: 9007199254740993) { treeSize } }", {}, 422, "GRAPHQL_VALIDATION_FAILED"),
    # A search the documented syntax does not read (docs/graphql.md#searching-text), as a
    # variable or written in the document: refused before any field runs, naming it.
    ("query ($q: String) { residuals(search: $q) { totalCount } }", {"q": "apples AND"}, 422,
     "BAD_USER_INPUT"),
    ('{ ledger { treeSize } surfaceFacets(search: "(recall") { total } }', {}, 422,
     "BAD_USER_INPUT"),
    ("query ($q: String) { turns(search: $q) { totalCount } }", {"q": "word " * 33}, 422,
     "LIMIT_EXCEEDED"),
])
@pytest.mark.parametrize("accept", [ACCEPT_GRAPHQL, ACCEPT_JSON])
def test_a_request_error_has_no_data_and_a_4xx(
        client: TestClient, query: str, variables: dict[str, Any], status: int, code: str,
        accept: dict[str, str]) -> None:
    # "If the GraphQL response does not contain the {data} entry then the server MUST reply
    # with an appropriate `4xx` or `5xx` status code". A legacy client gets the same status:
    # "the request SHOULD be performed following the requirements of this specification as
    # if the request had specified Accept: application/graphql-response+json, except any
    # response that produces a 2xx status code should replace the Content-Type header".
    got_status, _, body = post(client, query, accept, **variables)
    assert (got_status, codes(body), "data" in body) == (status, [code], False), body


@pytest.mark.parametrize(("body", "headers", "status", "code"), [
    # "If the JSON body of the request could not be parsed, status code 400 SHOULD be used."
    (b'{"query":', {"content-type": "application/json"}, 400, "BAD_REQUEST"),
    # "If the request is not a well-formed GraphQL-over-HTTP request, status code 422 SHOULD
    # be used."
    (b'{"qeury": "{__typename}"}', {"content-type": "application/json"}, 422,
     "INVALID_REQUEST"),
    (b'{"query": "{ ledger { treeSize } }", "variables": [7]}',
     {"content-type": "application/json"}, 422, "INVALID_REQUEST"),
    # "If the Content-Type of the request is not supported, status code 415 SHOULD be used."
    (b'{"query": "{ ledger { treeSize } }"}', {"content-type": "text/plain"}, 415,
     "UNSUPPORTED_MEDIA_TYPE"),
    # "If the Accept header is present but does not indicate support for any of the server's
    # supported media types or application/json, the server SHOULD respond with 406."
    (b'{"query": "{ ledger { treeSize } }"}',
     {"content-type": "application/json", "accept": "text/csv"}, 406, "NOT_ACCEPTABLE"),
])
def test_a_request_refused_before_graphql_is_coded_too(
        client: TestClient, body: bytes, headers: dict[str, str], status: int,
        code: str) -> None:
    response = client.post("/graphql", content=body, headers=headers)
    assert response.status_code == status
    assert codes(response.json()) == [code]


@pytest.mark.parametrize(("accept", "chosen"), [
    (None, "application/json"),
    ("", "application/json"),
    ("*/*", "application/json"),  # curl's and httpx's default: the legacy answer
    ("application/json", "application/json"),
    (GRAPHQL_RESPONSE, GRAPHQL_RESPONSE),
    # The spec's advice to clients: "application/graphql-response+json,
    # application/json;q=0.9".
    (f"{GRAPHQL_RESPONSE}, application/json;q=0.9", GRAPHQL_RESPONSE),
    (f"{GRAPHQL_RESPONSE};q=0.5, application/json", "application/json"),
    (f"{GRAPHQL_RESPONSE};q=0, application/json", "application/json"),
    ("application/*", "application/json"),
    ("text/html,application/xhtml+xml,*/*;q=0.8", "application/json"),
    ("text/csv", None),
    ("application/json;q=0", None),
])
def test_the_media_type_follows_accept(accept: str | None, chosen: str | None) -> None:
    assert response_media_type(accept) == chosen


@pytest.mark.parametrize(("query", "code", "message"), [
    ("{ residuals(first: 501) { totalCount } }", "LIMIT_EXCEEDED",
     "first: must be between 0 and 500, got 501"),
    ("{ ledger(asOf: 5) { treeSize } }", "BAD_USER_INPUT",
     "asOf: 5 is not a tree size this store recorded"),
    ("{ ledger { consistencyProof(fromSize: 99999) { first } } }", "BAD_USER_INPUT",
     f"fromSize: must be between 0 and {LEDGER_LENGTH}, got 99999"),
])
def test_each_field_error_names_its_cause(client: TestClient, query: str, code: str,
                                          message: str) -> None:
    status, _, body = post(client, query, ACCEPT_GRAPHQL)
    assert (status, "data" in body) == (294, True)
    assert [e["extensions"]["code"] for e in body["errors"]] == [code]
    assert body["errors"][0]["message"].startswith(message)


def test_a_time_out_a_store_that_cannot_be_read_and_a_bug(
        client: TestClient, example_db: AuditStore, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    def runaway(connection: Any, *_: object) -> None:
        from sqlalchemy import text
        connection.execute(text("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
                                "FROM n) SELECT count(*) FROM n")).scalar_one()

    def unreadable(*_: object) -> None:
        raise OperationalError("SELECT 1", {}, Exception("database disk image is malformed"))

    def broken(*_: object) -> None:
        raise RuntimeError("a bug's detail the caller must not read")

    monkeypatch.setattr(example_db, "time_limit", 0.3)
    for patched, code, message in [
            (runaway, "TIMEOUT", "query stopped: it ran past the request's time limit"),
            (unreadable, "STORE_UNAVAILABLE", "the store cannot be read now (unreachable, "
             "removed or damaged): `core-audit verify` checks it"),
            (broken, "INTERNAL", "Internal error.")]:
        monkeypatch.setattr(api_schema.queries, "residual_facets", patched)
        status, _, body = post(client, "{ residualFacets { total } }", ACCEPT_GRAPHQL)
        assert (status, body["data"]) == (294, None)
        assert [(e["extensions"]["code"], e["message"]) for e in body["errors"]] == [
            (code, message)]
    # The store's failure is one warning line, never a traceback.
    assert not [r for r in caplog.records if r.exc_info and "malformed" in str(r.exc_info[1])]


ERRORS_SECTION = (REPO / "docs" / "graphql.md").read_text(encoding="utf-8").split(
    "\n## Errors\n", 1)[1].split("\n## ", 1)[0]
TABLE_ROW = re.compile(r"^\| `(?P<first>[^|]*?)` \| (?P<second>[^|]*) \| (?P<third>[^|]*) \|$",
                       re.M)


def test_the_docs_table_of_codes_is_the_served_set() -> None:
    rows = {m["first"]: m for m in TABLE_ROW.finditer(ERRORS_SECTION)
            if m["first"] in ErrorCode.__members__}
    assert set(rows) == {code.name for code in ErrorCode}
    for name, row in rows.items():
        status = row["third"].strip()
        assert status == ("—" if name in ("BAD_CURSOR", "TIMEOUT", "STORE_UNAVAILABLE",
                                          "INTERNAL") else str(ErrorCode[name].status)), name


DOC_REQUESTS = [(m["first"], int(m["second"]), m["third"].strip("` "))
                for m in TABLE_ROW.finditer(ERRORS_SECTION)
                if m["first"].startswith(("{", "query"))]


def test_the_docs_show_requests_of_each_kind() -> None:
    assert len(DOC_REQUESTS) >= 6


@pytest.mark.parametrize(("query", "status", "code"), DOC_REQUESTS)
def test_each_request_in_the_docs_answers_as_they_say(client: TestClient, query: str,
                                                      status: int, code: str) -> None:
    got_status, media_type, body = post(client, query, ACCEPT_GRAPHQL)
    assert (got_status, codes(body)) == (status, [code]), body
    assert media_type == "application/graphql-response+json; charset=utf-8"


def test_the_docs_bad_cursor_answer_is_the_servers(client: TestClient) -> None:
    shown = re.search(r"```json\n(.*?)```", ERRORS_SECTION, flags=re.S)
    assert shown is not None
    _, _, body = post(client, '{ residuals(after: "bm9wZQ==") { totalCount } }', ACCEPT_JSON)
    assert body == json.loads(shown.group(1))
