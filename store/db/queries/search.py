"""Full-text search in SQL: the condition and RANK order a searched list takes, its matches
counted in the engine's own index, and the highlighted snippet of each hit. The syntax a
search is written in, and its parse: store/db/queries/search_syntax.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import (
    BigInteger,
    BindParameter,
    ColumnElement,
    Connection,
    Select,
    Table,
    and_,
    bindparam,
    cast,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement as _Element
from sqlalchemy.types import NullType, String

from store.db.queries.errors import QueryError
from store.db.queries.search_syntax import PIECES, Search, Term, fold, parse_search
from store.db.schema.tables import contract_residuals, ingest_batches
from store.db.schema.tally_tables import residual_record_tallies
from store.db.schema.text_search import PG_CONFIG, TextIndex, index_of

SNIPPET_WORDS = 24  # words around the first hit
MARK_OPEN, MARK_CLOSE, ELLIPSIS = "«", "»", "…"


# --- SQL ------------------------------------------------------------------------------------


class Matches(_Element[bool]):
    """`records.seq` among the records whose document matches: a subquery on the engine's
    own index, written per dialect."""

    # Untyped: a Boolean would be compared to 1 on SQLite ("IN (...) = 1"), which no index
    # serves.
    type = NullType()  # type: ignore[assignment]
    inherit_cache = False

    def __init__(self, index: TextIndex, seq: Any, search: Search) -> None:
        self.index = index
        self.seq = seq
        self.search = search


def _bound(compiler: Any, value: str, **kw: Any) -> str:
    """The engine's query string as a bound parameter, never as SQL text."""
    parameter: BindParameter[str] = bindparam(None, value, type_=String())
    return str(compiler.process(parameter, **kw))


@compiles(Matches, "sqlite")
def _sqlite_matches(element: Matches, compiler: Any, **kw: Any) -> str:
    fts = element.index.fts
    return (f"{compiler.process(element.seq, **kw)} IN (SELECT rowid FROM {fts} "
            f"WHERE {fts} MATCH {_bound(compiler, element.search.fts5(), **kw)})")


@compiles(Matches, "postgresql")
def _pg_matches(element: Matches, compiler: Any, **kw: Any) -> str:
    texts = element.index.texts.name
    return (f"{compiler.process(element.seq, **kw)} IN (SELECT record_seq FROM {texts} "
            f"WHERE document @@ to_tsquery('{PG_CONFIG}', "
            f"{_bound(compiler, element.search.tsquery(), **kw)}))")


def text_index(records: Table) -> TextIndex:
    index = index_of(records)
    if index is None:
        raise QueryError(f"search: {records.name} carry no text to search")
    return index


def matches(records: Table, search: Search) -> ColumnElement[bool]:
    """The records (by seq) whose document matches `search`."""
    return Matches(text_index(records), records.c.seq, search)


@dataclass(frozen=True, slots=True)
class Searched:
    """A listing's filter (or none) and a search, ANDed: what a searched list, count, facet or
    group takes. Its records are counted row by row (the tallies hold no text)."""

    base: Any
    search: Search
    records: Table

    def conditions(self, table: Table | None = None) -> list[ColumnElement[bool]]:
        found = list(self.base.conditions()) if self.base is not None else []
        return [*found, matches(self.records, self.search)]

    def has_ids(self) -> bool:
        return True  # count the matching rows, never the tallies

    def has_range(self) -> bool:
        return self.base is not None and self.base.has_range()

    def without_range(self) -> Searched:
        return replace(self, base=None if self.base is None else self.base.without_range())

    def batch_conditions(self, column: Any) -> list[ColumnElement[bool]]:
        return [] if self.base is None else list(self.base.batch_conditions(column))

    def __getattr__(self, name: str) -> Any:
        # A filter field read by a facet or group (turns' time bounds): the base filter's.
        if name.startswith("__") or self.base is None:
            raise AttributeError(name)
        return getattr(self.base, name)


def record_tallies(where: Searched, snapshot: Any, ingest_time: bool = False
                   ) -> Select[Any] | None:
    """A residual search's rows as the residual tallies count them, one residual at a time
    (residual_record_tallies: per residual and batch, `residuals` and `occurrences`), held by
    `snapshot`, with `ingest_time` their batch's `ingested_at`: what its facets and groups
    sum, reading the matches' narrow rows by the document's record_seq and no residual row or
    sighting. None for other records, or with a filter of residual ids (no id is there)."""
    if where.records is not contract_residuals or (
            where.base is not None and where.base.has_ids()):
        return None
    t = residual_record_tallies
    rows = select(t).where(
        *([] if where.base is None else where.base.conditions(t)),
        Matches(text_index(where.records), t.c.record_seq, where.search),
        *([] if snapshot is None else [snapshot.covers(t.c.batch_id)]))
    if not ingest_time:
        return rows
    return rows.add_columns(ingest_batches.c.ingested_at).join(
        ingest_batches, ingest_batches.c.batch_id == t.c.batch_id)


def searched(where: Any, text: str | None, records: Table) -> Any:
    """`where` with the search `text` ANDed (None: `where` as it is)."""
    if text is None:
        return where
    text_index(records)
    return Searched(where, parse_search(text), records)


# --- rank ----------------------------------------------------------------------------------

_SCALE = 1_000_000


def rank_score(index: TextIndex, search: Search, dialect: str) -> Any:
    """Per match, its rank as a non-negative integer, larger better: bm25 (FTS5) or
    ts_rank (PostgreSQL), times a million."""
    if dialect == "sqlite":
        return literal_column(f"CAST(round(-bm25({index.fts}) * {_SCALE}) AS INTEGER)")
    query = func.to_tsquery(literal_column(f"'{PG_CONFIG}'"),
                            bindparam(None, search.tsquery(), type_=String()))
    document: Any = literal_column(f"{index.texts.name}.document")
    return cast(func.round(func.ts_rank(document, query) * _SCALE), BigInteger)


def ranked_seqs(index: TextIndex, search: Search, dialect: str, *, limit: int,
                after: Sequence[int] | None, through: int | None,
                conditions: Sequence[ColumnElement[bool]] = ()) -> Select[Any]:
    """The best `limit` matches' (record_seq, score), best first (ties by seq), past the
    key `after`, among records with seq <= `through`: LIMIT inside the engine's query, before
    any join; with `conditions` (a filter), the records joined inside it."""
    score = rank_score(index, search, dialect)
    if dialect == "sqlite":
        fts = table(index.fts, literal_column("rowid"))
        seq = fts.c.rowid
        statement = select(seq.label("record_seq"), score.label("score")).select_from(fts).where(
            text(f"{index.fts} MATCH :search_query").bindparams(search_query=search.fts5()))
    else:
        texts = index.texts
        seq = texts.c.record_seq
        statement = select(seq.label("record_seq"), score.label("score")).where(
            text(f"document @@ to_tsquery('{PG_CONFIG}', :search_query)").bindparams(
                search_query=search.tsquery()))
    if conditions:
        records = index.records
        statement = statement.join(records, records.c.seq == seq).where(*conditions)
    if through is not None:
        statement = statement.where(seq <= through)
    if after is not None:
        best, last = after
        statement = statement.where(or_(score < best, and_(score == best, seq > last)))
    return statement.order_by(score.desc(), seq).limit(limit)


def count_matches(connection: Connection, records: Table, search: Search,
                  through: int | None) -> int:
    """How many records (seq <= `through`) match: counted in the engine's index alone, no
    record read (a search without any other filter)."""
    index = text_index(records)
    if connection.dialect.name == "sqlite":
        statement = f"SELECT count(*) FROM {index.fts} WHERE {index.fts} MATCH :query"
        query = search.fts5()
        seq = "rowid"
    else:
        statement = (f"SELECT count(*) FROM {index.texts.name} WHERE document @@ "
                     f"to_tsquery('{PG_CONFIG}', :query)")
        query = search.tsquery()
        seq = "record_seq"
    if through is not None:
        statement += f" AND {seq} <= :through"
    found = connection.execute(text(statement), {"query": query, "through": through})
    return int(found.scalar_one())


# --- snippets -------------------------------------------------------------------------------


def _hit(word: str, terms: Iterable[Term]) -> Term | None:
    """The first term `word` is a word of (None: none)."""
    folded = fold(word)
    for term in terms:
        for position, wanted in enumerate(term.words):
            last = position == len(term.words) - 1
            if folded == wanted or (last and term.prefix and folded.startswith(wanted)):
                return term
    return None


Hit = Callable[[str], "Term | None"]


def hits_of(search: Search) -> Hit:
    """`_hit` for the search's terms, each word looked up once: a page's snippets meet the
    same words row after row."""
    terms, found = search.terms(), {}

    def hit(word: str) -> Term | None:
        if word not in found:
            found[word] = _hit(word, terms)
        return found[word]

    return hit


def terms_found(text: str, search: Search, hit: Hit | None = None) -> int:
    """How many of the search's terms have a word in `text`."""
    hit = hit or hits_of(search)
    return len({id(term) for w in PIECES.findall(text) if (term := hit(w))})


def snippet(text: str, search: Search, hit: Hit | None = None) -> str | None:
    """`text` around its first hit, each word the search names between « and », up to
    SNIPPET_WORDS words, … where cut; None if no word of it is there. Plain text: a page
    escapes it, then turns the marks into <mark>."""
    hit = hit or hits_of(search)
    words = list(PIECES.finditer(text))
    hits = [i for i, w in enumerate(words) if hit(w.group()) is not None]
    if not hits:
        return None
    # A third of the window before the first hit; a window that would run past the end
    # starts earlier (a short text is shown whole).
    first = max(0, min(hits[0] - SNIPPET_WORDS // 3, len(words) - SNIPPET_WORDS))
    last = min(len(words), first + SNIPPET_WORDS)
    start = 0 if first == 0 else words[first].start()
    end = len(text) if last == len(words) else words[last - 1].end()
    marked, at = [], start
    for i in hits:
        if first <= i < last:
            w = words[i]
            marked += [text[at:w.start()], MARK_OPEN, w.group(), MARK_CLOSE]
            at = w.end()
    marked.append(text[at:end])
    body = " ".join("".join(marked).split())
    return (ELLIPSIS if start > 0 else "") + body + (ELLIPSIS if end < len(text) else "")


def snippets(connection: Connection, records: Table, search: Search,
             seqs: Sequence[int]) -> Mapping[int, str | None]:
    """Per record seq, the snippet of its document's column that has the most of the
    search's terms (the first such column on a tie)."""
    if not seqs:
        return {}
    texts = text_index(records).texts
    columns = [c for c in texts.c if c.name not in ("record_seq", "batch_id", "document")]
    found: dict[int, str | None] = dict.fromkeys(seqs)
    hit = hits_of(search)
    for row in connection.execute(select(texts.c.record_seq, *columns)
                                  .where(texts.c.record_seq.in_(list(seqs)))):
        values = [value for value in row[1:] if value]
        if values:
            best = max(values, key=lambda value: terms_found(value, search, hit))  # first on ties
            found[row[0]] = snippet(best, search, hit)
    return found
