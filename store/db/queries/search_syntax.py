"""The full-text search syntax (docs/graphql.md#searching-text): a search string parsed into
its tree, and the tree written as each engine's own query (FTS5's MATCH string, PostgreSQL's
tsquery).

Words (`apples`), phrases in double quotes (`"gained 3"`), prefixes (`appl*`), `AND` (or just
a space), `OR`, `NOT` between two terms (`apples NOT pears`), parentheses. A word is matched as
the engine cuts words: letters and digits; `residual_code` is the phrase "residual code".
Nothing else of the engine's syntax (column filters, NEAR, ^, -) passes: a word only ever
reaches it as letters and digits, quoted, so search text is never read as SQL or FTS syntax.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from store.db.queries.errors import LimitExceeded, QueryError

MAX_SEARCH_CHARS = 500
MAX_TERMS = 32
_KEYWORDS = ("AND", "OR", "NOT")
PIECES = re.compile(r"[^\W_]+")  # a word as the engines cut words: letters and digits
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


def fold(text: str) -> str:
    """Case and diacritics folded, as the engines fold them (FTS5's remove_diacritics)."""
    if text.isascii():  # no diacritics, and ASCII's casefold is its lower case: the snippets'
        return text.lower()  # words are mostly ASCII, and each is folded
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _pieces(text: str, what: str) -> tuple[str, ...]:
    pieces = tuple(fold(p) for p in PIECES.findall(text))
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
