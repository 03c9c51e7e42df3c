"""Malformed requests get a 4xx with a GraphQL response saying what is wrong, coded (bytes that
are not JSON 400 BAD_REQUEST, JSON that is not a GraphQL-over-HTTP request 422
INVALID_REQUEST); bad values inside a well-formed request get a GraphQL error naming them.
Never a 500, never a logged traceback, never "Internal error."."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest
from graphql_requests import graphql_errors
from spec_values import DELTA_QUANTITY_ID, LEDGER_LENGTH
from starlette.testclient import TestClient

JSON = {"content-type": "application/json"}
LEDGER = '{"query": "{ ledger { treeSize } }"}'


@pytest.fixture
def lenient_client(client: TestClient) -> TestClient:
    """The example client, answering 500s instead of raising them (as a real server would)."""
    client.raise_server_exceptions = False
    return client


def assert_refused(response: Any, status: int, message: str, code: str) -> None:
    assert (response.status_code, response.headers["content-type"]) == (
        status, "application/json"), response.text
    assert response.json() == {"errors": [{"message": message, "extensions": {"code": code}}]}


# GraphQL over HTTP, Status Codes: "If the JSON body of the request could not be parsed,
# status code 400 SHOULD be used." / "If the request is not a well-formed GraphQL-over-HTTP
# request, status code 422 SHOULD be used."
NOT_JSON = (400, "BAD_REQUEST")
NOT_A_REQUEST = (422, "INVALID_REQUEST")


@pytest.mark.parametrize(("body", "message"), [
    (b"null", "request body: a JSON object with a query, not null"),
    (b"5", "request body: a JSON object with a query, not a number"),
    (b'"x"', "request body: a JSON object with a query, not a string"),
    (b"true", "request body: a JSON object with a query, not a boolean"),
    (b"[]", "request body: a JSON object, not an array (batching is not supported)"),
    (b'[{"query": "{ ledger { treeSize } }"}]',
     "request body: a JSON object, not an array (batching is not supported)"),
    (b'{"query": "\xff{ ledger { treeSize } }"}', "request body: not UTF-8 (byte 11)"),
    (b"[" * 5000 + b"]" * 5000, "request body: JSON nested too deeply"),
    (b'{"query": "{ ledger { treeSize } }", "variables": ' + b'{"a": ' * 5000 + b"1"
     + b"}" * 5001, "request body: JSON nested too deeply"),
    (b'{"query": "{ ledger { treeSize } }", "variables": {"n": ' + b"9" * 5000 + b"}}",
     "request body: not JSON (Exceeds the limit (4300 digits) for integer string conversion: "
     "value has 5000 digits; use sys.set_int_max_str_digits() to increase the limit)"),
    (b'{"query": "{ ledger', "request body: not JSON (Unterminated string starting at: "
                            "line 1 column 11 (char 10))"),
    (b"", "request body: not JSON (Expecting value: line 1 column 1 (char 0))"),
    (b"{}", "request body: no query (send the GraphQL document as `query`)"),
    (b'{"variables": {}}', "request body: no query (send the GraphQL document as `query`)"),
    (b'{"query": null}', "request body: no query (send the GraphQL document as `query`)"),
    (b'{"query": 5}', "query: must be a string or null, not a number"),
    (b'{"query": ["{ ledger { treeSize } }"]}', "query: must be a string or null, not an array"),
    (b'{"query": "{ ledger { treeSize } }", "variables": [1]}',
     "variables: must be an object or null, not an array"),
    (b'{"query": "{ ledger { treeSize } }", "variables": "{}"}',
     "variables: must be an object or null, not a string"),
    (b'{"query": "{ ledger { treeSize } }", "operationName": 5}',
     "operationName: must be a string or null, not a number"),
    (b'{"query": "{ ledger { treeSize } }", "extensions": true}',
     "extensions: must be an object or null, not a boolean"),
    (b'{"documentId": "sha256:00"}',
     "documentId: this server has no trusted documents; send the document as query"),
])
def test_malformed_bodies_are_4xx_saying_what_is_wrong(
    lenient_client: TestClient, caplog: pytest.LogCaptureFixture, body: bytes, message: str
) -> None:
    with caplog.at_level(logging.DEBUG):
        response = lenient_client.post("/graphql", content=body, headers=JSON)
    status, code = refusal_of(message)
    assert_refused(response, status, message, code)
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def refusal_of(message: str) -> tuple[int, str]:
    """Bytes that are not UTF-8 JSON, else JSON that is not a request."""
    return NOT_JSON if any(f": {what}" in message for what in (
        "not UTF-8", "JSON nested too deeply", "not JSON")) else NOT_A_REQUEST


@pytest.mark.parametrize(("content_type", "shown"), [
    ("text/plain", "text/plain"),
    ("application/x-www-form-urlencoded", "application/x-www-form-urlencoded"),
    ("multipart/form-data; boundary=x", "multipart/form-data"),
    ("application/graphql", "application/graphql"),
])
def test_a_body_that_is_not_json_is_a_415(lenient_client: TestClient, content_type: str,
                                          shown: str) -> None:
    # "If the Content-Type of the request is not supported, status code 415 SHOULD be used."
    response = lenient_client.post("/graphql", content=LEDGER,
                                   headers={"content-type": content_type})
    assert_refused(response, 415, f"content-type: send application/json, not {shown}",
                   "UNSUPPORTED_MEDIA_TYPE")


def test_json_with_a_charset_is_accepted(client: TestClient) -> None:
    response = client.post("/graphql", content=LEDGER,
                           headers={"content-type": "application/json; charset=utf-8"})
    assert response.json() == {"data": {"ledger": {"treeSize": LEDGER_LENGTH}}}


@pytest.mark.parametrize(("params", "message"), [
    ({"query": "{ ledger { treeSize } }", "variables": "[1]"},
     "variables: must be an object or null, not an array"),
    ({"query": "{ ledger { treeSize } }", "variables": "{bad"},
     "variables: not JSON (Expecting property name enclosed in double quotes: line 1 column 2 "
     "(char 1))"),
    ({"query": "{ ledger { treeSize } }", "variables": "[" * 5000 + "]" * 5000},
     "variables: JSON nested too deeply"),
    ({"variables": "{}"}, "query string: no query (send the GraphQL document as `query`)"),
])
def test_malformed_get_requests_are_4xx(lenient_client: TestClient, params: dict[str, str],
                                        message: str) -> None:
    response = lenient_client.get("/graphql", params=params,
                                  headers={"accept": "application/json"})
    status, code = refusal_of(message)
    assert_refused(response, status, message, code)


def test_strawberrys_own_refusals_are_graphql_shaped_too(lenient_client: TestClient) -> None:
    response = lenient_client.get("/graphql", params={"query": "{ ledger { treeSize } }",
                                                      "operationName": "Nope"})
    # "If the operation to execute cannot be unambiguously determined, status code 422
    # SHOULD be used."
    assert response.status_code == 422
    assert response.json() == {"errors": [{"message": 'Unknown operation named "Nope".',
                                           "extensions": {"code": "OPERATION_NOT_DETERMINED"}}]}


def cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("ascii")).decode("ascii")


MALFORMED_CURSOR = "after: malformed cursor (use an endCursor or cursor value)"


@pytest.mark.parametrize("seq", [
    "9" * 30,
    str(2**63),  # one past SQLite's largest integer
    "0" * 40 + "1",  # small, but longer than any seq this API writes
])
def test_a_cursor_holding_an_oversized_seq_is_malformed(client: TestClient, seq: str) -> None:
    after = cursor(f"seq:{seq}")
    assert graphql_errors(client, "query ($a: String) { residuals(after: $a) { totalCount } }",
                          a=after) == [MALFORMED_CURSOR]
    nested = graphql_errors(client, """query ($id: ID!, $a: String) {
        residual(id: $id) { occurrences(after: $a) { totalCount } } }""",
                            id=DELTA_QUANTITY_ID, a=after)
    assert nested == [MALFORMED_CURSOR]


@pytest.mark.parametrize("seq", [2**31 - 1, 2**31, 2**63 - 1])  # past PostgreSQL's int4 too
def test_a_seq_past_the_newest_row_is_a_forged_cursor(client: TestClient, seq: int) -> None:
    # No cursor this store handed out points past its log: an error naming the argument.
    errors = graphql_errors(client, "query ($a: String) { residuals(after: $a) { totalCount } }",
                            a=cursor(f"seq:{seq}"))
    assert len(errors) == 1
    assert errors[0].startswith(f"after: the cursor points at seq {seq}, past the log's newest row")
    assert errors[0].endswith("not a cursor this store handed out")


@pytest.mark.parametrize(("query", "variables", "message"), [
    ("query ($id: ID!) { residual(id: $id) { residualId } }", {"id": "\ud800"},
     "Variable $id: not text (a lone surrogate, U+D800); send valid Unicode"),
    ("query ($id: ID!) { surface(id: $id) { surfaceId } }", {"id": "a\udfffb"},
     "Variable $id: not text (a lone surrogate, U+DFFF); send valid Unicode"),
    ("query ($f: ResidualFilter) { residuals(filter: $f) { totalCount } }",
     {"f": {"organ": ["ok", "\udc00"]}},
     "Variable $f.organ[1]: not text (a lone surrogate, U+DC00); send valid Unicode"),
    ("query ($a: String) { residuals(after: $a) { totalCount } }", {"a": "\ud800"},
     "Variable $a: not text (a lone surrogate, U+D800); send valid Unicode"),
    ('{ residual(id: "\ud800") { residualId } }', {},
     "Syntax Error: Invalid character within String: U+D800."),
    ('{ residual(id: "\\ud800") { residualId } }', {},
     "Syntax Error: Invalid Unicode escape sequence: '\\ud800'."),
])
def test_a_lone_surrogate_is_a_graphql_error_naming_where(
    client: TestClient, caplog: pytest.LogCaptureFixture, query: str,
    variables: dict[str, Any], message: str
) -> None:
    # json.dumps writes a lone surrogate as the escape "\ud800", which JSON itself allows.
    body = json.dumps({"query": query, "variables": variables})
    with caplog.at_level(logging.DEBUG):
        response = client.post("/graphql", content=body, headers=JSON)
    # A variable refused is a request error (422, no data); the lexer's, a parse error (400).
    parsing = message.startswith("Syntax Error")
    assert response.status_code == (400 if parsing else 422), response.text
    assert response.json() == {"errors": [{
        "message": message, "extensions": {
            "code": "GRAPHQL_PARSE_FAILED" if parsing else "BAD_USER_INPUT"},
        **({"locations": response.json()["errors"][0]["locations"]} if parsing else {})}]}
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def test_a_lone_surrogate_in_a_get_requests_variables(client: TestClient) -> None:
    response = client.get("/graphql", params={
        "query": "query ($id: ID!) { residual(id: $id) { residualId } }",
        "variables": '{"id": "\\ud800"}'}, headers={"accept": "application/json"})
    assert [e["message"] for e in response.json()["errors"]] == [
        "Variable $id: not text (a lone surrogate, U+D800); send valid Unicode"]


def test_a_paired_surrogate_escape_is_text(client: TestClient) -> None:
    body = json.dumps({"query": "query ($id: ID!) { residual(id: $id) { residualId } }",
                       "variables": {"id": "\U0001f600"}})  # sent as "\ud83d\ude00"
    response = client.post("/graphql", content=body, headers=JSON)
    assert response.json() == {"data": {"residual": None}}


TWO_OPERATIONS = "query Size { ledger { treeSize } } query Root { ledger { rootHash } }"
NAME_NEEDED = "Must provide operation name if query contains multiple operations."  # GraphQL §6.1


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_several_operations_without_a_name_are_refused_not_the_first_run(
    client: TestClient, method: str
) -> None:
    params = {"query": TWO_OPERATIONS}
    response = (client.post("/graphql", json=params) if method == "POST"
                else client.get("/graphql", params=params, headers={"accept": "application/json"}))
    assert response.status_code == 422
    assert response.json() == {"errors": [{
        "message": NAME_NEEDED, "extensions": {"code": "OPERATION_NOT_DETERMINED"}}]}


def test_several_operations_with_a_name_run_that_one(client: TestClient) -> None:
    response = client.post("/graphql", json={"query": TWO_OPERATIONS, "operationName": "Size"})
    assert response.json() == {"data": {"ledger": {"treeSize": LEDGER_LENGTH}}}
    unknown = client.post("/graphql", json={"query": TWO_OPERATIONS, "operationName": "Nope"})
    assert_refused(unknown, 422, 'Unknown operation named "Nope".', "OPERATION_NOT_DETERMINED")
