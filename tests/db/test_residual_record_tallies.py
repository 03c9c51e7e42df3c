"""residual_record_tallies (revision 0015): the residual tallies one residual at a time, per
residual and per batch that stored or sighted it, beside the residuals' search documents; a
search's facets and groups sum the matches' rows there. `verify` holds every row to the
ledgered rows.

The `journal_db` store (tests/conftest.py), on both backends: batch 1 the ADR-0225 frames,
batch 2 the family frames (delta_quantity_unbound sighted again, "The delta quantity role is
unbound."), tree heads 18, 37, 66 and 83. The tallies' values are those test_sighting_counts
writes out (each residual sighted once by the batch that stored it; delta_quantity_unbound
once more by batch 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli
from graphql_requests import data_on_store
from jsonl_files import write_jsonl
from sent_sql import sent_statements, sqlite_plan
from sqlalchemy import event, text
from store_support import distinct_frames, first_problem, refused_verify, triggers_bypassed

import store.db.write.writer as writer
from store.db.audit_store import AuditStore
from store.db.queries.listing_declarations import RESIDUALS
from store.db.queries.search import searched
from store.db.schema.tables import contract_residuals

# (batch, the residual's code, residuals: 1 if that batch first stored it, occurrences: the
# sightings that batch recorded), by the residual's seq, then batch.
ROWS = [
    (1, "action_cue_unbound", 1, 1), (1, "direction_unbound", 1, 1),
    (1, "changed_object_unbound", 1, 1),
    (1, "delta_quantity_unbound", 1, 1), (2, "delta_quantity_unbound", 0, 1),
    (1, "passive_voice_unsupported", 1, 1), (1, "unit_object_conflict", 1, 1),
    (2, "entity_unbound", 1, 1), (2, "base_quantity_unbound", 1, 1),
    (2, "state_entity_unbound", 1, 1), (2, "original_whole_unbound", 1, 1),
    (2, "inverse_topology_unlicensed", 1, 1), (2, "unbound_base_quantity", 1, 1),
]
# Each row names its residual by seq, and carries that residual's facet columns.
_READ_ROWS = """
SELECT t.batch_id, r.residual_code, t.residuals, t.occurrences,
       t.residual_kind = r.residual_kind AND t.source_axis = r.source_axis
       AND t.candidate_organ = r.candidate_organ AND t.residual_code = r.residual_code
       AND (t.family_id = r.family_id OR (t.family_id IS NULL AND r.family_id IS NULL))
FROM residual_record_tallies t JOIN contract_residuals r ON r.seq = t.record_seq
ORDER BY t.record_seq, t.batch_id
"""
FACETS = """query($search: String, $filter: ResidualFilter, $asOf: LogIndex) {
  residualFacets(search: $search, filter: $filter, asOf: $asOf) {
    total occurrences byCode { value count occurrences } } }"""


def test_each_batch_writes_a_row_per_residual_it_stored_or_sighted(
        journal_db: AuditStore) -> None:
    rows = journal_db.execute(lambda c: c.execute(text(_READ_ROWS)).all())
    assert [tuple(row[:4]) for row in rows] == ROWS
    assert all(row[4] for row in rows)


def test_a_search_s_facets_count_the_sightings_of_its_matches_by_batch(
        journal_db: AuditStore, example_store_url: str) -> None:
    def facets(search: str, **variables: object) -> dict[str, object]:
        found = data_on_store(example_store_url, FACETS, search=search, **variables)
        return dict(found["residualFacets"])

    # delta_quantity_unbound alone: stored by batch 1, sighted by batches 1 and 2.
    assert facets("delta quantity") == {"total": 1, "occurrences": 2, "byCode": [
        {"value": "delta_quantity_unbound", "count": 1, "occurrences": 2}]}
    # Batch 2's range: it stored none of it, and recorded one sighting of it.
    assert facets("delta quantity", filter={"batchIdFrom": 2, "batchIdTo": 2}) == {
        "total": 0, "occurrences": 1, "byCode": [
            {"value": "delta_quantity_unbound", "count": 0, "occurrences": 1}]}
    # As of batch 1's head: one sighting so far.
    assert facets("delta quantity", asOf=18)["occurrences"] == 1
    # "Tom gained apples." and "3 apples were gained by Tom.", the first seen twice.
    assert facets("apples") == {"total": 2, "occurrences": 3, "byCode": [
        {"value": "delta_quantity_unbound", "count": 1, "occurrences": 2},
        {"value": "passive_voice_unsupported", "count": 1, "occurrences": 1}]}
    # A filter on a facet column applies to the rows as it does to the residuals.
    assert facets("apples", filter={"code": ["passive_voice_unsupported"]})["total"] == 1


def test_a_search_s_facets_read_no_residual_row(journal_db: AuditStore) -> None:
    sent: list[str] = []
    event.listen(journal_db.engine, "before_cursor_execute",
                 lambda _c, _cur, sql, _p, _ctx, _many: sent.append(sql))
    found = journal_db.execute(RESIDUALS.facet_counts,
                               searched(None, "apples", contract_residuals))
    assert found.total == 2
    (statement,) = [sql for sql in sent if "combos" in sql]
    assert "residual_record_tallies" in statement
    assert "contract_residuals" not in statement and "residual_occurrences" not in statement


@pytest.fixture
def store(tmp_path: Path) -> Path:
    db = tmp_path / "audit.db"
    for path in EXAMPLE_FILES[:2]:
        assert cli("ingest", path, "--db", db).exit_code == 0
    return db


def test_verify_names_a_row_changed_out_of_band(store: Path) -> None:
    with triggers_bypassed(store) as connection:
        connection.execute("UPDATE residual_record_tallies SET occurrences = 5 "
                           "WHERE record_seq = 9 AND batch_id = 2")
    result = refused_verify(store)
    assert first_problem(result.stderr) == (
        "seq 9: residual_record_tallies record_seq 9 batch 2: row says ('missing_role', "
        "'role', 'unary_delta_transition', 'state_change.unary_delta', "
        "'delta_quantity_unbound', 0, 5), the residual and its sightings give "
        "('missing_role', 'role', 'unary_delta_transition', 'state_change.unary_delta', "
        "'delta_quantity_unbound', 0, 1)")


def test_verify_names_a_row_dropped_or_added(store: Path) -> None:
    with triggers_bypassed(store) as connection:
        connection.execute("DELETE FROM residual_record_tallies WHERE record_seq = 9 "
                           "AND batch_id = 2")
    assert first_problem(refused_verify(store).stderr) == (
        "seq 9: residual_record_tallies record_seq 9 batch 2: row is missing")
    with triggers_bypassed(store) as connection:
        connection.execute("INSERT INTO residual_record_tallies SELECT record_seq, 2, "
                           "residual_kind, source_axis, candidate_organ, family_id, "
                           "residual_code, 0, 1 FROM residual_record_tallies "
                           "WHERE record_seq IN (2, 9)")
    assert first_problem(refused_verify(store).stderr) == (
        "seq 2: residual_record_tallies record_seq 2 batch 2: row names no residual this "
        "batch stored or sighted (added out of band)")


def test_a_batch_resighting_its_own_residuals_across_chunks_counts_every_sighting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Frames a-i and b-i share their residuals (spans at the same offsets): batch 1 sights
    # each of its own residuals again in later chunks (7 rows each) and meets no earlier
    # batch's; batch 2 (frame c-0) sights three of batch 1's.
    monkeypatch.setattr(writer, "CHUNK_ROWS", 7)
    db = tmp_path / "audit.db"
    first = write_jsonl(tmp_path / "first.jsonl",
                        [*distinct_frames(3, "a"), *distinct_frames(3, "b")])
    second = write_jsonl(tmp_path / "second.jsonl", list(distinct_frames(1, "c")))
    with AuditStore.open(str(db)) as audit:
        for path in (first, second):
            with path.open("rb") as stream:
                audit.ingest(stream, source=path.name)
        rows = audit.execute(lambda c: c.execute(text(_READ_ROWS)).all())
    assert [tuple(row[:4]) for row in rows] == [
        (1, "changed_object_unbound", 1, 2), (2, "changed_object_unbound", 0, 1),
        (1, "direction_unbound", 1, 2), (2, "direction_unbound", 0, 1),
        (1, "competing_family_context", 1, 6), (2, "competing_family_context", 0, 1),
        (1, "changed_object_unbound", 1, 2), (1, "direction_unbound", 1, 2),
        (1, "changed_object_unbound", 1, 2), (1, "direction_unbound", 1, 2),
    ]
    assert all(row[4] for row in rows)
    assert cli("verify", "--db", db).exit_code == 0


def test_a_later_batch_sorts_its_rows_by_seq_alone_and_holds_no_table_of_ids(
        tmp_path: Path) -> None:
    """A later batch's rows on SQLite: its sightings grouped as the (residual_id, seq) index
    gives them, sorted as integers, the facet texts read after the sort. Grouping into a
    table of 64-character ids and sorting rows with their five texts was a later batch's
    peak memory (docs/benchmarks.md: a second 1M batch 298 -> 214 MiB)."""
    db = tmp_path / "audit.db"
    first = write_jsonl(tmp_path / "first.jsonl", list(distinct_frames(3, "a")))
    second = write_jsonl(tmp_path / "second.jsonl",
                         [*distinct_frames(1, "c"), *distinct_frames(1, "d")])
    with AuditStore.open(str(db)) as audit:
        with first.open("rb") as stream:
            audit.ingest(stream, source=first.name)
        with sent_statements(audit, writes=True) as sent, second.open("rb") as stream:
            audit.ingest(stream, source=second.name)
        (sql, params), = [(sql, params) for sql, params in sent
                          if "GROUP BY o.residual_id" in sql]
        plan = sqlite_plan(audit, sql, params)
    assert not [step for step in plan if step.startswith("MATERIALIZE")]
    assert plan.count("USE TEMP B-TREE FOR ORDER BY") == 1
    # The one sort is inside the rows' co-routine; the outer loop reads them in its order.
    assert plan.index("USE TEMP B-TREE FOR ORDER BY") < plan.index("SCAN narrow")
    assert plan[-2:] == ["SCAN narrow",
                         "SEARCH r USING INDEX ix_contract_residuals_seq (seq=?)"]
    assert "SCAN o USING COVERING INDEX ix_residual_occurrences_residual_id_seq" in plan
    assert cli("verify", "--db", db).exit_code == 0


def test_verify_names_a_changed_document_before_a_changed_tally(store: Path) -> None:
    """The search texts and the record tallies are checked apart (two workers may take them),
    and reported in one order: the document's problem, then the tally's."""
    with triggers_bypassed(store) as connection:
        connection.execute("UPDATE residual_record_tallies SET occurrences = 5 "
                           "WHERE record_seq = 2 AND batch_id = 1")
        connection.execute("UPDATE residual_texts SET explanation = 'nothing to see' "
                           "WHERE record_seq = 9")
        connection.execute("INSERT INTO residual_texts_fts (residual_texts_fts) "
                           "VALUES ('rebuild')")
    assert refused_verify(store).stderr.splitlines() == [
        "NOT intact: first problem at seq 9: residual_texts record_seq 9: row differs from the "
        "text the record's stored rows give",
        "  also seq 2: residual_record_tallies record_seq 2 batch 1: row says ('missing_role', "
        "'role', 'unary_delta_transition', 'state_change.unary_delta', 'action_cue_unbound', "
        "1, 5), the residual and its sightings give ('missing_role', 'role', "
        "'unary_delta_transition', 'state_change.unary_delta', 'action_cue_unbound', 1, 1)"]
