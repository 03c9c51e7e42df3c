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
