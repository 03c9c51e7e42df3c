"""Every revision keeps the append-only triggers and the rows; a failed upgrade changes nothing."""

from __future__ import annotations

import shutil
from contextlib import closing
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from log_leaves import history
from raw_reads import dump, tables, triggers
from sqlalchemy.exc import SQLAlchemyError
from store_support import (
    EXPECTED_TRIGGERS,
    FTS_TABLES,
    append_only_triggers,
    copy_migrations,
    raw_connect,
    residual_ids,
    revision_of,
    revision_source,
    revisions_oldest_first,
    row_counts,
    url_of,
)

from store.db.schema.engine import create_store_engine
from store.db.schema.schema_version import (
    downgrade,
    upgrade,
)
from store.db.write.writer import append_batch

HEAD = "0019"
FAMILY_FRAMES = EXAMPLE_FILES[1]
REV0001_STORE = Path(__file__).resolve().parents[1] / "data" / "store-rev0001.db"


def _store_written_at_the_first_revision(db_path: Path) -> None:
    """The writer writes head's tables, so an older store is the one an older commit wrote."""
    shutil.copyfile(REV0001_STORE, db_path)


def _ingest_at_current_revision(db_path: Path, examples_path: Path) -> None:
    """Write through the writer directly (at head's tables): AuditStore.open would refuse a
    store that a test revision put beyond head."""
    engine = create_store_engine(url_of(db_path), write=True)
    try:
        with examples_path.open("rb") as stream:
            append_batch(engine, stream, "examples")
    finally:
        engine.dispose()


def _revision_of(db_path: Path) -> str | None:
    return revision_of(url_of(db_path))


# A revision in the style the DESIGN warns about: batch mode on SQLite copies the table and
# drops its triggers, so the revision recreates them.
BATCH_MODE_REVISION = revision_source(
    "9001", HEAD,
    upgrade="""\
with op.batch_alter_table("contract_residuals", recreate="always") as batch:
    batch.add_column(sa.Column("note", sa.Text(), nullable=True))
create_append_only_triggers("contract_residuals", [("residual_id",), ("seq",)])""",
    downgrade="""\
with op.batch_alter_table("contract_residuals", recreate="always") as batch:
    batch.drop_column("note")
create_append_only_triggers("contract_residuals", [("residual_id",), ("seq",)])""",
    doc="test: rebuild contract_residuals in batch mode",
)


def test_the_first_revision_is_0001() -> None:
    assert revisions_oldest_first()[0] == "0001"


def _guarded_tables(path: Path) -> set[str]:
    """Every table a revision created (alembic's own bookkeeping table aside, and revision
    0013's FTS5 indexes: a virtual table takes no trigger, and FTS5 rewrites its shadow
    tables itself; their text tables are guarded)."""
    return tables(path) - {"alembic_version", *FTS_TABLES}


def test_append_only_triggers_exist_after_every_revision(db_path: Path) -> None:
    for revision in revisions_oldest_first():
        upgrade(url_of(db_path), revision)
        assert triggers(db_path) >= EXPECTED_TRIGGERS, revision
        assert triggers(db_path) == append_only_triggers(*_guarded_tables(db_path)), revision


def test_append_only_triggers_exist_after_every_downgrade_step(db_path: Path) -> None:
    revisions = revisions_oldest_first()
    upgrade(url_of(db_path), "head")
    for revision in reversed(revisions[:-1]):
        downgrade(url_of(db_path), revision)
        assert triggers(db_path) >= EXPECTED_TRIGGERS, revision
        assert triggers(db_path) == append_only_triggers(*_guarded_tables(db_path)), revision


def test_downgrade_to_base_removes_every_table_and_trigger(db_path: Path) -> None:
    upgrade(url_of(db_path), "head")
    downgrade(url_of(db_path), "base")
    assert triggers(db_path) == set()
    assert _revision_of(db_path) is None


def test_rows_from_the_first_revision_survive_upgrade_to_head(
    db_path: Path, examples_path: Path
) -> None:
    _store_written_at_the_first_revision(db_path)
    assert _revision_of(db_path) == revisions_oldest_first()[0]
    ids, ledger = residual_ids(db_path), history(db_path)
    assert len(ids) > 0

    upgrade(url_of(db_path), "head")

    assert residual_ids(db_path) == ids
    assert history(db_path) == ledger


def test_rows_survive_downgrade_and_upgrade_of_every_revision_above_the_first(
    db_path: Path, examples_path: Path
) -> None:
    revisions = revisions_oldest_first()
    _store_written_at_the_first_revision(db_path)
    ids, ledger = residual_ids(db_path), history(db_path)
    upgrade(url_of(db_path), "head")
    for revision in reversed(revisions[:-1]):
        downgrade(url_of(db_path), revision)
        assert residual_ids(db_path) == ids, revision
        assert history(db_path) == ledger, revision
    upgrade(url_of(db_path), "head")
    assert residual_ids(db_path) == ids
    assert history(db_path) == ledger


def test_tallies_dropped_by_a_downgrade_are_backfilled_as_the_writer_wrote_them(
    db_path: Path, examples_path: Path
) -> None:
    upgrade(url_of(db_path), "head")
    _ingest_at_current_revision(db_path, examples_path)
    written = _tallies(db_path)
    assert written
    downgrade(url_of(db_path), "0002")
    assert "residual_tallies" not in tables(db_path)
    upgrade(url_of(db_path), "head")
    assert _tallies(db_path) == written


def test_sighting_counts_dropped_by_a_downgrade_are_backfilled_as_the_writer_wrote_them(
    db_path: Path, examples_path: Path
) -> None:
    upgrade(url_of(db_path), "head")
    _ingest_at_current_revision(db_path, examples_path)
    _ingest_at_current_revision(db_path, FAMILY_FRAMES)  # sights delta_quantity_unbound again
    written = _counts(db_path)
    assert [row[-1] for row in written] == [1] * 6 + [2] + [1] * 6
    downgrade(url_of(db_path), "0009")
    assert "sighting_counts" not in tables(db_path)
    upgrade(url_of(db_path), "head")
    assert _counts(db_path) == written


def _counts(path: Path) -> list[tuple[object, ...]]:
    with closing(raw_connect(path)) as connection:
        return connection.execute(
            "SELECT * FROM sighting_counts ORDER BY batch_id, record_seq").fetchall()


def _tallies(path: Path) -> list[tuple[object, ...]]:
    with closing(raw_connect(path)) as connection:
        return connection.execute(
            "SELECT * FROM residual_tallies ORDER BY batch_id, ordinal").fetchall()


def test_a_batch_mode_revision_keeps_rows_ids_and_triggers_both_ways(
    tmp_path: Path, db_path: Path, examples_path: Path
) -> None:
    scripts = copy_migrations(tmp_path, {"9001_batch_mode.py": BATCH_MODE_REVISION})
    url = url_of(db_path)
    upgrade(url, HEAD, scripts)
    _ingest_at_current_revision(db_path, examples_path)
    ids, ledger, counts = residual_ids(db_path), history(db_path), row_counts(db_path)

    upgrade(url, "head", scripts)
    assert _revision_of(db_path) == "9001"
    assert triggers(db_path) >= EXPECTED_TRIGGERS
    assert (residual_ids(db_path), history(db_path)) == (ids, ledger)

    downgrade(url, HEAD, scripts)
    assert _revision_of(db_path) == HEAD
    assert triggers(db_path) >= EXPECTED_TRIGGERS
    assert (residual_ids(db_path), history(db_path)) == (ids, ledger)

    upgrade(url, "head", scripts)
    assert triggers(db_path) >= EXPECTED_TRIGGERS
    assert (residual_ids(db_path), history(db_path), row_counts(db_path)) == (
        ids, ledger, counts)


FAILING_REVISION = revision_source(
    "9001", HEAD,
    upgrade="""\
op.create_table("half_done", sa.Column("id", sa.Integer(), primary_key=True))
op.execute("INSERT INTO half_done (id) VALUES (1)")
raise RuntimeError("this revision fails after creating a table")""",
    doc="test: creates a table, then fails",
)


def test_a_failed_upgrade_leaves_the_file_byte_for_byte_as_before(
    tmp_path: Path, db_path: Path, examples_path: Path
) -> None:
    scripts = copy_migrations(tmp_path, {"9001_fails.py": FAILING_REVISION})
    url = url_of(db_path)
    upgrade(url, HEAD, scripts)
    _ingest_at_current_revision(db_path, examples_path)
    before_bytes, before_dump = db_path.read_bytes(), dump(db_path)

    with pytest.raises((RuntimeError, SQLAlchemyError), match="this revision fails"):
        upgrade(url, "head", scripts)

    assert not Path(f"{db_path}-wal").exists() or Path(f"{db_path}-wal").stat().st_size == 0
    assert db_path.read_bytes() == before_bytes
    assert dump(db_path) == before_dump
    assert _revision_of(db_path) == HEAD
    assert "half_done" not in "".join(before_dump + dump(db_path))
