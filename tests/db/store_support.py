"""What the append-only store's tests share: building frames, looking at files from outside.

Databases are files under tmp_path; raw `sqlite3` connections stand in for the sqlite3
shell or any other tool that opens the file without our pragmas.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic.script import ScriptDirectory
from cli_runs import cli
from click.testing import Result
from raw_reads import query
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.db.schema.engine import create_store_engine
from store.db.schema.schema_version import alembic_config, current_revision, upgrade
from store.db.write.writer import append_batch

REPO = Path(__file__).resolve().parents[2]
MIGRATIONS = REPO / "migrations"

# Revision 0001's tables (the residual store and its hash chain, which 0006 replaced).
REV0001_TABLES = (
    "ingest_batches",
    "contract_assessments",
    "contract_residuals",
    "residual_occurrences",
    "ledger",
)
# The residual store's tables at every revision: their triggers are always there.
TABLES = REV0001_TABLES[:-1]
SURFACE_TABLES = ("surface_records", "surface_occurrences")  # revision 0002
TALLY_TABLES = ("residual_tallies",)  # revision 0003
TURN_TABLES = ("turns",)  # revision 0005
LOG_TABLES = ("log_subtrees", "tree_heads", "log_origin")  # revision 0006, instead of ledger
CHECKPOINT_TABLES = ("checkpoints", "checkpoint_cosignatures")  # revision 0009
COUNT_TABLES = ("sighting_counts",)  # revision 0010
TURN_FIELD_TABLES = ("turn_fields",)  # revision 0011
CONSTRUCTION_TABLES = ("turn_constructions", "turn_assessments")  # revision 0012
TEXT_TABLES = ("residual_texts", "surface_texts", "turn_texts")  # revision 0013
RECORD_TALLY_TABLES = ("residual_record_tallies",)  # revision 0015
TURN_TALLY_TABLES = ("turn_tallies",)  # revision 0016
# SQLite: the FTS5 index over each text table, and the shadow tables FTS5 keeps for it.
FTS_TABLES = tuple(f"{t}_fts{part}" for t in TEXT_TABLES
                   for part in ("", "_data", "_idx", "_docsize", "_config"))
HEAD_TABLES = (*TABLES, *SURFACE_TABLES, *TALLY_TABLES, *TURN_TABLES, *LOG_TABLES,
               *CHECKPOINT_TABLES, *COUNT_TABLES, *TURN_FIELD_TABLES, *CONSTRUCTION_TABLES,
               *TEXT_TABLES, *RECORD_TALLY_TABLES, *TURN_TALLY_TABLES)


def append_only_triggers(*tables: str) -> frozenset[str]:
    """The names of each table's three guards, as every revision creates them."""
    return frozenset(f"{t}_append_only_{op}" for t in tables
                     for op in ("update", "delete", "insert"))


EXPECTED_TRIGGERS = append_only_triggers(*TABLES)
HEAD_TRIGGERS = append_only_triggers(*HEAD_TABLES)
# Revisions 0013 and 0014's: every table's but the residual record tallies' (revision 0015)
# and the turn tallies' (0016).
TRIGGERS_AT_0014 = HEAD_TRIGGERS - append_only_triggers(*RECORD_TALLY_TABLES, *TURN_TALLY_TABLES)
# Revision 0015's: every table's but the turn tallies'.
TRIGGERS_AT_0015 = HEAD_TRIGGERS - append_only_triggers(*TURN_TALLY_TABLES)


# --- stores and files -------------------------------------------------------------------


def url_of(path: Path) -> str:
    return f"sqlite:///{path}"


def store_at(url: str, revision: str, inputs: Iterable[tuple[str, Iterable[bytes]]]) -> None:
    """A store made by alembic revision `revision`, then each input (its name, its lines)
    appended as one batch."""
    upgrade(url, revision)
    engine = create_store_engine(url, write=True)
    try:
        for name, lines in inputs:
            append_batch(engine, lines, name)
    finally:
        engine.dispose()


def three_turn_journal() -> tuple[str, list[bytes]]:
    """An input: a journal of three turns, "prompt 1" to "prompt 3", grounding source none."""
    return "journal.jsonl", [
        (journal_line(journal_entry(n, f"prompt {n}", DISCLOSURE, "none")) + "\n").encode()
        for n in (1, 2, 3)]


def span(problem_text: str, text: str, occurrence: int = 0) -> dict[str, object]:
    """A SourceSpan dict for the `occurrence`-th appearance of `text` in `problem_text`."""
    start = -1
    for _ in range(occurrence + 1):
        start = problem_text.index(text, start + 1)
    return {"text": text, "start": start, "end": start + len(text), "sentence_index": None}


def assessment(
    organ: str,
    spans: list[dict[str, object]],
    missing: tuple[str, ...] = (),
    hazards: tuple[str, ...] = (),
    runnable: bool = False,
) -> dict[str, object]:
    codes = ", ".join((*missing, *hazards))
    return {
        "candidate_organ": organ,
        "missing_bindings": list(missing),
        "unresolved_hazards": list(hazards),
        "runnable": runnable,
        "explanation": "runnable" if runnable
        else f"diagnostic candidate is not runnable: {codes}",
        "evidence_spans": spans,
    }


def frame(problem_text: str, *assessments: dict[str, object], ref: str | None = None) -> dict:
    record: dict[str, object] = {"problem_text": problem_text,
                                 "contract_assessments": list(assessments)}
    if ref is not None:
        record["source_ref"] = ref
    return record


def gained_frame(problem_text: str, *codes: str, ref: str | None = None) -> dict:
    """A unary_delta_transition refusal whose one span is the word "gained"."""
    return frame(
        problem_text,
        assessment("unary_delta_transition", [span(problem_text, "gained")], missing=codes),
        ref=ref,
    )


def distinct_frames(count: int, tag: str) -> Iterator[dict]:
    """`count` frames no other tag shares: 2 assessments, 3 residual occurrences each."""
    for i in range(count):
        text = f"Case {tag}-{i}: Tom gained {i} apples and ate 2 of them."
        yield frame(
            text,
            assessment("unary_delta_transition", [span(text, "gained"), span(text, str(i))],
                       missing=("changed_object_unbound", "direction_unbound")),
            assessment("quantity_entity_binding", [span(text, "apples")],
                       hazards=("competing_family_context",)),
        )


def spec_residual_id(organ: str, kind: str, code: str, spans: list[dict[str, object]]) -> str:
    """docs/design.md's residual_id recipe, written out here independently of the store."""
    payload = {"candidate_organ": organ, "residual_kind": kind, "residual_code": code,
               "evidence_spans": [{k: s[k] for k in ("text", "start", "end", "sentence_index")}
                                  for s in spans]}
    encoded = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


# --- looking at a database file from outside --------------------------------------------


def raw_connect(path: Path) -> sqlite3.Connection:
    """A connection that sets no pragma and autocommits, as the sqlite3 shell does."""
    return sqlite3.connect(path, isolation_level=None)


@contextmanager
def triggers_bypassed(path: Path) -> Iterator[sqlite3.Connection]:
    """Drop every trigger, let the caller tamper, then put the triggers back as they were."""
    connection = raw_connect(path)
    saved = connection.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in saved:
        connection.execute(f"DROP TRIGGER {name}")
    yield connection
    for _, sql in saved:
        connection.execute(sql)
    connection.close()


def row_counts(path: Path | str) -> dict[str, int]:
    """Rows per residual-store table, and the tree heads (one per batch)."""
    return {t: query(path, f"SELECT count(*) FROM {t}")[0][0] for t in (*TABLES, "tree_heads")}


def residual_ids(path: Path | str) -> dict[str, int]:
    """residual_id -> seq: the ids and where they entered the ledger."""
    return dict(query(path, "SELECT residual_id, seq FROM contract_residuals ORDER BY seq"))


def copy_migrations(tmp_path: Path, extra_revisions: dict[str, str] | None = None) -> Path:
    """A copy of migrations/ with extra revision files (name -> source) on top."""
    target = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS, target, ignore=shutil.ignore_patterns("__pycache__"))
    for name, source in (extra_revisions or {}).items():
        (target / "versions" / name).write_text(source)
    return target


def revisions_oldest_first(script_location: Path | None = None) -> list[str]:
    script = ScriptDirectory.from_config(alembic_config("sqlite://", script_location))
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


def revision_of(url: str) -> str | None:
    """The store's alembic revision, read without migrating or creating anything."""
    engine = create_store_engine(url, read_only=True)
    try:
        return current_revision(engine)
    finally:
        engine.dispose()


def revision_source(revision: str, down_revision: str, upgrade: str, downgrade: str = "pass",
                    doc: str = "test revision") -> str:
    indent = "\n    "
    return (
        f'"""{doc}\n\nRevision ID: {revision}\nRevises: {down_revision}\n"""\n'
        "from alembic import op\n"
        "import sqlalchemy as sa\n"
        "from append_only import create_append_only_triggers\n\n"
        f"revision = {revision!r}\ndown_revision = {down_revision!r}\n"
        "branch_labels = None\ndepends_on = None\n\n\n"
        f"def upgrade():{indent}{indent.join(upgrade.splitlines())}\n\n\n"
        f"def downgrade():{indent}{indent.join(downgrade.splitlines())}\n"
    )


# --- verify -----------------------------------------------------------------------------


def verify_both_ways(db: Path | str, *extra: str | Path) -> Result:
    """`core-audit verify` in this process (--jobs 1) and in two worker processes (--jobs 2):
    the same exit status, output and report, byte for byte; the second run's result."""
    alone = cli("verify", "--db", db, "--jobs", "1", *extra)
    split = cli("verify", "--db", db, "--jobs", "2", *extra)
    assert (split.exit_code, split.stdout, split.stderr) == (
        alone.exit_code, alone.stdout, alone.stderr)
    return split


def refused_verify(db: Path | str) -> Result:
    """`core-audit verify` on a store it must find broken: status 1, through click, so the
    user sees a message and never a traceback; the same with one process or two."""
    result = verify_both_ways(db)
    assert result.exit_code == 1, result.stdout
    assert isinstance(result.exception, SystemExit), result.exception
    return result


def first_problem(stderr: str) -> str:
    """The place and reason `verify` names first in its report."""
    first = stderr.splitlines()[0]
    assert first.startswith("NOT intact: first problem at "), stderr
    return first.removeprefix("NOT intact: first problem at ")
