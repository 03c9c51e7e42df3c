"""Full-text search: the documented query syntax, parsed here into the engine's own (FTS5's
MATCH string, PostgreSQL's tsquery), the condition and RANK order a searched list takes, and
the highlighted snippet of each hit.

Syntax (docs/graphql.md#searching-text): words (`apples`), phrases in double quotes
(`"gained 3"`), prefixes (`appl*`), `AND` (or just a space), `OR`, `NOT` between two terms
(`apples NOT pears`), parentheses. A word is matched as the engine cuts words: letters and
digits; `residual_code` is the phrase "residual code". Nothing else of the engine's syntax
(column filters, NEAR, ^, -) passes: a word only ever reaches it as letters and digits,
quoted, so search text is never read as SQL or FTS syntax.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
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

from store.db.queries.errors import LimitExceeded, QueryError
from store.db.schema.text_search import PG_CONFIG, TextIndex, index_of

MAX_SEARCH_CHARS = 500
MAX_TERMS = 32
SNIPPET_WORDS = 24  # words around the first hit
MARK_OPEN, MARK_CLOSE, ELLIPSIS = "«", "»", "…"
_KEYWORDS = ("AND", "OR", "NOT")
_PIECES = re.compile(r"[^\W_]+")
_TOKENS = re.compile(r'\s+|(?P<quote>"[^"]*"?)|(?P<paren>[()])|(?P<word>[^\s"()]+)')


class SearchSyntaxError(QueryError):
    """A search string this syntax does not read."""


# --- the syntax tree ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Term:
    words: tuple[str, ...]  # one word, or a phrase's words in order; case-folded
    prefix: bool = False  # the last word is a prefix


@dataclass(frozen=True, slots=True)
class Both:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Either:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Without:
    left: Node
    right: Node  # left AND NOT right


Node = Term | Both | Either | Without


@dataclass(frozen=True, slots=True)
class Search:
    """A parsed search: its text as given and its tree."""

    text: str
    tree: Node

    def fts5(self) -> str:
        return _fts5(self.tree)

    def tsquery(self) -> str:
        return _tsquery(self.tree)

    def terms(self) -> list[Term]:
        """Every term it names, NOT's right side included (a snippet marks what matched)."""
        found: list[Term] = []
        _collect(self.tree, found, positive=True)
        return found


def _collect(node: Node, found: list[Term], *, positive: bool) -> None:
    if isinstance(node, Term):
        if positive:
            found.append(node)
        return
    _collect(node.left, found, positive=positive)
    _collect(node.right, found, positive=positive and not isinstance(node, Without))


def _fts5(node: Node) -> str:
    if isinstance(node, Term):
        quoted = '"' + " ".join(node.words) + '"'  # letters and digits only: nothing to escape
        return quoted + ("*" if node.prefix else "")
    operator = {Both: "AND", Either: "OR", Without: "NOT"}[type(node)]
    return f"({_fts5(node.left)} {operator} {_fts5(node.right)})"


def _tsquery(node: Node) -> str:
    if isinstance(node, Term):
        words = [f"'{word}'" for word in node.words]
        if node.prefix:
            words[-1] += ":*"
        return words[0] if len(words) == 1 else "(" + " <-> ".join(words) + ")"
    if isinstance(node, Without):
        return f"({_tsquery(node.left)} & !{_tsquery(node.right)})"
    operator = "&" if isinstance(node, Both) else "|"
    return f"({_tsquery(node.left)} {operator} {_tsquery(node.right)})"


# --- the parser -----------------------------------------------------------------------------


def _folded(text: str) -> str:
    """Case and diacritics folded, as the engines fold them (FTS5's remove_diacritics)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _pieces(text: str, what: str) -> tuple[str, ...]:
    pieces = tuple(_folded(p) for p in _PIECES.findall(text))
    if not pieces:
        raise SearchSyntaxError(f"search: {what} has no letter or digit to search for")
    return pieces


def _lex(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    for match in _TOKENS.finditer(text):
        if match.group("quote") is not None:
            quoted = match.group("quote")
            if len(quoted) < 2 or not quoted.endswith('"'):
                raise SearchSyntaxError(f"search: the quote at character {match.start() + 1} "
                                        "is never closed (a phrase is \"two words\")")
            tokens.append(("phrase", quoted[1:-1]))
        elif match.group("paren") is not None:
            tokens.append((match.group("paren"), match.group("paren")))
        elif match.group("word") is not None:
            word = match.group("word")
            tokens.append(("op", word) if word in _KEYWORDS else ("word", word))
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.at = 0
        self.terms = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def either(self) -> Node:
        node = self.both()
        while self.peek() == ("op", "OR"):
            self.take()
            node = Either(node, self.both())
        return node

    def both(self) -> Node:
        node = self.primary()
        while (token := self.peek()) is not None and token[0] != ")" and token != ("op", "OR"):
            if token == ("op", "NOT"):
                self.take()
                node = Without(node, self.primary())
                continue
            if token == ("op", "AND"):
                self.take()
            node = Both(node, self.primary())
        return node

    def primary(self) -> Node:
        token = self.peek()
        if token is None:
            raise SearchSyntaxError("search: a term is missing at the end (after AND, OR, "
                                    "NOT or an opening parenthesis)")
        kind, value = self.take()
        if kind == "(":
            node = self.either()
            if self.peek() != (")", ")"):
                raise SearchSyntaxError("search: a parenthesis is never closed")
            self.take()
            return node
        if kind == ")":
            raise SearchSyntaxError("search: a closing parenthesis has no opening one")
        if kind == "op":
            raise SearchSyntaxError(f"search: {value} needs a term before it and after it "
                                    "(NOT: `apples NOT pears`)")
        self.terms += 1
        if self.terms > MAX_TERMS:
            raise LimitExceeded(f"search: at most {MAX_TERMS} terms")
        prefix = False
        if kind == "word" and value.endswith("*"):
            value, prefix = value.rstrip("*"), True
        elif kind == "phrase" and (self.peek() or ("", ""))[1] == "*":
            self.take()  # never lexed: '*' alone is a word
            prefix = True
        if kind == "word" and "*" in value:
            raise SearchSyntaxError(f"search: {value + '*' * prefix!r}: * ends a prefix "
                                    "(appl*), nowhere else")
        return Term(_pieces(value, repr(value) if kind == "word" else "a phrase"), prefix)


def parse_search(text: str) -> Search:
    """The search `text` as a Search; SearchSyntaxError naming what it cannot read."""
    if len(text) > MAX_SEARCH_CHARS:
        raise LimitExceeded(f"search: at most {MAX_SEARCH_CHARS} characters, got {len(text)}")
    if "\x00" in text:
        raise SearchSyntaxError("search: contains U+0000")
    tokens = _lex(text)
    if not tokens:
        raise SearchSyntaxError("search: empty (give a word, a \"phrase\" or a prefix*)")
    parser = _Parser(tokens)
    tree = parser.either()
    if parser.peek() is not None:
        raise SearchSyntaxError("search: a closing parenthesis has no opening one")
    return Search(text, tree)


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
    folded = _folded(word)
    for term in terms:
        for position, wanted in enumerate(term.words):
            last = position == len(term.words) - 1
            if folded == wanted or (last and term.prefix and folded.startswith(wanted)):
                return term
    return None


def _hits(word: str, terms: Iterable[Term]) -> bool:
    return _hit(word, terms) is not None


def terms_found(text: str, search: Search) -> int:
    """How many of the search's terms have a word in `text`."""
    terms = search.terms()
    return len({id(term) for w in _PIECES.findall(text) if (term := _hit(w, terms))})


def snippet(text: str, search: Search) -> str | None:
    """`text` around its first hit, each word the search names between « and », up to
    SNIPPET_WORDS words, … where cut; None if no word of it is there. Plain text: a page
    escapes it, then turns the marks into <mark>."""
    terms = search.terms()
    words = list(_PIECES.finditer(text))
    hits = [i for i, w in enumerate(words) if _hits(w.group(), terms)]
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
    for row in connection.execute(select(texts.c.record_seq, *columns)
                                  .where(texts.c.record_seq.in_(list(seqs)))):
        values = [value for value in row[1:] if value]
        if values:
            best = max(values, key=lambda value: terms_found(value, search))  # first on ties
            found[row[0]] = snippet(best, search)
    return found
