"""`core-audit export`: every stored column of a record kind, in append order, filtered by the
API's own filter inputs, as CSV (RFC 4180) or JSONL.

Expected values are written out from the example files and the ADR-0225 table; the filter
results are also compared with what the GraphQL API returns for the same filter, since the
issue asks that the two cannot drift.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import BACKENDS, EXAMPLE_FILES, pg_schema
from cli_runs import cli
from jsonl_files import write_jsonl
from spec_values import CODES_IN_APPEND_ORDER, DELTA_QUANTITY_ID, MISSING_ROLE_CODES

REPO = Path(__file__).resolve().parents[2]
JOURNAL = REPO / "examples" / "workbench_turn_journal.jsonl"

COLUMNS = {
    "residuals": ["residual_id", "seq", "batch_id", "candidate_organ", "family_id",
                  "residual_kind", "residual_code", "source_axis", "evidence_spans",
                  "explanation"],
    "occurrences": ["assessment_id", "ordinal", "residual_id", "seq", "batch_id"],
    "assessments": ["assessment_id", "seq", "batch_id", "problem_text", "source_ref",
                    "candidate_organ", "runnable", "missing_bindings", "unresolved_hazards",
                    "explanation", "evidence_spans"],
    "surfaces": ["surface_id", "seq", "batch_id", "grounding_source", "surface", "subject",
                 "intent", "corpus_id", "chain_id", "chain_provenance", "pack_id",
                 "pack_version", "connective", "object", "subject_domains", "object_domains",
                 "verification", "expected_surface", "surface_form", "hops", "hop_chain_ids",
                 "candidate_chain_ids", "surface_prefix", "checked_against"],
    "turns": ["turn_key", "seq", "batch_id", "kind", "turn_id", "prompt", "timestamp",
              "grounding_source", "epistemic_state", "normative_clearance", "normative_detail",
              "verdict_identity", "verdict_safety", "verdict_ethics", "refusal_emitted",
              "hedge_injected", "trace_hash", "trace_integrity", "journal_digest", "surface_id",
              "line", "line_number"],
}
# "Tom gained apples." (adr_0225_frames.jsonl, line 2), as stored: docs/design.md's id recipe over
# the ADR's mapping of delta_quantity_unbound (missing_role, role); its spans nested, as JSON.
DELTA_QUANTITY = {
    "residual_id": DELTA_QUANTITY_ID,
    "candidate_organ": "unary_delta_transition",
    "family_id": "state_change.unary_delta",
    "residual_kind": "missing_role",
    "residual_code": "delta_quantity_unbound",
    "source_axis": "role",
    "evidence_spans": [{"end": 10, "sentence_index": None, "start": 4, "text": "gained"}],
    "explanation": "The delta quantity role is unbound.",
}
GRAPHQL_LISTS = {  # kind: (GraphQL list field, input type, id field, exported id column)
    "residuals": ("residuals", "ResidualFilter", "residualId", "residual_id"),
    "assessments": ("assessments", "AssessmentFilter", "assessmentId", "assessment_id"),
    "surfaces": ("surfaces", "SurfaceFilter", "surfaceId", "surface_id"),
    "turns": ("turns", "TurnFilter", "turnKey", "turn_key"),
}
FILTERS = [
    ("residuals", {"kind": ["MISSING_ROLE"], "organ": ["unary_delta_transition"]}),
    ("residuals", {"familyId": ["partition.percent_partition"], "axis": ["TOPOLOGY"]}),
    ("assessments", {"runnable": True}),
    ("assessments", {"familyId": ["state_change.unary_delta"], "batchId": [1]}),
    ("surfaces", {"groundingSource": ["TEACHING"], "verification": ["VERIFIED"]}),
    ("surfaces", {"chainId": ["cause_light_reveals_truth"]}),
    ("turns", {"groundingSource": ["TEACHING"], "verification": ["VERIFIED"]}),
    ("turns", {"normativeClearance": ["VIOLATED"], "surfaceForm": ["SINGLE"]}),
]


@pytest.fixture(scope="module", params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[str]:
    """The bundled examples, one batch each: two of residual frames, surfaces, a journal."""
    if request.param == "sqlite":
        yield from _filled(str(tmp_path_factory.mktemp("export") / "audit.db"))
        return
    with pg_schema() as url:
        yield from _filled(url)


def _filled(db: str) -> Iterator[str]:
    for path in (*EXAMPLE_FILES, JOURNAL):
        result = cli("ingest", "--db", db, path)
        assert result.exit_code == 0, result.output
    yield db


def export(db: str, kind: str, fmt: str, *options: str | Path) -> bytes:
    result = cli("export", kind, "--db", db, "--format", fmt, *options)
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


def records(db: str, kind: str, *options: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in export(db, kind, "jsonl", *options).splitlines()]


@pytest.mark.parametrize("kind", list(COLUMNS))
def test_csv_has_a_header_row_and_one_column_per_stored_column(store: str, kind: str) -> None:
    rows = list(csv.reader(io.StringIO(export(store, kind, "csv").decode("utf-8"),
                                       newline="")))
    assert rows[0] == COLUMNS[kind]
    assert all(len(row) == len(COLUMNS[kind]) for row in rows)
    assert all(list(r) == COLUMNS[kind] for r in records(store, kind))  # JSONL: same keys


def test_residuals_are_exported_in_append_order_as_stored(store: str) -> None:
    exported = records(store, "residuals")
    assert [r["residual_code"] for r in exported] == CODES_IN_APPEND_ORDER
    seqs = [r["seq"] for r in exported]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert [r["batch_id"] for r in exported] == [1] * 6 + [2] * 6
    [row] = [r for r in exported if r["residual_code"] == "delta_quantity_unbound"]
    assert {k: v for k, v in row.items() if k not in ("seq", "batch_id")} == DELTA_QUANTITY


def test_an_exported_record_is_its_log_entry_with_seq(store: str) -> None:
    """Anyone can rehash an exported row: it is the leaf's row, plus where it sits."""
    log = [json.loads(json.loads(line)["entry"])
           for line in cli("log", "--db", store).stdout_bytes.splitlines()]
    tables = {"residuals": "contract_residuals", "occurrences": "residual_occurrences",
              "assessments": "contract_assessments", "surfaces": "surface_records",
              "turns": "turns"}
    for kind, table in tables.items():
        for record in records(store, kind):
            entry = log[record["seq"] - 1]
            assert entry["table"] == table
            # A nested list or object is the row's canonical JSON text.
            row = {k: json.dumps(v, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
                   if isinstance(v, list | dict) else v
                   for k, v in record.items() if k != "seq"}
            assert {k: v for k, v in row.items() if k in entry["row"]} == entry["row"]
            assert all(row[k] is None for k in row.keys() - entry["row"].keys())


@pytest.mark.parametrize("kind", list(COLUMNS))
def test_jsonl_nests_what_a_record_holds_as_json(store: str, kind: str) -> None:
    """No value of a JSONL line is JSON inside a string, but a turn's `line`: CORE's line
    kept byte for byte (its journal_digest is checked on those bytes)."""
    for record in records(store, kind):
        texts = [k for k, v in record.items()
                 if isinstance(v, str) and v[:1] in ("[", "{") and k != "line"]
        assert texts == [], (kind, record)


def test_an_exported_value_pasted_into_the_filter_selects_its_records(store: str) -> None:
    """export writes CORE's spelling (missing_role); --filter takes it as it takes the
    GraphQL name (MISSING_ROLE): what one export shows, the next one can ask for."""
    exported = records(store, "surfaces")
    spelled = {"groundingSource": [exported[0]["grounding_source"]],
               "verification": [exported[0]["verification"]]}
    assert spelled == {"groundingSource": ["teaching"], "verification": ["verified"]}
    assert records(store, "surfaces", "--filter", json.dumps(spelled)) == records(
        store, "surfaces", "--filter", '{"groundingSource": ["TEACHING"], '
                                       '"verification": ["VERIFIED"]}')
    residual = records(store, "residuals")[0]
    assert len(records(store, "residuals", "--filter", json.dumps(
        {"kind": [residual["residual_kind"]], "axis": [residual["source_axis"]]}))) == len(
        records(store, "residuals", "--filter", json.dumps(
            {"kind": [residual["residual_kind"].upper()],
             "axis": [residual["source_axis"].upper()]})))


def test_surfaces_nest_their_domains_and_checked_files(store: str) -> None:
    # The light surface (adr_0052_surfaces.jsonl line 1; the journal's turn 1 sees it again).
    [light] = records(store, "surfaces", "--filter", '{"chainId": ["cause_light_reveals_truth"]}')
    assert light["subject_domains"] == ["cognition.illumination", "logos.core"]
    assert light["object_domains"] == ["cognition.truth"]
    assert light["candidate_chain_ids"] == ["cause_light_reveals_truth"]
    assert [f["kind"] for f in light["checked_against"]] == ["corpus", "pack"]


def test_filters_take_the_graphql_input_field_names(store: str) -> None:
    missing_role = records(store, "residuals", "--filter", '{"kind": ["MISSING_ROLE"]}')
    assert [r["residual_code"] for r in missing_role] == MISSING_ROLE_CODES
    runnable = records(store, "assessments", "--filter", '{"runnable": true}')
    assert [(r["problem_text"], r["runnable"]) for r in runnable] == [
        ("Tom gained 3 apples.", True)]
    # Occurrences: the sightings of the residuals the residual filter picks (9 of missing_role).
    sightings = records(store, "occurrences", "--filter", '{"kind": ["MISSING_ROLE"]}')
    assert len(sightings) == 9
    assert {s["residual_id"] for s in sightings} == {r["residual_id"] for r in missing_role}
    assert records(store, "residuals", "--filter", "null") == records(store, "residuals")


@pytest.mark.parametrize(("kind", "where"), FILTERS)
def test_a_filter_picks_what_the_api_picks(store: str, kind: str, where: dict[str, Any]
                                           ) -> None:
    field, input_type, id_field, column = GRAPHQL_LISTS[kind]
    document = (f"query($f: {input_type}) {{ {field}(filter: $f, first: 500) "
                f"{{ nodes {{ {id_field} }} }} }}")
    result = cli("query", "--db", store, document, "--variables", json.dumps({"f": where}))
    assert result.exit_code == 0, result.output
    from_api = [node[id_field] for node in json.loads(result.stdout)["data"][field]["nodes"]]
    exported = [r[column] for r in records(store, kind, "--filter", json.dumps(where))]
    assert exported == from_api
    assert exported  # each filter picks something, or the comparison proves little


def test_csv_cells_are_the_jsonl_values_in_rfc4180_quoting(tmp_path: Path) -> None:
    db = str(tmp_path / "audit.db")
    text = 'He said "stop", then\nleft.'
    frame = {"source_ref": "quoting", "problem_text": text, "contract_assessments": [{
        "candidate_organ": "unary_delta_transition", "missing_bindings": [],
        "unresolved_hazards": [], "runnable": True, "explanation": "runnable",
        "evidence_spans": []}]}
    assert cli("ingest", "--db", db, write_jsonl(tmp_path / "f.jsonl", [frame])).exit_code == 0
    data = export(db, "assessments", "csv")
    header, row = data.split(b"\r\n", 1)
    assert header == ",".join(COLUMNS["assessments"]).encode()
    # Quotes doubled inside a quoted cell, the line break kept inside it; CRLF ends records.
    assert b',"He said ""stop"", then\nleft.",quoting,unary_delta_transition,true,[],[],' \
           b"runnable,[]\r\n" in row
    [record] = records(db, "assessments")
    [cells] = list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))
    assert cells["problem_text"] == record["problem_text"] == text
    assert cells["runnable"] == "true" and record["runnable"] is True
    assert cells["seq"] == str(record["seq"])


def test_an_export_is_byte_identical_across_runs(store: str) -> None:
    for kind in COLUMNS:
        assert export(store, kind, "csv") == export(store, kind, "csv")
        assert export(store, kind, "jsonl") == export(store, kind, "jsonl")


def test_nothing_matching_gives_a_header_alone(store: str) -> None:
    where = ("--filter", '{"organ": ["no_such_organ"]}')
    assert export(store, "residuals", "csv", *where) == (",".join(COLUMNS["residuals"])
                                                         + "\r\n").encode()
    assert export(store, "residuals", "jsonl", *where) == b""


@pytest.mark.parametrize(("kind", "where", "named"), [
    ("residuals", '{"family_id": ["x"]}', "unknown field 'family_id'"),
    ("residuals", '{"kind": ["ABSTAIN"]}', "ResidualFilter.kind[0]: Value 'ABSTAIN'"),
    ("residuals", '{"groundingSource": ["TEACHING"]}', "unknown field 'groundingSource'"),
    ("occurrences", '{"kind": "missing-role"}', "ResidualFilter.kind: Value 'missing-role'"),
    ("assessments", '{"runnable": "yes"}', "AssessmentFilter.runnable: Boolean cannot"),
    ("assessments", '{"batchId": ["one"]}', "AssessmentFilter.batchId[0]: Int cannot"),
    ("turns", '["TEACHING"]', "Expected value of type 'TurnFilter' to be an object"),
    ("surfaces", '{"verification": [VERIFIED]}', "not JSON"),
])
def test_a_bad_filter_exits_2_naming_the_field(tmp_path: Path, store: str, kind: str,
                                               where: str, named: str) -> None:
    out = tmp_path / "out.csv"
    result = cli("export", kind, "--db", store, "--format", "csv", "--filter", where,
                 "--out", out)
    assert result.exit_code == 2, result.output
    assert "'--filter'" in result.stderr and named in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_out_replaces_the_file_only_once_the_export_is_complete(tmp_path: Path, store: str
                                                                ) -> None:
    out = tmp_path / "residuals.jsonl"
    out.write_text("an earlier export\n")
    result = cli("export", "residuals", "--db", tmp_path / "missing.db", "--format", "jsonl",
                 "--out", out)
    assert result.exit_code == 1 and "no such store" in result.stderr
    assert out.read_text() == "an earlier export\n"
    assert not (tmp_path / "missing.db").exists()
    result = cli("export", "residuals", "--db", store, "--format", "jsonl", "--out", out)
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == b""
    assert "12 residuals written to" in result.stderr
    assert out.read_bytes() == export(store, "residuals", "jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["residuals.jsonl"]


def test_a_store_that_cannot_be_read_through_is_an_error_not_a_traceback(tmp_path: Path
                                                                         ) -> None:
    db = tmp_path / "audit.db"
    for path in EXAMPLE_FILES[:2]:
        assert cli("ingest", "--db", db, path).exit_code == 0
    with sqlite3.connect(db) as connection:
        (page_size,) = connection.execute("PRAGMA page_size").fetchone()
        (root,) = connection.execute("SELECT rootpage FROM sqlite_master "
                                     "WHERE name = 'residual_occurrences'").fetchone()
    connection.close()
    with db.open("r+b") as file:  # the table's b-tree page header and first cell pointers
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * 64)
    out = tmp_path / "out.csv"

    result = cli("export", "occurrences", "--db", db, "--format", "csv", "--out", out)

    assert result.exit_code == 1
    assert result.stderr.endswith("the store cannot be read: database disk image is "
                                  "malformed; run `core-audit verify` on it\n")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("out")] == []


def _first_head(db: str) -> int:
    """The tree size after batch 1: its leaves, counted from `core-audit log`."""
    result = cli("log", "--db", db)
    assert result.exit_code == 0, result.output
    entries = [json.loads(json.loads(line)["entry"]) for line in result.stdout.splitlines()]
    return sum(1 for e in entries if e["row"]["batch_id"] == 1)


def test_as_of_exports_the_store_as_it_was_at_a_tree_head(store: str) -> None:
    head = _first_head(store)
    exported = records(store, "residuals", "--as-of", str(head))
    assert [r["batch_id"] for r in exported] == [1] * 6
    assert exported == records(store, "residuals", "--filter", '{"batchIdTo": 1}')
    assert all(r["seq"] <= head for r in records(store, "occurrences", "--as-of", str(head)))
    assert records(store, "turns", "--as-of", str(head)) == []
    assert export(store, "residuals", "csv", "--as-of", "0").decode().splitlines() == [
        ",".join(COLUMNS["residuals"])]


def test_an_as_of_that_is_not_a_tree_head_exits_2_naming_the_heads(store: str) -> None:
    head = _first_head(store)
    result = cli("export", "residuals", "--db", store, "--format", "jsonl",
                 "--as-of", str(head + 1))
    assert result.exit_code == 2
    assert "--as-of" in result.stderr
    assert f"{head + 1} is not a tree size this store recorded" in result.stderr
    assert f"{head} (after batch 1)" in result.stderr
    assert result.stdout == ""
