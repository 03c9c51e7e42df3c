"""The console in headless Debian Chromium, offline: every link of the overview and of one page
of each list resolves; residual and turn pages say what holds and that, with no signed
checkpoint kept, only the server's word backs it; a proof altered in transit says what failed;
no console error, no outside request; screenshots written to a temporary folder named in the
output (never committed)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from browser_runs import (
    WAIT,
    RewritingProxy,
    requested_urls,
    serving,
    skip_without_chromium,
)
from spec_values import DELTA_QUANTITY_ID, HEADS
from starlette.applications import Starlette
from starlette.routing import Mount
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.api.app import create_app
from store.db.audit_store import AuditStore

webdriver = skip_without_chromium()
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow
LISTS = ("residuals", "assessments", "surfaces", "turns", "batches")


@pytest.fixture(autouse=True)
def blank_page(browser: Any) -> None:
    """Each test starts on a blank page with an empty console log: the page an earlier test
    left open logs its /events stream cut when that test's server stopped."""
    browser.get("about:blank")
    browser.get_log("browser")


@pytest.fixture(scope="module")
def shots_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="core-audit-console-shots-"))


@pytest.fixture
def shots(shots_folder: Path, record_property: Any) -> Path:
    """Where screenshots go; the run's summary names it (tests/conftest.py)."""
    record_property("screenshots", str(shots_folder))
    return shots_folder


def _alter_path(body: bytes) -> bytes:
    """As a hostile proxy would: one hash of every inclusion path on a page is replaced."""
    return re.sub(rb'(class="proof-path" start="0"><li><code class="hash">)([0-9a-f])',
                  lambda m: m.group(1) + (b"0" if m.group(2) != b"0" else b"1"), body)


def _severe(browser: Any) -> list[Any]:
    return [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def _result(browser: Any) -> str:
    WebDriverWait(browser, WAIT).until(lambda b: "pending" not in b.find_element(
        By.CSS_SELECTOR, ".proof-result").get_attribute("class"))
    return str(browser.find_element(By.CSS_SELECTOR, ".proof-result").text)


def _page_links(browser: Any, base: str) -> list[str]:
    hrefs = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "a[href]")]
    return sorted({h.split("#")[0] for h in hrefs if h and h.startswith(base)})


def _status(browser: Any, url: str) -> int:
    """The HTTP status of `url`, fetched by the page (same origin, no navigation)."""
    return int(browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {headers: {accept: 'text/html'}}).then(r => done(r.status), "
        "() => done(0));", url))


@pytest.mark.parametrize("root_path", ["", "/audit"])
def test_the_console_in_chromium(browser: Any, console_db: AuditStore, console_url: str,
                                 shots: Path, root_path: str) -> None:
    app: Any = create_app(console_db, close_db_on_shutdown=False)
    if root_path:
        app = Starlette(routes=[Mount(root_path, app=app)])
    with serving(app) as origin:
        base = origin + root_path
        browser.get_log("performance")
        browser.get_log("browser")
        browser.get(f"{base}/")
        assert "Overview" in browser.title
        if not root_path:
            browser.save_screenshot(str(shots / "overview.png"))
        checked = set()
        pages = [f"{base}/", *(f"{base}/{name}" for name in LISTS)]
        for page in pages:
            browser.get(page)
            for link in _page_links(browser, origin):
                if link in checked or "/export/" in link:
                    continue
                checked.add(link)
                assert _status(browser, link) == 200, f"{link} (linked from {page})"
        assert len(checked) > 60
        browser.get(f"{base}/residuals")
        if not root_path:
            browser.save_screenshot(str(shots / "residuals.png"))

        browser.get(f"{base}/residuals/{DELTA_QUANTITY_ID}")
        said = _result(browser)
        # This store keeps no signed checkpoint: the page says what holds and what does not.
        assert re.fullmatch(rf"consistent, not authenticated: leaf \d+ of tree size {HEADS[4]}, "
                            r"root [0-9a-f]{64} \(the entry and every field marked as covered\); "
                            r"only the server's word backs this tree head", said), said
        if not root_path:
            browser.save_screenshot(str(shots / "residual.png"))
        browser.get(f"{base}/turns")
        turn = next(link for link in _page_links(browser, origin)
                    if re.search(r"/turns/[0-9a-f]{64}$", link))
        browser.get(turn)
        assert _result(browser).startswith("consistent, not authenticated: leaf ")
        browser.get(f"{base}/log?from={HEADS[1]}")
        box = browser.find_element(By.CSS_SELECTOR, "[data-proof]")
        new, old = (box.get_attribute(f"data-{name}-root") for name in ("second", "first"))
        assert _result(browser) == (
            f"consistent, not authenticated: the tree of size {HEADS[4]}, root {new} (the "
            f"server's newest head) extends the tree of size {HEADS[1]}, root {old}, the "
            "server's root (give the root you kept to check yours)")
        urls = requested_urls(browser)
        problems = _severe(browser)
    assert [u for u in urls if not u.startswith((f"{origin}/", "data:"))] == []
    assert f"{base}/static/proof-check.js" in urls and f"{base}/static/tlog-verify.js" in urls
    assert problems == []


def test_a_proof_altered_in_transit_says_it_failed(browser: Any, console_db: AuditStore,
                                                   shots: Path) -> None:
    app = RewritingProxy(create_app(console_db, close_db_on_shutdown=False), _alter_path)
    with serving(app) as origin:
        browser.get(f"{origin}/residuals/{DELTA_QUANTITY_ID}")
        said = _result(browser)
        browser.save_screenshot(str(shots / "residual-tampered.png"))
        assert re.fullmatch(r"failed: the path leads from leaf \d+ to root [0-9a-f]{64}, not to "
                            r"the tree head's root [0-9a-f]{64}", said), said
        assert "failed" in browser.find_element(
            By.CSS_SELECTOR, ".proof-result").get_attribute("class")
        assert _severe(browser) == []


def test_a_phone_width_page_reads_without_sideways_scrolling(browser: Any,
                                                             console_db: AuditStore) -> None:
    app = create_app(console_db, close_db_on_shutdown=False)
    with serving(app) as origin:
        browser.set_window_size(390, 844)
        try:
            for path in ("/", "/residuals", f"/residuals/{DELTA_QUANTITY_ID}"):
                browser.get(origin + path)
                overflow = browser.execute_script(
                    "return document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 0, path
        finally:
            browser.set_window_size(1400, 900)


def test_the_pages_are_keyboard_navigable(browser: Any, console_db: AuditStore) -> None:
    """Tab reaches the skip link first, then the navigation, every link in document order."""
    from selenium.webdriver.common.keys import Keys

    app = create_app(console_db, close_db_on_shutdown=False)
    with serving(app) as origin:
        browser.get(f"{origin}/residuals")
        body = browser.find_element(By.TAG_NAME, "body")
        body.send_keys(Keys.TAB)
        first = browser.switch_to.active_element
        assert first.text == "Skip to content"
        webdriver.ActionChains(browser).send_keys(Keys.TAB).perform()
        assert urlsplit(browser.switch_to.active_element.get_attribute("href")).path == "/"
        assert urljoin(origin, "/") == f"{origin}/"


def test_a_page_says_new_records_when_a_batch_lands(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    journal = [journal_line(journal_entry(n, f"Why does zorp {n} exist?", DISCLOSURE, "none",
                                          epistemic_state="undetermined",
                                          normative_clearance="suppressed",
                                          refusal_emitted=True)) for n in (1, 2)]
    with AuditStore.open(str(path)) as db:
        db.ingest(journal[:1], source="turn_journal.jsonl")
    with AuditStore.open(str(path), read_only=True) as db:
        shown = db.probe().tree_size
        with serving(create_app(db, close_db_on_shutdown=False)) as origin:
            browser.get(f"{origin}/turns")
            WebDriverWait(browser, WAIT).until(lambda b: b.execute_script(
                "return document.readyState") == "complete")
            assert browser.find_elements(By.ID, "new-records") == []
            with AuditStore.open(str(path)) as writer:  # as `ingest` or `follow` would
                writer.ingest(journal, source="turn_journal.jsonl")
            grown = db.probe().tree_size
            notice = WebDriverWait(browser, WAIT).until(
                lambda b: b.find_element(By.ID, "new-records"))
            assert notice.text == (f"New records: the store's tree size is now {grown} (this "
                                   f"page shows {shown}) — reload")
            assert notice.get_attribute("role") == "status"
            notice.find_element(By.LINK_TEXT, "reload").click()
            WebDriverWait(browser, WAIT).until(lambda b: b.find_element(
                By.CSS_SELECTOR, "footer").text.startswith(f"Read-only. Tree size {grown},"))
            problems = _severe(browser)
            browser.get("about:blank")  # its stream closed before the server stops
    assert problems == []
