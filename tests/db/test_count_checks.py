"""A full verify recomputes the tallies and the sighting counts with one read of the sightings
(count_checks): it must name exactly what the two checks apart name (the tallies' problems,
then at most 20 of the sighting counts'), for the whole store and after a verified batch.

The store: the three example files, then the Workbench journal (batches 1-4; residuals
sighted in batches 1 and 2, surfaces in 3 and 4)."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli
from store_support import triggers_bypassed

from store.db.schema.engine import create_store_engine
from store.db.verify.count_checks import count_problems
from store.db.verify.derived_checks import sighting_count_problems, tally_problems
from store.db.verify.problems import Problem

JOURNAL = EXAMPLE_FILES[0].parent / "workbench_turn_journal.jsonl"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    db = tmp_path / "audit.db"
    for path in (*EXAMPLE_FILES, JOURNAL):
        assert cli("ingest", path, "--db", db).exit_code == 0
    return db


def _both_ways(db: Path, after_batch: int) -> tuple[list[Problem], list[Problem]]:
    engine = create_store_engine(f"sqlite:///{db}", read_only=True, pooled=False)
    try:
        with engine.connect() as connection:
            apart = [*tally_problems(connection, after_batch),
                     *islice(sighting_count_problems(connection, after_batch), 20)]
            return list(count_problems(connection, after_batch)), apart
    finally:
        engine.dispose()


def test_an_intact_store_has_no_count_problem(store: Path) -> None:
    assert _both_ways(store, 0) == ([], [])


@pytest.mark.parametrize("after_batch", [0, 1])
def test_the_counts_read_once_name_what_the_two_checks_name(store: Path,
                                                            after_batch: int) -> None:
    with triggers_bypassed(store) as connection:
        connection.execute("UPDATE residual_tallies SET occurrences = occurrences + 5 "
                           "WHERE batch_id = 2 AND ordinal = 1")
        connection.execute("UPDATE sighting_counts SET sightings = 7 WHERE batch_id = 4 AND "
                           "record_table = 'surface_records' AND sightings = 3")
        connection.execute("DELETE FROM sighting_counts WHERE batch_id = 1 AND record_seq = 6")
        connection.execute("INSERT INTO sighting_counts VALUES (3, 999, 'surface_records', 1)")
        # an occurrence out of band: batch 2's tallies and its residual's counts are off
        connection.execute("INSERT INTO residual_occurrences SELECT assessment_id, 99, "
                           "residual_id, 999, batch_id FROM residual_occurrences "
                           "WHERE batch_id = 2 ORDER BY seq LIMIT 1")
    together, apart = _both_ways(store, after_batch)
    assert together == apart
    named = [f"{p.table} {p.key}" for p in together]
    assert named[0] == "residual_tallies batch 2"
    assert "sighting_counts batch 3 seq 999" in named
    assert any(p.key.startswith("batch 4 seq ") and p.reason == (
        "row says surface_records, 7 sightings; the sightings say surface_records, 3")
               for p in together)
    assert any(p.key.startswith("batch 1 ") for p in together) == (after_batch == 0)
