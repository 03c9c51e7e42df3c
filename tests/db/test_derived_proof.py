"""The batch proof compares values, not counts, for every derived table a batch writes (issue
32): an out-of-band trigger that changes a tally, a sighting count, a subtree or a tree head
makes `ingest` refuse, naming the table, with nothing committed; a row nobody wrote is
refused too. And every table that grows with a batch is a leaf or a declared derived table,
so a table added later cannot bypass the proof."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from backends import EXAMPLE_FILES, libpq_url
from cli_runs import cli
from jsonl_files import write_jsonl
from store_support import distinct_frames, raw_connect

from store.db.schema.record_kinds import DERIVED_TABLES, LEDGERED_KEYS
from store.db.schema.tables import metadata

REPO = Path(__file__).resolve().parents[2]
SURFACES = REPO / "examples" / "adr_0052_surfaces.jsonl"
JOURNAL = REPO / "examples" / "workbench_turn_journal.jsonl"
STATE = ("SELECT (SELECT count(*) FROM ingest_batches), (SELECT count(*) FROM tree_heads), "
         "(SELECT count(*) FROM residual_tallies), (SELECT count(*) FROM sighting_counts), "
         "(SELECT count(*) FROM log_subtrees)")


def _state(connection: object) -> tuple[object, ...]:
    return tuple(connection.execute(STATE).fetchone())  # type: ignore[attr-defined]


@pytest.fixture
def frames(tmp_path: Path) -> Path:
    """120 new frames: 960 leaves, so the batch completes subtrees of 256 leaves too."""
    return write_jsonl(tmp_path / "frames.jsonl", distinct_frames(120, "proof"))


# What an out-of-band BEFORE INSERT trigger does to each derived table's rows.
CHANGES = {
    "residual_tallies": "NEW.residuals := NEW.residuals * 10; "
                        "NEW.occurrences := NEW.occurrences * 10",
    "sighting_counts": "NEW.sightings := NEW.sightings * 10",
    "log_subtrees": "NEW.hash := repeat('0', 64)",
    "tree_heads": "NEW.root_hash := repeat('0', 64)",
    "turn_fields": "NEW.turn_cost_ms := 0",
    "residual_texts": "NEW.explanation := 'nothing to see'",
    "surface_texts": "NEW.surface := 'nothing to see'",
    "turn_texts": "NEW.prompt := 'nothing to see'",
    "residual_record_tallies": "NEW.occurrences := NEW.occurrences * 10",
}
# Tables a journal writes, frames do not.
JOURNAL_WRITES = ("turn_fields", "surface_texts", "turn_texts")


def test_every_derived_table_has_its_attack() -> None:
    assert sorted(CHANGES) == sorted(DERIVED_TABLES)


@pytest.mark.postgres
@pytest.mark.parametrize("table", sorted(CHANGES))
def test_postgres_a_trigger_changing_derived_values_fails_the_batch(
        pg_url: str, frames: Path, table: str) -> None:
    assert cli("ingest", "--db", pg_url, EXAMPLE_FILES[0]).exit_code == 0
    with psycopg.connect(libpq_url(pg_url), autocommit=True) as connection:
        before = _state(connection)
        connection.execute("CREATE FUNCTION evil() RETURNS trigger LANGUAGE plpgsql AS $$ "
                           f"BEGIN {CHANGES[table]}; RETURN NEW; END $$")
        connection.execute(f"CREATE TRIGGER evil BEFORE INSERT ON {table} "
                           "FOR EACH ROW EXECUTE FUNCTION evil()")

        result = cli("ingest", "--db", pg_url, JOURNAL if table in JOURNAL_WRITES else frames)

        assert result.exit_code == 1, result.stdout
        message = result.stderr.strip()
        assert message.startswith(f"Error: {table}: the batch did not read back as written ("
                                  ), message
        assert "rows were inserted and " in message and "but their values differ" in message
        assert "nothing was written" in message
        assert _state(connection) == before


def test_sqlite_a_row_nobody_wrote_fails_the_batch(examples_store: Path) -> None:
    """An AFTER INSERT trigger adds a tally row to the batch: counted as read back, not as
    inserted, so the message says so."""
    connection = raw_connect(examples_store)
    before = _state(connection)
    connection.execute(
        "CREATE TRIGGER evil AFTER INSERT ON tree_heads BEGIN INSERT INTO residual_tallies "
        "VALUES (NEW.batch_id, 999, 'forged', 'forged', 'forged', NULL, 'forged', 1, "
        "99999); END")
    connection.close()

    result = cli("ingest", "--db", examples_store, SURFACES)  # a batch without residuals

    assert result.exit_code == 1, result.stdout
    assert result.stderr.startswith("Error: residual_tallies: the batch did not read back as "
                                    "written (0 rows were inserted, 1 read back)"), result.stderr
    connection = raw_connect(examples_store)
    assert _state(connection) == before
    connection.close()


def _counts(path: Path) -> dict[str, int]:
    connection = raw_connect(path)
    try:
        return {name: connection.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
                for name in metadata.tables}
    finally:
        connection.close()


def test_every_table_a_batch_grows_is_a_leaf_or_a_proven_derived_table(
        db_path: Path, frames: Path) -> None:
    """Each kind of input, ingested: a table that grew and is neither ledgered nor in
    DERIVED_TABLES would be written unproven (declare it derived=True in record_kinds)."""
    grown: set[str] = set()
    for source in (*EXAMPLE_FILES, JOURNAL, frames):
        before = _counts(db_path) if db_path.exists() else dict.fromkeys(metadata.tables, 0)
        result = cli("ingest", "--db", db_path, source)
        assert result.exit_code == 0, result.stderr
        after = _counts(db_path)
        grown |= {name for name in after if after[name] > before[name]}
    assert grown - set(LEDGERED_KEYS) - set(DERIVED_TABLES) == set()
    assert set(DERIVED_TABLES) <= grown  # each one written by some batch above
