"""Every console answer is bounded before it is built (issue 32, item 7): a parameter's values,
the query string and a page's bytes are capped (a 400 or 503 page naming the cap), the page
cache holds a bounded number of bytes; an error page never echoes a control character raw,
and `/` refuses a parameter it does not take, as the lists do."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from pages_html import problem
from starlette.testclient import TestClient

from store.console import request_bounds
from store.console.pages import RenderedPages

ORGANS = [f"organ_{n:02d}" for n in range(32)]  # 32 values: the cap, each 8 characters


def test_1500_repeats_of_one_filter_value_are_refused_naming_the_parameter_and_cap(
        console: TestClient) -> None:
    # An 18 KB GET that rendered ~35 MB of HTML before: refused unread, over the cap of 32.
    page = console.get("/residuals?" + "&".join(["organ=unary_delta_transition"] * 1500))
    assert page.status_code == 400
    assert "query string is 43,499 bytes, over the console's cap of 2,048 bytes" in \
        problem(page.text)
    page = console.get("/residuals?" + urlencode([("kind", "MISSING_ROLE")] * 33))
    assert page.status_code == 400
    assert problem(page.text) == ("kind: given 33 times, over the cap of 32 values a "
                                  "parameter takes")


def test_the_cap_holds_on_exports_and_record_pages_too(console: TestClient) -> None:
    export = console.get("/export/residuals.csv?" + urlencode([("kind", "MISSING_ROLE")] * 40))
    assert export.status_code == 400
    assert problem(export.text).startswith("kind: given 40 times, over the cap of 32")
    record = console.get("/batches/1?" + "x=" + "a" * 3000)
    assert record.status_code == 400
    assert "over the console's cap of 2,048 bytes" in problem(record.text)


def test_a_list_at_the_caps_is_served_and_stays_small(console: TestClient) -> None:
    query = urlencode([(name, value) for name in ("organ", "code", "familyId")
                       for value in ORGANS])
    page = console.get(f"/residuals?{query}")
    assert page.status_code == 200
    assert "0 residuals" in page.text
    # 96 remove links and the facets' add links each carry the 96 values (the page was
    # ~150 KB): the square the links grow by is bounded by the caps.
    assert len(page.content) < 400_000


def test_a_page_over_the_byte_cap_is_a_503_not_sent(console: TestClient,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request_bounds, "MAX_PAGE_BYTES", 10_000)
    page = console.get("/residuals?first=500&order=NEWEST_FIRST")
    assert page.status_code == 503
    assert "over the console's cap of 10,000 bytes; ask for fewer rows (first=N)" in \
        problem(page.text)


def test_a_control_character_is_never_echoed_raw_into_an_error_page(
        console: TestClient) -> None:
    for url, named in (("/residuals?kind=%00", "\\x00"), ("/residuals?%1b%5b31m=1", "\\x1b"),
                       ("/turns?groundingSource=A%7fB", "\\x7f")):
        page = console.get(url)
        assert page.status_code == 400, url
        assert named in page.text, url
        assert not any((ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f
                       for c in page.text), url


def test_the_overview_refuses_a_parameter_it_does_not_take(console: TestClient) -> None:
    page = console.get("/?kind=MISSING_ROLE")
    assert page.status_code == 400
    assert problem(page.text) == "kind: not a parameter of this page; it takes asOf"
    assert console.get("/?asOf=83").status_code == 200


def test_the_page_cache_is_bounded_in_bytes_and_entries() -> None:
    cache = RenderedPages(capacity=10, max_bytes=8_000)
    for n in range(10):
        cache.put(("etag", f"/page/{n}"), b"x" * 900)  # 9,000 bytes put, 8,000 kept at most
    assert cache.size == 8 * 900
    assert cache.get(("etag", "/page/0")) is None and cache.get(("etag", "/page/1")) is None
    assert cache.get(("etag", "/page/9")) == b"x" * 900
    cache.put(("etag", "/big"), b"x" * 1_001)  # over an eighth of the bytes: never kept
    assert cache.get(("etag", "/big")) is None and cache.size == 8 * 900
    cache.put(("etag", "/page/9"), b"y" * 100)  # the same key again: counted once
    assert cache.size == 7 * 900 + 100
    small = RenderedPages(capacity=2, max_bytes=8_000)
    for n in range(3):
        small.put(("etag", f"/{n}"), b"z")
    assert small.size == 2 and small.get(("etag", "/0")) is None
