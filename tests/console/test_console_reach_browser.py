"""Issue 33's console in headless Debian Chromium, offline: a list's JSON is what the page
shows; a histogram bar's link lists that bucket; every page type fits a 390 px phone (no
sideways scroll, facets folded above the list); axe-core finds no serious or critical
violation on any page type.

axe-core comes from the npm registry: .ci/run installs it under tests/console/axe/ from its
lock file (`npm ci`); without it the axe test skips, saying so. Nothing is fetched at test
time."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_runs import WAIT, serving, skip_without_chromium
from cli_runs import cli
from spec_values import DELTA_QUANTITY_ID, HEADS

from store.api.app import create_app
from store.db.audit_store import AuditStore
from store.model.checkpoint import SignerKey

skip_without_chromium()
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow
AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = 390


@pytest.fixture(scope="module")
def origin(console_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The console over the example store with its newest head signed: record pages offer
    the signed proof and show its `prove --bundle` command line (the longest line a page
    has)."""
    key = tmp_path_factory.mktemp("reach") / "log.key"
    key.write_text(str(SignerKey("audit.example/console", b"\x03" * 32)) + "\n",
                   encoding="utf-8")
    signed = cli("checkpoint", "--db", console_url, "--key", key, "--origin",
                 "audit.example/console")
    assert signed.exit_code == 0, signed.output
    with AuditStore.open(console_url, read_only=True) as db, \
            serving(create_app(db, close_db_on_shutdown=False)) as base:
        yield base


@pytest.fixture(autouse=True)
def blank_page(browser: Any) -> Iterator[None]:
    browser.get("about:blank")
    yield
    browser.get("about:blank")  # its /events stream closed before the server stops
    browser.set_window_size(1400, 900)


def _fetch_json(browser: Any, url: str) -> Any:
    """`url`'s JSON, fetched by the page (same origin)."""
    return browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0]).then(r => r.json()).then(done, e => done(String(e)));", url)


def _page_types(browser: Any, origin: str) -> list[str]:
    """One page of each type: the overview, every list, a group page, every record kind, the
    log with a consistency proof, the keys, and an error page."""
    _loaded(browser, f"{origin}/keys")  # fetch() needs the console's origin
    keys = {}
    for name, key in (("assessments", "assessment"), ("surfaces", "surface"),
                      ("turns", "turn"), ("batches", "batch")):
        rows = _fetch_json(browser, f"{origin}/{name}.json?first=1&order=NEWEST_FIRST")["rows"]
        keys[name] = rows[0][key]
    return ["/", "/residuals", "/assessments", "/surfaces", "/turns", "/batches",
            "/residuals/groups?by=kind,organ", "/turns/groups?by=clearance",
            f"/residuals/{DELTA_QUANTITY_ID}", *(f"/{name}/{key}" for name, key in keys.items()),
            f"/log?from={HEADS[1]}", "/keys", "/residuals?kind=NOT_A_KIND"]


def _facets_visible(browser: Any) -> bool:
    # The browser's own answer (selenium's is_displayed takes any closed <details>' content
    # as hidden, which a wide screen's style sheet shows).
    return bool(browser.execute_script(
        "const s = document.querySelector('.facets section');"
        "return s.checkVisibility() && s.getBoundingClientRect().height > 0;"))


def _loaded(browser: Any, url: str) -> None:
    browser.get(url)
    WebDriverWait(browser, WAIT).until(
        lambda b: b.execute_script("return document.readyState") == "complete")


def test_a_list_s_json_is_what_the_page_shows(browser: Any, origin: str) -> None:
    for path in ("/surfaces?order=MOST_SEEN", "/turns?groundingSource=TEACHING"):
        _loaded(browser, origin + path)
        cells = browser.execute_script(
            "return [...document.querySelectorAll('section.rows tbody tr')].map(tr => "
            "[...tr.querySelectorAll('td')].map(td => { const a = td.querySelector('a'); "
            "return [td.innerText.trim(), a ? a.getAttribute('href') : null]; }));")
        total = browser.find_element(By.ID, "rows-h").text
        link = browser.find_element(By.CSS_SELECTOR, ".views a[href*='.json']")
        data = _fetch_json(browser, link.get_attribute("href"))
        assert total == f"{data['total']:,} {data['title'].lower()}"
        assert len(cells) == len(data["rows"]) > 0
        for row, shown in zip(data["rows"], cells, strict=True):
            for column, (text, href) in zip(data["columns"], shown, strict=True):
                value = row[column]
                full = "—" if value is None else f"{value:,}" if isinstance(value, int) \
                    else str(value)
                assert text == full or (text.endswith("…") and full.startswith(text[:-1])), \
                    (column, text, value)
                assert href == row.get(f"{column}_href"), (column, href)


def test_a_histogram_bar_lists_its_bucket(browser: Any, origin: str) -> None:
    for path, bound in (("/residuals?kind=MISSING_ROLE", "ingestedFrom"),
                        ("/turns", "timeFrom")):
        _loaded(browser, origin + path)
        bar = browser.find_element(By.CSS_SELECTOR, "svg.histogram a")
        said = bar.find_element(By.TAG_NAME, "title").get_attribute("textContent")
        found = re.fullmatch(r"(.+): ([0-9,]+) — list them", said)
        assert found is not None, said
        count = int(found.group(2).replace(",", ""))
        bar.click()
        WebDriverWait(browser, WAIT).until(lambda b, bound=bound: bound in b.current_url)
        heading = browser.find_element(By.ID, "rows-h").text
        assert heading.startswith(f"{count:,} "), (heading, said)
        assert len(browser.find_elements(By.CSS_SELECTOR, "section.rows tbody tr")) == count
        chips = [c.text for c in browser.find_elements(By.CSS_SELECTOR, ".filters .chip")]
        assert any(chip.startswith(f"{bound} = ") for chip in chips), chips


def test_every_page_type_fits_a_phone(browser: Any, origin: str) -> None:
    pages = _page_types(browser, origin)
    browser.set_window_size(PHONE, 844)
    width = browser.execute_script("return window.innerWidth")
    assert width <= PHONE
    for path in pages:
        _loaded(browser, origin + path)
        if path == f"/residuals/{DELTA_QUANTITY_ID}":  # its signed proof's command line
            assert "core-audit prove --residual" in browser.find_element(By.TAG_NAME,
                                                                          "main").text
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{path} is {overflow} px wider than a {width} px screen"
        for box in browser.find_elements(By.CSS_SELECTOR, "details.facets-box"):
            # Folded above the list: the list's heading is on the first screen.
            assert box.get_attribute("open") is None, path
            top = browser.find_element(By.ID, "rows-h").rect["y"]
            assert top < 844, (path, top)
    _loaded(browser, origin + "/residuals")
    assert not _facets_visible(browser)
    browser.find_element(By.CSS_SELECTOR, "details.facets-box > summary").click()
    assert _facets_visible(browser)


def test_facets_show_on_a_wide_screen_and_their_counts_never_wrap(browser: Any,
                                                                  origin: str) -> None:
    _loaded(browser, origin + "/residuals")
    assert _facets_visible(browser)
    heights = browser.execute_script(
        "return [...document.querySelectorAll('.facets .n')].map(n => "
        "[n.getClientRects().length, n.innerText]);")
    assert heights and all(lines == 1 for lines, _ in heights), heights


def test_axe_finds_no_serious_or_critical_violation_on_any_page_type(
        browser: Any, origin: str) -> None:
    if not AXE.exists():
        pytest.skip(f"axe-core is not installed at {AXE} (.ci/run: npm ci --prefix "
                    "tests/console/axe)")
    source = AXE.read_text(encoding="utf-8")
    found = {}
    for width in (1400, PHONE):
        browser.set_window_size(width, 900)
        for path in _page_types(browser, origin):
            _loaded(browser, origin + path)
            browser.execute_script(source)
            violations = browser.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "axe.run(document, {resultTypes: ['violations']}).then(r => done("
                "r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')"
                ".map(v => v.id + ' (' + v.impact + '): ' + v.nodes.map(n => n.target.join("
                "' ')).slice(0, 3).join(', '))), e => done(['axe failed: ' + e]));")
            if violations:
                found[f"{path} at {width} px"] = violations
    assert found == {}
