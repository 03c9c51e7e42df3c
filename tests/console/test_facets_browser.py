"""Facets and sorting in headless Debian Chromium: a column heading clicked sorts the rows by
it and the next page continues that order; "show all" pages through every value of a facet;
"(none)" selects the records without a value. Expected values from spec_values."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_runs import WAIT, serving, skip_without_chromium
from spec_values import CODES_IN_APPEND_ORDER

from store.api.app import create_app
from store.console import kinds, list_facets
from store.db.audit_store import AuditStore

webdriver = skip_without_chromium()
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow
CODES_SORTED = sorted(CODES_IN_APPEND_ORDER)


@pytest.fixture(autouse=True)
def blank_page(browser: Any) -> None:
    """Each test starts on a blank page (a page left open keeps its /events stream)."""
    browser.get("about:blank")


@pytest.fixture
def origin(console_db: AuditStore) -> Iterator[str]:
    with serving(create_app(console_db, close_db_on_shutdown=False)) as base:
        yield base


def rows_codes(browser: Any) -> list[str]:
    # The code is the fifth column (residual, kind, axis, organ, code, seen, batch).
    return [cell.text for cell in browser.find_elements(By.CSS_SELECTOR,
                                                        "tbody td:nth-child(5)")]


def opened(browser: Any) -> None:
    """The facets' <details> opened: a wide screen's style sheet shows them anyway, but
    selenium takes a closed <details>' content as hidden (tests/console/
    test_console_reach_browser.py checks what the browser itself shows)."""
    browser.execute_script(
        "for (const d of document.querySelectorAll('details.facets-box')) d.open = true;")


def facet_texts(browser: Any, name: str) -> list[str]:
    opened(browser)
    return [element.text for element in browser.find_elements(
        By.CSS_SELECTOR, f'[data-facet="{name}"] li > a, [data-facet="{name}"] li > span')
        if "n" not in (element.get_attribute("class") or "").split()]


def click(browser: Any, selector: str) -> None:
    before = browser.current_url
    opened(browser)
    browser.find_element(By.CSS_SELECTOR, selector).click()
    WebDriverWait(browser, WAIT).until(lambda b: b.current_url != before)


def test_a_clicked_heading_sorts_and_the_next_page_continues(browser: Any,
                                                              origin: str) -> None:
    browser.get(f"{origin}/residuals?first=5")
    click(browser, 'th a[title^="sort by code"]')
    assert browser.current_url.endswith("/residuals?order=CODE_ASC")
    assert rows_codes(browser) == CODES_SORTED
    browser.get(f"{origin}/residuals?order=CODE_ASC&first=5")
    assert rows_codes(browser) == CODES_SORTED[:5]
    click(browser, 'a[rel="next"]')
    assert rows_codes(browser) == CODES_SORTED[5:10]
    click(browser, 'a[rel="next"]')
    assert rows_codes(browser) == CODES_SORTED[10:]
    heading = browser.find_element(By.CSS_SELECTOR, 'th[aria-sort="ascending"]')
    assert heading.text.startswith("code")
    click(browser, 'th[aria-sort="ascending"] a')
    assert rows_codes(browser) == CODES_SORTED[::-1]
    assert browser.find_element(By.CSS_SELECTOR, 'th[aria-sort="descending"]').text.startswith(
        "code")


def test_show_all_pages_through_a_facet(browser: Any, origin: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kinds, "FACET_ROWS", 5)
    monkeypatch.setattr(list_facets, "FACET_PAGE", 5)
    browser.get(f"{origin}/residuals")
    assert facet_texts(browser, "code") == CODES_SORTED[:5]
    opened(browser)
    link = browser.find_element(By.CSS_SELECTOR, '[data-show-all="code"]')
    assert link.text == "show all 12"
    click(browser, '[data-show-all="code"]')
    seen = [facet_texts(browser, "code")]
    while browser.find_elements(By.CSS_SELECTOR, '[data-more-values="code"]'):
        click(browser, '[data-more-values="code"]')
        seen.append(facet_texts(browser, "code"))
    assert seen == [CODES_SORTED[:5], CODES_SORTED[5:10], CODES_SORTED[10:]]
    # A value of the full facet filters the list, as on the list page.
    opened(browser)
    browser.find_element(By.LINK_TEXT, "unit_object_conflict").click()
    WebDriverWait(browser, WAIT).until(lambda b: "code=unit_object_conflict" in b.current_url)
    assert rows_codes(browser) == ["unit_object_conflict"]


def test_none_is_a_link_selecting_the_records_without_a_value(browser: Any,
                                                               origin: str) -> None:
    browser.get(f"{origin}/residuals")
    click(browser, '[data-facet="familyId"] a[data-null="true"]')
    assert browser.current_url.endswith("/residuals?isNull=familyId")
    # temporal_tariff belongs to no family (spec_values.FACETS_ALL).
    assert rows_codes(browser) == ["unbound_base_quantity"]
    chip = browser.find_element(By.CSS_SELECTOR, ".filters a.chip")
    assert chip.text.startswith("familyId = (none)")
    opened(browser)
    selected = browser.find_element(By.CSS_SELECTOR, '[data-facet="familyId"] a[data-null]')
    assert selected.get_attribute("aria-current") == "true"
    click(browser, ".filters a.chip")
    assert len(rows_codes(browser)) == 12
