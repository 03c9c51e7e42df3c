"""The search box of the list pages in headless Chromium (issue 33): typed into and sent as an
auditor does, it lists the records whose text has the words, each row's snippet showing them
as <mark> elements (the record's own text escaped, never markup); the filters in force are
kept; a malformed search says what is wrong. Texts are the ADR-0225 examples'."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_runs import WAIT, serving, skip_without_chromium

from store.api.app import create_app
from store.db.audit_store import AuditStore

webdriver = skip_without_chromium()
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def blank_page(browser: Any) -> Iterator[None]:
    """Each test starts on a blank page at 1400 px (a page left open keeps its /events
    stream; the phone test narrows the window) in the module's browser."""
    browser.get("about:blank")
    yield
    browser.set_window_size(1400, 900)


def _search(browser: Any, words: str) -> None:
    box = browser.find_element(By.CSS_SELECTOR, "form[role=search] input[type=search]")
    box.clear()
    box.send_keys(words, Keys.ENTER)
    WebDriverWait(browser, WAIT).until(lambda b: "search=" in b.current_url)
    WebDriverWait(browser, WAIT).until(
        lambda b: b.execute_script("return document.readyState") == "complete")


def _found(browser: Any) -> list[str]:
    return [cell.get_attribute("innerHTML")
            for cell in browser.find_elements(By.CSS_SELECTOR, "td.snippet")]


def test_the_search_box_finds_and_marks_the_words(browser: Any, console_db: AuditStore) -> None:
    app = create_app(console_db, close_db_on_shutdown=False)
    with serving(app) as origin:
        browser.get(f"{origin}/residuals?organ=fraction_decrease")
        _search(browser, "price")
        assert browser.current_url.startswith(f"{origin}/residuals?")
        assert "organ=fraction_decrease" in browser.current_url  # the filter kept
        heading = browser.find_element(By.ID, "rows-h").text
        assert heading == "2 residuals"
        assert _found(browser) == ["The <mark>price</mark> fell to a third."] * 2
        # RANK is offered while searching, and keeps the search.
        browser.find_element(By.LINK_TEXT, "rank").click()
        WebDriverWait(browser, WAIT).until(lambda b: "order=RANK" in b.current_url)
        assert "order=RANK" in browser.current_url and "search=price" in browser.current_url
        assert len(_found(browser)) == 2

        browser.get(f"{origin}/surfaces")
        _search(browser, '"requires recall"')
        found = _found(browser)
        assert found and all("<mark>requires</mark> <mark>recall</mark>" in f for f in found)

        browser.get(f"{origin}/turns")
        _search(browser, "memory")
        assert _found(browser) and all("<mark>" in f.lower() for f in _found(browser))

        browser.get(f"{origin}/residuals")
        _search(browser, "price AND")
        body = browser.find_element(By.TAG_NAME, "body").text
        assert "search: a term is missing at the end" in body


def test_a_snippet_is_escaped_before_it_is_marked(browser: Any, console_db: AuditStore) -> None:
    """A record's own text that looks like markup stays text: the tariff's explanation
    quotes a label in double quotes; the snippet shows the quotes, not markup."""
    app = create_app(console_db, close_db_on_shutdown=False)
    with serving(app) as origin:
        browser.get(f"{origin}/residuals?search=classification")
        [cell] = browser.find_elements(By.CSS_SELECTOR, "td.snippet")
        assert cell.text == ('The contract label "unbound_base_quantity" has no residual '
                             'classification.')
        assert [m.text for m in cell.find_elements(By.TAG_NAME, "mark")] == ["classification"]
        assert '&quot;' in cell.get_attribute("innerHTML") or '"' in cell.text


AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"


def test_a_searched_list_has_no_serious_axe_violation_and_fits_a_phone(
        browser: Any, console_db: AuditStore) -> None:
    if not AXE.exists():
        pytest.skip(f"axe-core is not installed at {AXE} (.ci/run: npm ci --prefix "
                    "tests/console/axe)")
    source = AXE.read_text(encoding="utf-8")
    app = create_app(console_db, close_db_on_shutdown=False)
    found = {}
    with serving(app) as origin:
        for width in (1400, 390):
            browser.set_window_size(width, 900)
            for path in ("/residuals?search=price", "/surfaces?search=recall&order=RANK",
                         "/turns?search=memory"):
                browser.get(origin + path)
                WebDriverWait(browser, WAIT).until(
                    lambda b: b.execute_script("return document.readyState") == "complete")
                wide = browser.execute_script(
                    "return document.documentElement.scrollWidth > window.innerWidth")
                browser.execute_script(source)
                violations = browser.execute_async_script(
                    "const done = arguments[arguments.length - 1];"
                    "axe.run(document, {resultTypes: ['violations']}).then(r => done("
                    "r.violations.filter(v => ['serious', 'critical'].includes(v.impact))"
                    ".map(v => v.id)), e => done(['axe failed: ' + e]));")
                if violations or wide:
                    found[f"{path} at {width} px"] = (violations, "wider than the screen"
                                                      if wide else "")
    assert found == {}
