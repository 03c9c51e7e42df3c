"""GraphiQL in headless Chromium with no network but 127.0.0.1: it loads, runs, shows data."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import raw_query
from browser_runs import WAIT, chromium, requested_urls, serving, skip_without_chromium
from spec_values import CODES_IN_APPEND_ORDER, LEDGER_LENGTH, TOTAL_BATCHES, TOTAL_RESIDUALS
from starlette.applications import Starlette
from starlette.routing import Mount

from store.api.app import create_app
from store.db.audit_store import AuditStore

webdriver = skip_without_chromium()
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture
def backend_url(tmp_path: Path) -> str:
    """Only SQLite: what is tested is the page, not the backend."""
    return f"sqlite:///{tmp_path / 'audit.db'}"


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as driver:
        yield driver


def editor_text(browser: Any, pane: str) -> str:
    """The whole text of a GraphiQL editor (CodeMirror draws only the visible lines)."""
    return str(browser.execute_script(
        f"return document.querySelector('{pane} .CodeMirror').CodeMirror.getValue()"))


def wait_for_result(browser: Any, expected: str) -> dict[str, Any]:
    WebDriverWait(browser, WAIT).until(lambda b: expected in editor_text(b, ".result-window"))
    return dict(json.loads(editor_text(browser, ".result-window")))


@pytest.mark.parametrize("root_path", ["", "/audit"])
def test_graphiql_runs_queries_offline(browser: Any, example_db: AuditStore,
                                       example_store_url: str, root_path: str) -> None:
    app = create_app(example_db, close_db_on_shutdown=False)
    if root_path:  # as behind a reverse proxy that serves the app under /audit
        app = Starlette(routes=[Mount(root_path, app=app)])
    with serving(app) as base:
        browser.get_log("performance")  # drop what the blank start page loaded
        browser.get(f"{base}{root_path}/graphql")
        # A fresh profile shows the page's default query; the run button sends it.
        WebDriverWait(browser, WAIT).until(
            lambda b: "residuals(first: 3)" in editor_text(b, ".graphiql-query-editor"))
        browser.find_element(By.CSS_SELECTOR, ".graphiql-execute-button").click()
        [(root_hash,)] = raw_query(example_store_url, "SELECT root_hash FROM tree_heads "
                                                      "ORDER BY tree_size DESC LIMIT 1")
        assert wait_for_result(browser, "totalCount") == {"data": {
            "ledger": {"treeSize": LEDGER_LENGTH, "rootHash": root_hash},
            "residuals": {"totalCount": TOTAL_RESIDUALS, "nodes": [
                {"residualCode": code, "residualKind": "MISSING_ROLE", "sourceAxis": "ROLE"}
                for code in CODES_IN_APPEND_ORDER[:3]]}}}

        # A query typed by hand, run with Ctrl-Enter.
        browser.find_element(By.CSS_SELECTOR, ".graphiql-query-editor .CodeMirror").click()
        typing = webdriver.ActionChains(browser)
        typing.key_down(Keys.CONTROL).send_keys("a").key_up(Keys.CONTROL).send_keys(Keys.DELETE)
        typing.send_keys("{ batches { totalCount").perform()
        assert editor_text(browser, ".graphiql-query-editor") == "{ batches { totalCount}}"
        webdriver.ActionChains(browser).key_down(Keys.CONTROL).send_keys(Keys.ENTER).key_up(
            Keys.CONTROL).perform()
        assert wait_for_result(browser, "batches") == {"data": {"batches": {
            "totalCount": TOTAL_BATCHES}}}

        urls = requested_urls(browser)
        problems = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    # Fonts and icons are data: URLs inside graphiql.min.css; everything else is the app's.
    assert [url for url in urls if not url.startswith((f"{base}/", "data:"))] == []
    assert f"{base}{root_path}/graphql/static/graphiql.min.js" in urls
    assert problems == []  # no script error, no CSP refusal, no failed load
