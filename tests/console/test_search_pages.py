"""The list pages' search, without a browser: the page and its JSON carry each row's snippet,
the CSV download exports what the search found, a malformed search is a 400 naming it, a list
without text refuses it. Texts are the ADR-0225 examples' (tests/spec_values.py)."""

from __future__ import annotations

from starlette.testclient import TestClient


def test_a_searched_page_marks_the_words_in_html_and_in_json(console: TestClient) -> None:
    page = console.get("/residuals?search=price")
    assert page.status_code == 200
    assert page.text.count('<td class="snippet">The <mark>price</mark> fell to a third.</td>') == 2
    as_json = console.get("/residuals.json?search=price").json()
    assert "The «price» fell to a third." in str(as_json)


def test_the_download_exports_what_the_search_found(console: TestClient) -> None:
    found = console.get("/export/residuals.csv?search=%22price+fell%22")
    assert found.status_code == 200
    lines = found.text.splitlines()
    assert len(lines) == 3  # the header, the base quantity's and the state entity's residuals
    assert "The base quantity role is unbound." in lines[1]
    assert "The state entity role is unbound." in lines[2]


def test_a_search_a_page_cannot_take_is_a_400_naming_it(console: TestClient) -> None:
    malformed = console.get("/residuals?search=price+AND")
    assert malformed.status_code == 400
    assert "search: a term is missing at the end" in malformed.text
    untexted = console.get("/assessments?search=price")
    assert untexted.status_code == 400
    assert "search: assessments carry no text to search" in untexted.text
