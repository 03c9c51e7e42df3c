"""Reading the console's HTML in tests: links, visible text, elements by class."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import Any


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.scripts: list[dict[str, Any]] = []
        self.styles: list[str] = []
        self.inline_scripts = 0
        self.style_attributes = 0
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in ("a", "link") and found.get("href"):
            self.hrefs.append(str(found["href"]))
        if tag == "script":
            self.scripts.append(found)
            self._in_script = "src" not in found
        if "style" in found:
            self.style_attributes += 1
        if any(name.startswith("on") for name in found):
            self.inline_scripts += 1

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline_scripts += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False


def parsed(page: str) -> _Links:
    parser = _Links()
    parser.feed(page)
    return parser


def links(page: str) -> list[str]:
    return parsed(page).hrefs


def text(page: str) -> str:
    """The page's text, tags removed and entities decoded, whitespace collapsed."""
    body = re.sub(r"<[^>]+>", " ", page)
    return re.sub(r"\s+", " ", html.unescape(body)).strip()


def problem(page: str) -> str:
    found = re.search(r'class="problem">(.*?)</p>', page, flags=re.S)
    assert found is not None, page[:500]
    return html.unescape(found.group(1))


class _Tables(HTMLParser):
    """Every <table>'s body rows, each cell as (its text, its first link or None)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[tuple[str, str | None]]]] = []
        self._body = False
        self._cell: list[str] | None = None
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tbody":
            self._body = True
        elif tag == "tr" and self._body:
            self.tables[-1].append([])
        elif tag == "td" and self._body:
            self._cell, self._href = [], None
        elif tag == "a" and self._cell is not None and self._href is None:
            self._href = dict(attrs).get("href")

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._body = False
        elif tag == "td" and self._cell is not None:
            self.tables[-1][-1].append((re.sub(r"\s+", " ", "".join(self._cell)).strip(),
                                        self._href))
            self._cell = None


def tables(page: str) -> list[list[list[tuple[str, str | None]]]]:
    """The page's tables, in order: body rows of (cell text, cell link)."""
    parser = _Tables()
    parser.feed(page)
    return parser.tables


def fields(page: str) -> list[tuple[str, str, str | None]]:
    """A record page's stored fields: (name, text, link) of each <dt>/<dd> of the first
    `<dl class="fields">`."""
    block = page.split('<dl class="fields">', 1)[1].split("</dl>", 1)[0]
    found = []
    for name, value in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", block, flags=re.S):
        href = re.search(r'<a href="([^"]*)"', value)
        found.append((html.unescape(name), text(value),
                      None if href is None else html.unescape(href.group(1))))
    return found
