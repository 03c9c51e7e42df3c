"""`verify`'s search texts and indexes (revision 0013), and the residual record tallies beside
the residuals' documents (revision 0015): each text table must hold exactly the
document every record's stored rows give it (derived again here, as the writer and the
migration derive it), and the engine's index must be the index of those rows: SQLite, the
index FTS5 builds again from the rows compared term by term, and a count of its documents;
PostgreSQL, every stored tsvector equal to its recomputation."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import zip_longest

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from store.db.schema.text_search import FTS5_TOKENIZER, TEXT_INDEXES, TextIndex
from store.db.verify.problems import Problem
from store.db.write.residual_record_tallies import TABLE as RECORD_TALLIES
from store.db.write.residual_record_tallies import record_tally_problems

MAX_NAMED = 20  # per table: enough to name them

# Each text table's rows as the ledgered rows give them (the batches after :after).
_DERIVED = {
    "residual_texts": (
        "SELECT r.seq AS record_seq, r.batch_id, (SELECT a.problem_text FROM "
        "residual_occurrences o JOIN contract_assessments a ON a.assessment_id = "
        "o.assessment_id WHERE o.residual_id = r.residual_id ORDER BY o.seq LIMIT 1) AS c1, "
        "r.explanation AS c2 FROM contract_residuals r WHERE r.batch_id > :after"),
    "surface_texts": (
        "SELECT s.seq AS record_seq, s.batch_id, s.surface AS c1, (SELECT o.prompt FROM "
        "surface_occurrences o WHERE o.surface_id = s.surface_id ORDER BY o.seq LIMIT 1) AS c2 "
        "FROM surface_records s WHERE s.batch_id > :after"),
    "turn_texts": (
        "SELECT t.seq AS record_seq, t.batch_id, t.prompt AS c1, s.surface AS c2 FROM turns t "
        "JOIN surface_records s ON s.surface_id = t.surface_id WHERE t.batch_id > :after"),
}


def _row_problems(connection: Connection, index: TextIndex, after_batch: int
                  ) -> Iterator[Problem]:
    name = str(index.texts.name)
    first, second = index.columns
    differs = "IS NOT" if connection.dialect.name == "sqlite" else "IS DISTINCT FROM"
    statement = text(
        f"SELECT d.record_seq, x.record_seq IS NULL AS missing FROM ({_DERIVED[name]}) d "
        f"LEFT JOIN {name} x ON x.record_seq = d.record_seq WHERE x.record_seq IS NULL "
        f"OR x.batch_id <> d.batch_id OR x.{first} {differs} d.c1 "
        f"OR x.{second} {differs} d.c2 ORDER BY d.record_seq LIMIT {MAX_NAMED}")
    for seq, missing in connection.execute(statement, {"after": after_batch}):
        yield Problem(seq, name, f"record_seq {seq}",
                      "row is missing" if missing else
                      "row differs from the text the record's stored rows give")
    records = index.records.name
    extra = text(f"SELECT x.record_seq FROM {name} x WHERE x.batch_id > :after AND NOT EXISTS "
                 f"(SELECT 1 FROM {records} r WHERE r.seq = x.record_seq) "
                 f"ORDER BY x.record_seq LIMIT {MAX_NAMED}")
    for (seq,) in connection.execute(extra, {"after": after_batch}):
        yield Problem(seq, name, f"record_seq {seq}",
                      f"row names no record of {records} (added out of band)")


def _same_rows(connection: Connection, one: str, other: str) -> bool:
    """Whether two fts5vocab tables list the same (term, doc, cnt) rows in the same order:
    one pass over each, where EXCEPT sorted both, twice."""
    run = connection.exec_driver_sql
    pairs = zip_longest(run(f"SELECT term, doc, cnt FROM {one}"),
                        run(f"SELECT term, doc, cnt FROM {other}"))
    return all(a is not None and b is not None and tuple(a) == tuple(b) for a, b in pairs)


def _sqlite_index_problems(connection: Connection, index: TextIndex) -> Iterator[Problem]:
    """The store's FTS5 index against one FTS5 builds again from the text table's rows, in
    the temp schema (a read-only or immutable store takes no write, not even FTS5's own
    'integrity-check', an INSERT): each term's documents and occurrences must agree, and the
    documents counted."""
    fts, texts, columns = index.fts, index.texts.name, ", ".join(index.columns)
    run = connection.exec_driver_sql
    try:
        # Contentless and without column sizes: only the index is compared, and building
        # it alone was a third of the time of building it with a copy of every document.
        run(f"CREATE VIRTUAL TABLE temp.rebuilt_{fts} USING fts5({columns}, "
            f"tokenize='{FTS5_TOKENIZER}', content='', columnsize=0)")
        run(f"INSERT INTO temp.rebuilt_{fts} (rowid, {columns}) "
            f"SELECT record_seq, {columns} FROM main.{texts}")
        run(f"CREATE VIRTUAL TABLE temp.stored_{fts}_terms USING fts5vocab(main, '{fts}', 'row')")
        run(f"CREATE VIRTUAL TABLE temp.rebuilt_{fts}_terms USING fts5vocab(temp, "
            f"'rebuilt_{fts}', 'row')")
        stored, rebuilt = f"temp.stored_{fts}_terms", f"temp.rebuilt_{fts}_terms"
        # Both list their terms in the index's (term) order: the same terms alike, or
        # the differing ones named. Each way apart: SQLite reads compound SELECTs left to
        # right, no precedence.
        differing = [] if _same_rows(connection, stored, rebuilt) else [
            term for one, other in ((stored, rebuilt), (rebuilt, stored))
            for term in run(f"SELECT term FROM (SELECT term, doc, cnt FROM {one} "
                            f"EXCEPT SELECT term, doc, cnt FROM {other}) "
                            f"ORDER BY term LIMIT {MAX_NAMED}").scalars()]
        documents = run(f"SELECT count(*) FROM main.{fts}_docsize").scalar_one()
        rows = run(f"SELECT count(*) FROM main.{texts}").scalar_one()
    except DBAPIError as error:
        yield Problem(None, fts, "", f"cannot be read as an FTS5 index: {error.orig}")
        return
    finally:
        for name in (f"stored_{fts}_terms", f"rebuilt_{fts}_terms", f"rebuilt_{fts}"):
            run(f"DROP TABLE IF EXISTS temp.{name}")
    for term in sorted(set(differing)):
        yield Problem(None, fts, f"term {term!r}",
                      f"indexed otherwise than {texts}'s rows give it")
    if documents != rows:
        yield Problem(None, fts, "", f"indexes {documents} documents, {texts} holds {rows}")


def _pg_index_problems(connection: Connection, index: TextIndex) -> Iterator[Problem]:
    name = index.texts.name
    found = connection.execute(text(
        f"SELECT record_seq FROM {name} WHERE document IS DISTINCT FROM {index.pg_document()} "
        f"ORDER BY record_seq LIMIT {MAX_NAMED}")).scalars().all()
    for seq in found:
        yield Problem(seq, name, f"record_seq {seq}",
                      "its tsvector differs from the one its text gives")


def record_tally_check(connection: Connection, after_batch: int = 0) -> Iterator[Problem]:
    """The residual record tallies (revision 0015) row for row against the ones the ledgered
    rows give (the batches after `after_batch`): the first MAX_NAMED that differ. verify
    reports them after text_index_problems' (one check's problems before); a check apart
    from those, so that the two can run in two workers at once."""
    for named, (want, have) in enumerate(record_tally_problems(connection, after_batch)):
        if named == MAX_NAMED:
            return
        seq, batch = (want or have or (None, None))[:2]
        where = f"record_seq {seq} batch {batch}"
        if have is None:
            yield Problem(seq, RECORD_TALLIES, where, "row is missing")
        elif want is None:
            yield Problem(seq, RECORD_TALLIES, where,
                          "row names no residual this batch stored or sighted (added out of "
                          "band)")
        else:
            yield Problem(seq, RECORD_TALLIES, where,
                          f"row says {have[2:]}, the residual and its sightings give "
                          f"{want[2:]}")


def text_index_problems(connection: Connection, after_batch: int = 0) -> Iterator[Problem]:
    """Every text table against the ledgered rows (the batches after `after_batch`), then
    every full-text index against its text table (whole)."""
    for index in TEXT_INDEXES.values():
        yield from _row_problems(connection, index, after_batch)
        if connection.dialect.name == "sqlite":
            yield from _sqlite_index_problems(connection, index)
        else:
            yield from _pg_index_problems(connection, index)
