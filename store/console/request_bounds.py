"""What one console request may ask and one answer may weigh, checked before a page is built:
the query string's length, the values one parameter may repeat, the parameters a page takes,
a rendered page's bytes; and what an error page may echo (no control character raw).

Every add/remove link of a list carries the page's query string, so the links of a page grow
with the square of its filter values: the caps on both keep that square small (at most
MAX_VALUES values of one parameter in a query string of at most MAX_QUERY_BYTES), and
MAX_PAGE_BYTES refuses whatever still renders past it.
"""

from __future__ import annotations

import re
from collections import Counter

from starlette.requests import Request

from store.console.parameters import ParameterError
from store.errors import QueryError

MAX_QUERY_BYTES = 2048  # a query string's bytes: ~40 organ names, or every enum value twice
MAX_VALUES = 32  # the values one parameter may repeat (any-of): more than any facet offers
MAX_PAGE_BYTES = 4 * 1024 * 1024  # a rendered page (500 rows of long problem texts fit)
MAX_CACHE_BYTES = 64 * 1024 * 1024  # the rendered pages a server keeps, all together
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class QueryTooLong(QueryError):
    """A query string over MAX_QUERY_BYTES (400): no parameter of it is read."""


class PageTooLarge(QueryError):
    """A rendered page over MAX_PAGE_BYTES (503): it is not sent, nor kept."""


def check_request(request: Request, takes: tuple[str, ...] | None = None) -> None:
    """QueryTooLong, or ParameterError naming a parameter given more than MAX_VALUES times or
    (`takes` given) one the page does not take."""
    size = len(request.scope.get("query_string", b""))
    if size > MAX_QUERY_BYTES:
        raise QueryTooLong(f"the query string is {size:,} bytes, over the console's cap of "
                           f"{MAX_QUERY_BYTES:,} bytes; narrow the filter")
    for name, count in Counter(name for name, _ in request.query_params.multi_items()).items():
        if count > MAX_VALUES:
            raise ParameterError(printable(name[:80]), f"given {count} times, over the cap of "
                                 f"{MAX_VALUES} values a parameter takes")
        if takes is not None and name not in takes:
            raise ParameterError(printable(name[:80]), "not a parameter of this page; it takes "
                                 f"{', '.join(takes)}")


def check_page(body: bytes) -> bytes:
    if len(body) > MAX_PAGE_BYTES:
        raise PageTooLarge(f"this page would be {len(body):,} bytes, over the console's cap "
                           f"of {MAX_PAGE_BYTES:,} bytes; ask for fewer rows (first=N)")
    return body


def printable(text: str) -> str:
    """`text` with each control character (NUL, ESC, DEL, ...) spelled as \\xNN: an error page
    names what it was given without echoing it raw."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)
