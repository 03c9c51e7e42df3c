"""graphql/: the exported SDL matches the code; each Workbench operation validates and runs."""

from __future__ import annotations

import base64
import difflib
import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from cli_runs import cli
from graphql import build_schema as build_sdl_schema
from graphql import parse, validate
from spec_surfaces import (
    KNOWLEDGE_CHAIN,
    LIGHT_NODE,
    LIGHT_TURNS,
    MISMATCH_NODE,
    SURFACES,
    UNRESOLVABLE_NODE,
)
from spec_values import (
    CHANGED_OBJECT_ID,
    DELTA_QUANTITY_ID,
    FACETS_ALL,
    LEDGER_LENGTH,
    facet,
    graphql_facets,
)

from store.api.schema import schema_sdl

REPO = Path(__file__).resolve().parents[2]
SDL_PATH = REPO / "graphql" / "schema.graphql"
WORKBENCH = REPO / "graphql" / "workbench"
OPERATIONS = sorted(WORKBENCH.glob("*.graphql"))


def test_exported_sdl_matches_the_code() -> None:
    exported = SDL_PATH.read_text(encoding="utf-8")
    current = schema_sdl()
    if exported != current:
        diff = "".join(difflib.unified_diff(
            exported.splitlines(keepends=True), current.splitlines(keepends=True),
            fromfile="graphql/schema.graphql", tofile="code"))
        pytest.fail("graphql/schema.graphql differs from the code; review, then regenerate "
                    "with `core-audit schema > graphql/schema.graphql`:\n" + diff)


def test_schema_command_prints_the_sdl() -> None:
    result = cli("schema")
    assert result.exit_code == 0
    assert result.output == SDL_PATH.read_text(encoding="utf-8")


def test_graphql_folder_holds_no_python() -> None:
    assert not list((REPO / "graphql").rglob("*.py"))


def test_the_contract_has_no_mutation_or_subscription() -> None:
    sdl = build_sdl_schema(SDL_PATH.read_text(encoding="utf-8"))
    assert sdl.mutation_type is None and sdl.subscription_type is None


@pytest.mark.parametrize("path", OPERATIONS, ids=[p.stem for p in OPERATIONS])
def test_workbench_operation_validates_against_the_sdl(path: Path) -> None:
    sdl = build_sdl_schema(SDL_PATH.read_text(encoding="utf-8"))
    document = parse(path.read_text(encoding="utf-8"))
    assert validate(sdl, document) == []
    operations = [d for d in document.definitions if d.kind == "operation_definition"]
    assert [op.name.value for op in operations] == [path.stem]  # type: ignore[attr-defined]
    assert all(op.operation.value == "query" for op in operations)  # type: ignore[attr-defined]


def test_the_expected_operations_exist() -> None:
    assert [p.stem for p in OPERATIONS] == [
        "DominantResidualKinds", "FacetOverview", "LedgerStatus", "PracticeResiduals",
        "ResidualCard", "ResidualWithOccurrences", "ResidualsByTaxonomy", "RunDetail",
        "RunGroundingDistribution", "Runs", "SurfacesByGroundingSource", "TeachingTurnsByChain",
        "TraceTimeline", "TurnDetail", "TurnFacetOverview", "TurnsByGrounding"]


def run_operation(url: str, name: str, **variables: Any) -> dict[str, Any]:
    """`core-audit query --file`: the in-process path through the server's schema."""
    args = ["query", "--db", url, "--file", str(WORKBENCH / f"{name}.graphql"),
            "--operation", name]
    if variables:
        args += ["--variables", json.dumps(variables)]
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["data"]


def test_residuals_by_taxonomy(example_store_url: str) -> None:
    data = run_operation(example_store_url, "ResidualsByTaxonomy", kind=["MISSING_ROLE"],
                         organ=["unary_delta_transition"], first=3)
    page = data["residuals"]
    assert page["totalCount"] == 4
    assert page["pageInfo"]["hasNextPage"] is True
    assert [(e["node"]["residualCode"], e["node"]["occurrenceCount"]) for e in page["edges"]] == [
        ("action_cue_unbound", 1), ("direction_unbound", 1), ("changed_object_unbound", 1)]
    assert page["edges"][2]["node"] == {
        "residualId": CHANGED_OBJECT_ID, "candidateOrgan": "unary_delta_transition",
        "familyId": "state_change.unary_delta", "residualKind": "MISSING_ROLE",
        "residualCode": "changed_object_unbound", "sourceAxis": "ROLE", "occurrenceCount": 1}
    rest = run_operation(example_store_url, "ResidualsByTaxonomy", kind=["MISSING_ROLE"],
                         organ=["unary_delta_transition"], first=3,
                         after=page["pageInfo"]["endCursor"])["residuals"]
    assert [e["node"]["residualId"] for e in rest["edges"]] == [DELTA_QUANTITY_ID]
    assert rest["pageInfo"]["hasNextPage"] is False

    by_axis = run_operation(example_store_url, "ResidualsByTaxonomy", axis=["TOPOLOGY"])
    assert [e["node"]["residualCode"] for e in by_axis["residuals"]["edges"]] == [
        "passive_voice_unsupported", "inverse_topology_unlicensed"]


def test_residual_with_occurrences(example_store_url: str) -> None:
    data = run_operation(example_store_url, "ResidualWithOccurrences", id=DELTA_QUANTITY_ID)
    residual = data["residual"]
    occurrences = residual.pop("occurrences")
    assert residual == {
        "residualId": DELTA_QUANTITY_ID,
        "candidateOrgan": "unary_delta_transition",
        "familyId": "state_change.unary_delta",
        "residualKind": "MISSING_ROLE",
        "residualCode": "delta_quantity_unbound",
        "sourceAxis": "ROLE",
        "explanation": "The delta quantity role is unbound.",
        "evidenceSpans": [{"text": "gained", "start": 4, "end": 10, "sentenceIndex": None}],
        "occurrenceCount": 2,
    }
    assert occurrences["totalCount"] == 2
    assert occurrences["pageInfo"]["hasNextPage"] is False
    seen = [(n["problemText"], n["sourceRef"], n["assessment"]["explanation"],
             n["assessment"]["runnable"], n["batch"]["batchId"], n["batch"]["source"])
            for n in occurrences["nodes"]]
    assert seen == [
        ("Tom gained apples.", "adr-0225:example-b",
         "diagnostic candidate is not runnable: delta_quantity_unbound", False, 1,
         "adr_0225_frames.jsonl"),
        ("Sam gained pears.", "families:unary-delta-repeat",
         "diagnostic candidate is not runnable: delta_quantity_unbound", False, 2,
         "core_frames_families.jsonl"),
    ]


def test_facet_overview(example_store_url: str) -> None:
    assert run_operation(example_store_url, "FacetOverview") == {
        "residualFacets": graphql_facets(FACETS_ALL)}
    topology = run_operation(example_store_url, "FacetOverview",
                             filter={"axis": ["TOPOLOGY"]})["residualFacets"]
    assert (topology["total"], topology["occurrences"]) == (2, 2)
    assert topology["byOrgan"] == [facet("percent_partition", 1, 1),
                                   facet("unary_delta_transition", 1, 1)]
    assert topology["byFamily"] == [facet("partition.percent_partition", 1, 1),
                                    facet("state_change.unary_delta", 1, 1)]


def test_teaching_turns_by_chain(example_store_url: str) -> None:
    data = run_operation(example_store_url, "TeachingTurnsByChain")
    surfaces = data["surfaces"]
    assert surfaces["totalCount"] == 5
    assert surfaces["pageInfo"]["hasNextPage"] is False
    assert [(n["chainId"], n["verification"], n["occurrenceCount"])
            for n in surfaces["nodes"]] == [
        ("cause_light_reveals_truth", "VERIFIED", 2),
        (KNOWLEDGE_CHAIN, "VERIFIED", 2),
        ("verification_memory_requires_recall", "VERIFIED", 1),
        (KNOWLEDGE_CHAIN, "MISMATCH", 1),
        ("cause_justice_requires_fairness", "UNRESOLVABLE", 1),
    ]
    light = surfaces["nodes"][0]
    turns = light.pop("occurrences")
    assert light == {k: v for k, v in LIGHT_NODE.items() if k != "groundingSource"}
    assert [(t["sessionId"], t["turnId"], t["prompt"]) for t in turns["nodes"]] == LIGHT_TURNS
    assert turns["nodes"][0]["batch"] == {"batchId": 3, "source": "adr_0052_surfaces.jsonl"}
    mismatch, unresolvable = surfaces["nodes"][3], surfaces["nodes"][4]
    assert {k: mismatch[k] for k in MISMATCH_NODE} == MISMATCH_NODE
    assert {k: unresolvable[k] for k in UNRESOLVABLE_NODE} == UNRESOLVABLE_NODE
    assert data["surfaceFacets"] == {"total": 5, "occurrences": 7, "byCorpus": [
        facet("cognition_chains_v1", 4, 6), facet("cognition_chains_v2", 1, 1)]}

    one_chain = run_operation(example_store_url, "TeachingTurnsByChain",
                              chainId=[KNOWLEDGE_CHAIN], verification=["VERIFIED"], turns=1)
    node, = one_chain["surfaces"]["nodes"]
    assert (node["subject"], node["connective"], node["object"]) == (
        "knowledge", "requires", "evidence")
    assert [t["sessionId"] for t in node["occurrences"]["nodes"]] == ["eval-a"]
    assert node["occurrences"]["pageInfo"]["hasNextPage"] is True
    assert one_chain["surfaceFacets"] == {"total": 1, "occurrences": 2, "byCorpus": [
        facet("cognition_chains_v1", 1, 2)]}


def test_surfaces_by_grounding_source(example_store_url: str) -> None:
    data = run_operation(example_store_url, "SurfacesByGroundingSource",
                         groundingSource=["PACK", "VAULT", "NONE"])
    nodes = [e["node"] for e in data["surfaces"]["edges"]]
    assert data["surfaces"]["totalCount"] == 3
    assert [(n["groundingSource"], n["subject"], n["intent"], n["verification"],
             n["occurrenceCount"]) for n in nodes] == [
        tuple(SURFACES[3]), tuple(SURFACES[4]), tuple(SURFACES[5])]
    assert nodes[0]["surface"] is None and nodes[0]["corpusId"] is None
    assert data["surfaceFacets"] == {
        "total": 3, "occurrences": 5,
        "byGroundingSource": [facet("NONE", 1, 2), facet("PACK", 1, 2), facet("VAULT", 1, 1)],
        "byVerification": [facet("NOT_CHECKED", 3, 5)]}

    first = run_operation(example_store_url, "SurfacesByGroundingSource",
                          subject=["knowledge"], first=3)["surfaces"]
    assert first["totalCount"] == 4 and first["pageInfo"]["hasNextPage"] is True
    rest = run_operation(example_store_url, "SurfacesByGroundingSource", subject=["knowledge"],
                         first=3, after=first["pageInfo"]["endCursor"])["surfaces"]
    assert rest["pageInfo"]["hasNextPage"] is False
    assert [e["node"]["groundingSource"] for e in first["edges"] + rest["edges"]] == [
        "TEACHING", "PACK", "TEACHING", "DEDUCTION"]


def test_ledger_status(example_store_url: str) -> None:
    data = run_operation(example_store_url, "LedgerStatus")
    assert data["ledger"]["treeSize"] == LEDGER_LENGTH
    assert data["ledger"]["origin"] is None  # no checkpoint taken yet
    checkpoint = cli("checkpoint", "--db", example_store_url)
    # C2SP tlog-checkpoint: origin, tree size, base64 root, blank line.
    origin, size, root, blank = checkpoint.stdout.split("\n")[:4]
    assert (size, base64.b64decode(root).hex(), blank) == (
        str(LEDGER_LENGTH), data["ledger"]["rootHash"], "")
    assert origin.startswith("core-audit/")  # provisional until chosen: nothing stored
    assert run_operation(example_store_url, "LedgerStatus")["ledger"]["origin"] is None
    assert data["batches"]["totalCount"] == 3
    assert [(b["batchId"], b["source"], b["newRows"], b["presentRows"])
            for b in data["batches"]["nodes"]] == [
        (1, "adr_0225_frames.jsonl", 17, 0), (2, "core_frames_families.jsonl", 18, 1),
        (3, "adr_0052_surfaces.jsonl", 28, 6)]


def test_query_command_inline_and_errors(example_store_url: str) -> None:
    ok = cli("query", "--db", example_store_url, "{ ledger { treeSize } }")
    assert ok.exit_code == 0
    assert json.loads(ok.output) == {"data": {"ledger": {"treeSize": LEDGER_LENGTH}}}
    bad = cli("query", "--db", example_store_url, "{ residuals(first: 10000) { totalCount } }")
    assert bad.exit_code == 1
    assert "between 0 and 500" in json.loads(bad.output)["errors"][0]["message"]
    mutation = cli("query", "--db", example_store_url, "mutation { x }")
    assert mutation.exit_code == 1
    neither = cli("query", "--db", example_store_url)
    assert neither.exit_code == 2
    bad_json = cli("query", "--db", example_store_url, "{ ledger { treeSize } }",
                   "--variables", "{nope")
    assert bad_json.exit_code == 2


def test_query_reads_the_document_from_standard_input(example_store_url: str) -> None:
    """`core-audit query - <<'EOF'` (a heredoc, the shell's way to paste a multi-line query)
    and `--file -` read the document from standard input."""
    expected = {"data": {"ledger": {"treeSize": LEDGER_LENGTH}}}
    for args in (["-"], ["--file", "-"]):
        done = cli("query", "--db", example_store_url, *args, input="{\n ledger { treeSize }\n}\n")
        assert done.exit_code == 0, done.output
        assert json.loads(done.output) == expected


def test_query_command_with_several_operations_needs_a_known_name(example_store_url: str) -> None:
    two = "query Size { ledger { treeSize } } query Root { ledger { rootHash } }"
    chosen = cli("query", "--db", example_store_url, two, "--operation", "Size")
    assert (chosen.exit_code, json.loads(chosen.output)) == (
        0, {"data": {"ledger": {"treeSize": LEDGER_LENGTH}}})
    unnamed = cli("query", "--db", example_store_url, two)
    assert (unnamed.exit_code, json.loads(unnamed.output)) == (1, {"errors": [
        {"message": "Must provide operation name if query contains multiple operations.",
         "extensions": {"code": "OPERATION_NOT_DETERMINED"}}]})
    unknown = cli("query", "--db", example_store_url, two, "--operation", "Nope")
    assert unknown.exception is None or isinstance(unknown.exception, SystemExit)
    assert (unknown.exit_code, json.loads(unknown.output)) == (1, {"errors": [
        {"message": 'Unknown operation named "Nope".',
         "extensions": {"code": "OPERATION_NOT_DETERMINED"}}]})


def test_query_command_needs_an_existing_store(tmp_path: Path) -> None:
    result = cli("query", "--db", tmp_path / "none.db", "{ ledger { treeSize } }")
    assert result.exit_code == 1
    assert "no such store" in result.output
    assert not (tmp_path / "none.db").exists()


def test_demo_ingests_examples_and_is_rerunnable(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    served: list[str | None] = []

    def fake_server(settings: Any, **options: Any) -> None:
        served.append(settings.db)
        assert "Paste into GraphiQL" in options["banner"]

    # The module, not the `demo` command that store.cli re-exports under the same name.
    monkeypatch.setattr(importlib.import_module("store.cli.demo"), "run_server", fake_server)
    monkeypatch.chdir(tmp_path)
    first = cli("demo", "--port", "0")  # no CORE_AUDIT_DB: the default store
    assert first.exit_code == 0, first.output
    assert (tmp_path / "core-audit.db").exists()
    again = cli("demo", "--port", "0")
    assert again.exit_code == 0, again.output
    assert "0 new" in again.output
    assert served == [None, None]  # the server resolves the default store the same way
    data = run_operation(str(tmp_path / "core-audit.db"), "FacetOverview")
    assert data["residualFacets"]["total"] == 12  # the second run added no residuals


def test_demo_honours_core_audit_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.import_module("store.cli.demo"), "run_server",
                        lambda db, **options: None)
    monkeypatch.chdir(tmp_path)
    elsewhere = tmp_path / "elsewhere.db"
    result = cli("demo", "--port", "0", env={"CORE_AUDIT_DB": str(elsewhere)})
    assert result.exit_code == 0, result.output
    assert elsewhere.exists() and not (tmp_path / "core-audit.db").exists()
