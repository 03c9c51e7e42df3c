"""Trusted documents: a server that runs only the operations of a directory, sent as their
exact text or by `documentId`; the manifest; directories that cannot be used."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from spec_values import DELTA_QUANTITY_ID, LEDGER_LENGTH
from starlette.testclient import TestClient

from store.api.app import create_app
from store.api.schema import build_schema
from store.api.trusted_documents import (
    TrustedDocuments,
    TrustedDocumentsError,
    load_trusted_documents,
)
from store.db.audit_store import AuditStore

WORKBENCH = Path(__file__).resolve().parents[2] / "graphql" / "workbench"
WORKBENCH_OPERATIONS = {
    "DominantResidualKinds.graphql": "DominantResidualKinds",
    "FacetOverview.graphql": "FacetOverview",
    "LedgerStatus.graphql": "LedgerStatus",
    "PracticeResiduals.graphql": "PracticeResiduals",
    "ResidualCard.graphql": "ResidualCard",
    "ResidualWithOccurrences.graphql": "ResidualWithOccurrences",
    "ResidualsByTaxonomy.graphql": "ResidualsByTaxonomy",
    "RunDetail.graphql": "RunDetail",
    "RunGroundingDistribution.graphql": "RunGroundingDistribution",
    "Runs.graphql": "Runs",
    "SurfacesByGroundingSource.graphql": "SurfacesByGroundingSource",
    "TeachingTurnsByChain.graphql": "TeachingTurnsByChain",
    "TraceTimeline.graphql": "TraceTimeline",
    "TurnDetail.graphql": "TurnDetail",
    "TurnFacetOverview.graphql": "TurnFacetOverview",
    "TurnsByGrounding.graphql": "TurnsByGrounding",
}
TREE_SIZE = "query TreeSize { ledger { treeSize } }\n"
TREE_SIZE_ID = "sha256:93c23f25202ecef2cc171901bb64833e320e94b9b34f1c466040e76e3cb3609e"
SCHEMA = build_schema()._schema


def load(directory: Path) -> TrustedDocuments:
    return load_trusted_documents(directory, SCHEMA)


def test_the_manifest_maps_each_files_sha256_to_its_operation() -> None:
    expected = {
        "sha256:" + hashlib.sha256((WORKBENCH / name).read_bytes()).hexdigest(): operation
        for name, operation in WORKBENCH_OPERATIONS.items()}
    manifest = load(WORKBENCH).manifest()
    assert manifest == expected
    assert list(manifest) == sorted(expected)


def test_the_id_is_over_the_exact_bytes(tmp_path: Path) -> None:
    (tmp_path / "TreeSize.graphql").write_bytes(TREE_SIZE.encode("utf-8"))
    assert load(tmp_path).manifest() == {TREE_SIZE_ID: "TreeSize"}
    (tmp_path / "TreeSize.graphql").write_bytes(TREE_SIZE.replace("\n", "\r\n").encode())
    assert load(tmp_path).manifest() != {TREE_SIZE_ID: "TreeSize"}


@pytest.mark.parametrize(("files", "reason"), [
    ({"A.graphql": "query A { ledger { treeSize }"},
     "A.graphql:1:30: Syntax Error: Expected Name, found <EOF>."),
    ({"A.graphql": "query A { ledger { treeSize } }\nquery B { ledger { rootHash } }\n"},
     "A.graphql: 2 operations; a trusted document holds exactly one (and the fragments it "
     "uses)"),
    ({"A.graphql": "fragment F on Ledger { treeSize }\n"},
     "A.graphql: 0 operations; a trusted document holds exactly one (and the fragments it "
     "uses)"),
    ({"A.graphql": "{ ledger { treeSize } }\n"},
     "A.graphql: the operation has no name; the manifest names it"),
    ({"A.graphql": "query A { ledger { size } }\n"},
     "A.graphql:1:20: Cannot query field 'size' on type 'Ledger'."),
    ({"A.graphql": "mutation A { ledger }\n"},
     "A.graphql:1:1: The mutation operation is not supported by the schema."),
    ({"A.graphql": b"query A { ledger { treeSize } } # \xff\n"}, "A.graphql: not UTF-8 (byte 34)"),
    ({"A.graphql": "query A { ledger { treeSize } }\n",
      "B.graphql": "query A { ledger { rootHash } }\n"},
     "B.graphql: operation A is also in {dir}/A.graphql"),
])
def test_a_file_that_is_not_one_valid_operation_is_named(
    tmp_path: Path, files: dict[str, str | bytes], reason: str
) -> None:
    for name, content in files.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(TrustedDocumentsError) as refused:
        load(tmp_path)
    assert str(refused.value) == f"{tmp_path}/{reason.format(dir=tmp_path)}"


def test_a_missing_or_empty_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(TrustedDocumentsError, match=r"/nope: no such directory$"):
        load(tmp_path / "nope")
    (tmp_path / "notes.txt").write_text("not a document")
    with pytest.raises(TrustedDocumentsError, match=r": no \.graphql files$"):
        load(tmp_path)


@pytest.fixture
def trusted_client(example_db: AuditStore) -> Iterator[TestClient]:
    app = create_app(example_db, close_db_on_shutdown=False,
                     trusted_documents=load(WORKBENCH))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client


def ledger_status_id() -> str:
    return "sha256:" + hashlib.sha256((WORKBENCH / "LedgerStatus.graphql").read_bytes()
                                      ).hexdigest()


def test_a_trusted_documents_exact_text_runs(trusted_client: TestClient) -> None:
    text = (WORKBENCH / "ResidualWithOccurrences.graphql").read_text(encoding="utf-8")
    response = trusted_client.post("/graphql", json={
        "query": text, "variables": {"id": DELTA_QUANTITY_ID, "first": 1}})
    assert response.json()["data"]["residual"]["occurrenceCount"] == 2


def test_a_trusted_document_runs_by_its_id(trusted_client: TestClient) -> None:
    response = trusted_client.post("/graphql", json={"documentId": ledger_status_id()})
    assert response.json()["data"]["ledger"]["treeSize"] == LEDGER_LENGTH
    response = trusted_client.get("/graphql", params={"documentId": ledger_status_id()},
                                  headers={"accept": "application/json"})
    assert response.json()["data"]["ledger"]["treeSize"] == LEDGER_LENGTH
    # A browser's Accept (text/html first, or */*): the document's result, not GraphiQL.
    for accept in ("text/html,application/xhtml+xml,*/*;q=0.8", "*/*", ""):
        response = trusted_client.get("/graphql", params={"documentId": ledger_status_id()},
                                      headers={"accept": accept})
        assert response.headers["content-type"].startswith("application/json"), accept
        assert response.json()["data"]["ledger"]["treeSize"] == LEDGER_LENGTH


NOT_TRUSTED = ("this server runs only its trusted documents: send a documentId from its "
               "manifest (or that document's exact text as query)")


FORBIDDEN = (403, "FORBIDDEN_DOCUMENT")  # "...the server SHOULD reply with 401, 403 ..."
MALFORMED = (422, "INVALID_REQUEST")  # "not a well-formed GraphQL-over-HTTP request": 422


@pytest.mark.parametrize(("body", "refusal", "message"), [
    ({"query": "{ ledger { treeSize } }"}, FORBIDDEN, NOT_TRUSTED),
    ({"query": "{ __schema { queryType { name } } }"}, FORBIDDEN, NOT_TRUSTED),  # introspection
    ({"query": (WORKBENCH / "LedgerStatus.graphql").read_text(encoding="utf-8") + " "},
     FORBIDDEN, NOT_TRUSTED),
    ({"documentId": "sha256:" + "0" * 64}, FORBIDDEN,
     f"documentId sha256:{'0' * 64}: not a trusted document of this server"),
    ({"documentId": "LedgerStatus"}, MALFORMED,
     "documentId: must be sha256:<64 lower-case hex digits>"),
    ({"documentId": ledger_status_id(), "query": "{ ledger { treeSize } }"}, MALFORMED,
     "send either query or documentId, not both"),
])
def test_everything_else_is_refused(trusted_client: TestClient, body: dict[str, str],
                                    refusal: tuple[int, str], message: str) -> None:
    response = trusted_client.post("/graphql", json=body)
    status, code = refusal
    assert (response.status_code, response.json()) == (
        status, {"errors": [{"message": message, "extensions": {"code": code}}]})
